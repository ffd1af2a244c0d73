import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkScript } from '../../../agent/allowlist.js';
import { refusalForName } from '../../ingress/env.js';
import { STARTER_DIR, STARTER_RUNBOOKS } from './catalogue.js';
import { RunbookLibrary } from './library.js';

/*
 * The starter library's files agree with its catalogue: each script parses, reads exactly the
 * variables it declares, each of which its notes describe, and runs under an agent's --allow list
 * made of the commands its notes name. test/runbook-library.test.ts runs them on a real agent.
 */
const dir = path.resolve(import.meta.dirname, '../../..', STARTER_DIR);
const library = RunbookLibrary.load(dir);

describe('the starter runbook library', () => {
  it('holds a script and notes for each runbook of the catalogue, and nothing else', () => {
    const expected = STARTER_RUNBOOKS.flatMap(({ slug }) => [`${slug}.md`, `${slug}.sh`]).sort();
    expect(fs.readdirSync(dir).sort()).toEqual(expected);
    expect(library.entries.map((entry) => entry.slug)).toEqual(STARTER_RUNBOOKS.map((runbook) => runbook.slug));
  });

  describe.each(library.entries.map((entry) => [entry.slug, entry] as const))('%s', (_slug, entry) => {
    it('is a POSIX sh script that dash and bash both parse', () => {
      expect(entry.interpreter).toBe('sh');
      expect(entry.script.startsWith('#!/bin/sh\n')).toBe(true);
      for (const shell of ['dash', 'bash']) execFileSync(shell, ['-n', '-c', entry.script]);
    });

    it('reads exactly the variables it declares, each a name a payload may set, each described in its notes', () => {
      for (const name of entry.env) expect(refusalForName(name), name).toBeUndefined();
      // The payload's variables are CamelCase; the script's own are lower case, and PITCREW_* is the agent's.
      const read = new Set([...entry.script.matchAll(/\$\{?([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\b/g)].map((m) => m[1]));
      expect([...read].sort()).toEqual([...entry.env].sort());
      for (const name of entry.env) expect(entry.description, name).toContain(`| \`${name}\` |`);
    });

    it('runs under an --allow list of the commands its notes name', () => {
      const line = /^\*\*Commands it runs\*\* \(for an agent with `--allow`\): (.+)\.$/m.exec(entry.description);
      expect(line, 'the notes end with the commands it runs').not.toBeNull();
      const patterns = [...line![1]!.matchAll(/`([^`]+)`/g)].flatMap(([, command]) => [command!, `${command} *`]);
      expect(checkScript(entry.script, entry.interpreter, patterns)).toEqual({ allowed: true });
    });
  });

  it('says which slugs there are when asked for another', () => {
    expect(() => library.get('disk')).toThrow(expect.objectContaining({
      code: 'PITCREW_ERR_NOT_FOUND',
      message: 'the runbook library has no "disk"; it has: disk-cleanup, restart-service, jvm-thread-dump, top-memory, log-tail, cert-expiry',
    }));
  });

  it('stops the start, naming the file, when a file is missing', () => {
    const partial = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-library-'));
    try {
      fs.writeFileSync(path.join(partial, 'log-tail.sh'), '#!/bin/sh\n');
      expect(() => RunbookLibrary.load(partial)).toThrow(`the starter runbook library is incomplete: cannot read ${path.join(partial, 'disk-cleanup.sh')} (ENOENT); reinstall pitcrew`);
    } finally {
      fs.rmSync(partial, { recursive: true, force: true });
    }
  });
});
