import { spawn } from 'node:child_process';
import { stat, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from './journal.js';
import { finishedResult, isAlive, useTempDirs, waitFor } from './testing/helpers.js';

const tempDir = useTempDirs();
const DAY = 24 * 60 * 60 * 1000;

describe('Journal', () => {
  it('turns runs a dead agent left behind into interruptions, killing their process groups', async () => {
    const dir = await tempDir();
    const before = await Journal.open(dir);
    // What an agent had written when it died: one run being set up, one running.
    const survivor = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    await new Promise((resolve) => survivor.once('spawn', resolve));
    await before.starting('exec-starting');
    await before.starting('exec-running');
    await before.running('exec-running', survivor.pid!);

    const after = await Journal.open(dir);
    const byId = (a: { executionId: string }, b: { executionId: string }) => a.executionId.localeCompare(b.executionId);
    expect(after.interruptions().sort(byId)).toEqual([
      { executionId: 'exec-running', reason: `the agent stopped while the script ran (pid/pgid ${survivor.pid}); it was not re-run; its remaining processes were killed` },
      { executionId: 'exec-starting', reason: 'the agent stopped while it was starting the script; it was not re-run' },
    ]);
    await waitFor(() => !isAlive(survivor.pid!), 'the orphaned script to be killed');
    expect(after.get('exec-running')?.state).toBe('interrupted');

    // Durable: a third start still knows them, and does not report them as new.
    const third = await Journal.open(dir);
    expect(third.interruptions().map((i) => i.executionId).sort()).toEqual(['exec-running', 'exec-starting']);
  });

  it('keeps results until the service acknowledges them, then a tombstone for 24 hours', async () => {
    const dir = await tempDir();
    const journal = await Journal.open(dir);
    await journal.finished(finishedResult('exec-1'));
    await journal.finished(finishedResult('exec-2'));
    expect((await Journal.open(dir)).undeliveredResults().map((r) => r.executionId)).toEqual(['exec-1', 'exec-2']);

    await journal.acknowledged('exec-1');
    const reopened = await Journal.open(dir);
    expect(reopened.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-2']);
    expect(reopened.get('exec-1')?.state).toBe('acknowledged');

    const tomorrow = await Journal.open(dir, Date.now() + DAY + 60_000);
    expect(tomorrow.get('exec-1')).toBeUndefined();
    expect(tomorrow.get('exec-2')?.state).toBe('finished');
    expect(await readdir(dir)).toEqual(['exec-2.json']);
  });

  it('writes entries readable only by the agent and ignores what a crash left half-written', async () => {
    const dir = await tempDir();
    const journal = await Journal.open(dir);
    await journal.finished(finishedResult('exec-1'));
    expect((await stat(join(dir, 'exec-1.json'))).mode & 0o777).toBe(0o600);
    await writeFile(join(dir, 'exec-2.json.tmp'), '{"executionId":');
    await writeFile(join(dir, 'garbage.json'), 'not json');
    const reopened = await Journal.open(dir);
    expect(reopened.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-1']);
    expect((await readdir(dir)).sort()).toEqual(['exec-1.json', 'garbage.json']);
  });

  it('names files after ids safely, whatever the id holds', async () => {
    const dir = await tempDir();
    const journal = await Journal.open(dir);
    await journal.finished(finishedResult('../../etc/passwd'));
    const [name] = await readdir(dir);
    expect(name).toMatch(/^x[0-9a-f]{40}\.json$/);
    expect((await Journal.open(dir)).get('../../etc/passwd')?.state).toBe('finished');
  });
});
