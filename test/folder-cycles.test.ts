import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// `npm run lint` runs dependency-cruiser with the project's rules over src/. These fixtures show
// that the same command fails on a cycle between folders, type-only imports and subfolders included.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.mjs');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function cruise(files: Record<string, string>) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cycles-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const run = spawnSync(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('the folder cycle check of npm run lint', () => {
  it('passes folders that import one way', () => {
    const { status, output } = cruise({
      'src/store/rows.ts': 'export type Row = { id: string };\n',
      'src/rules/rule.ts': "import type { Row } from '../store/rows.js';\nexport type Rule = Row;\n",
      'src/server/app.ts': "import type { Rule } from '../rules/rule.js';\nexport const rules: Rule[] = [];\n",
    });
    expect(output).toContain('no dependency violations');
    expect(status).toBe(0);
  });

  it('fails when two folders import each other, even by a type-only import from a subfolder', () => {
    const { status, output } = cruise({
      'src/store/rows.ts': 'export type Row = { id: string };\n',
      'src/rules/rule.ts': "import type { Row } from '../store/rows.js';\nexport type Rule = Row;\n",
      'src/store/sub/by-rule.ts': "import type { Rule } from '../../rules/rule.js';\nexport const byRule = (rule: Rule) => rule.id;\n",
    });
    expect(output).toContain('no-folder-cycle');
    expect(status).not.toBe(0);
  });

  it('fails on a loop through four folders', () => {
    const { status, output } = cruise({
      'src/a/a.ts': "import { b } from '../b/b.js';\nexport const a = b + 1;\n",
      'src/b/b.ts': "import { c } from '../c/c.js';\nexport const b = c + 1;\n",
      'src/c/c.ts': "import type { A } from '../d/d.js';\nexport const c: A = 1;\n",
      'src/d/d.ts': "import { a } from '../a/a.js';\nexport type A = number;\nexport const d = a;\n",
    });
    expect(output).toContain('no-folder-cycle');
    expect(status).not.toBe(0);
  });
});
