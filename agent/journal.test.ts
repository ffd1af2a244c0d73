import { spawn } from 'node:child_process';
import { appendFile, open as openFile, readdir, readFile, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Journal, UNKNOWN_BOOT, type JournalOptions } from './journal.js';
import { finishedResult, isAlive, useTempDirs, waitFor } from './testing/helpers.js';

const tempDir = useTempDirs();
const opened: Journal[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((journal) => journal.close().catch(() => undefined)));
});

/** Opens a journal that is closed after the test (each holds its log open). */
async function open(dir: string, now?: number, options?: JournalOptions): Promise<Journal> {
  const journal = await Journal.open(dir, now, options);
  opened.push(journal);
  return journal;
}
const DAY = 24 * 60 * 60 * 1000;

/** Holds each fdatasync of a FileHandle until `release()`, noting what the log held when it began. */
async function gatedSyncs(log: string) {
  const probe = await openFile(log, 'r');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const original = proto.datasync;
  const events: string[] = [];
  const gates: Array<() => void> = [];
  const spy = vi.spyOn(proto, 'datasync').mockImplementation(async function (this: FileHandle) {
    const n = gates.length + 1;
    const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean).length;
    events.push(`sync ${n} began with ${lines} lines`);
    await new Promise<void>((resolve) => gates.push(resolve));
    await original.call(this);
    events.push(`sync ${n} done`);
  });
  return { spy, events, syncs: () => gates.length, release: (n: number) => gates[n - 1]!() };
}

describe('Journal', () => {
  describe('group commit', () => {
    afterEach(() => vi.restoreAllMocks());

    it('syncs every entry put while a sync ran with one fdatasync, and settles each only after the sync that covers it', async () => {
      const dir = await tempDir();
      const journal = await open(dir);
      const sync = await gatedSyncs(join(dir, 'journal.log'));
      const settled = (name: string) => () => sync.events.push(`${name} settled`);
      const first = journal.starting('exec-0').then(settled('exec-0'));
      await waitFor(() => sync.syncs() === 1, 'the first sync');
      const group = [
        ...Array.from({ length: 5 }, (_, i) => journal.starting(`exec-${i + 1}`).then(settled(`exec-${i + 1}`))),
        ...Array.from({ length: 5 }, (_, i) => journal.finished(finishedResult(`exec-${i + 6}`)).then(settled(`exec-${i + 6}`))),
      ];
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(sync.events).toEqual(['sync 1 began with 1 lines']);
      sync.release(1);
      await first;
      await waitFor(() => sync.syncs() === 2, 'the second sync');
      // The ten entries were on the page cache before the one sync that covers them all began.
      expect(sync.events).toEqual(['sync 1 began with 1 lines', 'sync 1 done', 'exec-0 settled', 'sync 2 began with 11 lines']);
      sync.release(2);
      await Promise.all(group);
      expect(sync.spy).toHaveBeenCalledTimes(2);
      expect(sync.events.slice(4, 5)).toEqual(['sync 2 done']);
      expect(sync.events.slice(5)).toHaveLength(10);
      vi.restoreAllMocks();
      const reopened = await open(dir);
      expect(reopened.interruptions().map((i) => i.executionId).sort()).toEqual(['exec-0', 'exec-1', 'exec-2', 'exec-3', 'exec-4', 'exec-5']);
      expect(reopened.undeliveredResults()).toHaveLength(5);
    });

    it('does not sync for entries that need not survive a power cut', async () => {
      const dir = await tempDir();
      const journal = await open(dir);
      await journal.finished(finishedResult('exec-1'));
      const sync = await gatedSyncs(join(dir, 'journal.log'));
      await Promise.all([journal.running('exec-2', process.pid), journal.acknowledged('exec-1')]);
      expect(sync.spy).not.toHaveBeenCalled();
      expect((await readFile(join(dir, 'journal.log'), 'utf8')).trim().split('\n')).toHaveLength(3);
    });
  });

  it('turns runs a dead agent left behind into interruptions, killing their process groups', async () => {
    const dir = await tempDir();
    const before = await open(dir);
    // What an agent had written when it died: one run being set up, one running.
    const survivor = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    await new Promise((resolve) => survivor.once('spawn', resolve));
    await before.starting('exec-starting');
    await before.starting('exec-running');
    await before.running('exec-running', survivor.pid!);

    const after = await open(dir);
    const byId = (a: { executionId: string }, b: { executionId: string }) => a.executionId.localeCompare(b.executionId);
    expect(after.interruptions().sort(byId)).toEqual([
      { executionId: 'exec-running', reason: `the agent stopped while the script ran (pid/pgid ${survivor.pid}); it was not re-run; its remaining processes were killed` },
      { executionId: 'exec-starting', reason: 'the agent stopped while it was starting the script; it was not re-run' },
    ]);
    await waitFor(() => !isAlive(survivor.pid!), 'the orphaned script to be killed');
    expect(after.get('exec-running')?.state).toBe('interrupted');

    // Durable: a third start still knows them, and does not report them as new.
    const third = await open(dir);
    expect(third.interruptions().map((i) => i.executionId).sort()).toEqual(['exec-running', 'exec-starting']);
  });

  describe('kills only a process group that can still be the run', () => {
    const survivors: number[] = [];
    afterEach(() => {
      for (const pid of survivors.splice(0)) if (isAlive(pid)) process.kill(-pid, 'SIGKILL');
    });
    async function orphan(dir: string, options: JournalOptions): Promise<number> {
      const before = await open(dir, undefined, options);
      const survivor = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
      await new Promise((resolve) => survivor.once('spawn', resolve));
      survivors.push(survivor.pid!);
      await before.starting('exec-1');
      await before.running('exec-1', survivor.pid!);
      return survivor.pid!;
    }
    const reasonOf = (journal: Journal) => journal.interruptions()[0]?.reason;

    it('not after the machine restarted: pids start over at boot', async () => {
      const dir = await tempDir();
      const pid = await orphan(dir, { bootId: 'boot-a' });
      const after = await open(dir, undefined, { bootId: 'boot-b' });
      expect(reasonOf(after)).toBe(`the agent stopped while the script ran (pid/pgid ${pid}); it was not re-run`);
      expect(isAlive(pid)).toBe(true);
    });

    it('not when the kernel does not say which boot this is', async () => {
      const dir = await tempDir();
      const pid = await orphan(dir, { bootId: UNKNOWN_BOOT });
      await open(dir, undefined, { bootId: UNKNOWN_BOOT });
      expect(isAlive(pid)).toBe(true);
    });

    it('not when another process now holds the pid', async () => {
      const dir = await tempDir();
      const pid = await orphan(dir, {});
      // As if the run's group had ended and its pid gone to a process started at another time.
      const line = JSON.stringify({ executionId: 'exec-1', state: 'running', at: Date.now(), bootId: JSON.parse((await readFile(join(dir, 'journal.log'), 'utf8')).trim().split('\n').at(-1)!).bootId, pgid: pid, leaderStart: '1' });
      await appendFile(join(dir, 'journal.log'), `${line}\n`);
      await open(dir);
      expect(isAlive(pid)).toBe(true);
    });
  });

  it('keeps results until the service acknowledges them, then a tombstone for 24 hours', async () => {
    const dir = await tempDir();
    const journal = await open(dir);
    await journal.finished(finishedResult('exec-1'));
    await journal.finished(finishedResult('exec-2'));
    await journal.close();
    // One agent process at a time owns a journal: each is closed before the next opens it.
    const second = await open(dir);
    expect(second.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-1', 'exec-2']);
    await second.acknowledged('exec-1');
    await second.close();
    const reopened = await open(dir);
    expect(reopened.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-2']);
    expect(reopened.get('exec-1')?.state).toBe('acknowledged');
    await reopened.close();

    const tomorrow = await open(dir, Date.now() + DAY + 60_000);
    expect(tomorrow.get('exec-1')).toBeUndefined();
    expect(tomorrow.get('exec-2')?.state).toBe('finished');
    // Opening rewrote the log with the live entries only.
    const lines = (await readFile(join(dir, 'journal.log'), 'utf8')).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).executionId)).toEqual(['exec-2']);
  });

  it('holds at most maxTombstones tombstones, forgetting the oldest, and never a result still owed', async () => {
    const dir = await tempDir();
    const journal = await open(dir, undefined, { maxTombstones: 2 });
    for (const id of ['exec-1', 'exec-2', 'exec-3', 'exec-owed']) await journal.finished(finishedResult(id));
    for (const id of ['exec-1', 'exec-2', 'exec-3']) await journal.acknowledged(id);
    expect(journal.get('exec-1')).toBeUndefined();
    expect([journal.get('exec-2')?.state, journal.get('exec-3')?.state]).toEqual(['acknowledged', 'acknowledged']);
    expect(journal.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-owed']);
    await journal.close();
    // The log still holds exec-1's lines until its next rewrite: reopening applies the cap again.
    const reopened = await open(dir, undefined, { maxTombstones: 2 });
    expect(reopened.get('exec-1')).toBeUndefined();
    expect(reopened.get('exec-3')?.state).toBe('acknowledged');
    expect(reopened.get('exec-owed')?.state).toBe('finished');
  });

  it('writes entries readable only by the agent and ignores what a crash left half-written', async () => {
    const dir = await tempDir();
    const journal = await open(dir);
    await journal.finished(finishedResult('exec-1'));
    expect((await stat(join(dir, 'journal.log'))).mode & 0o777).toBe(0o600);
    await appendFile(join(dir, 'journal.log'), '{"executionId":"exec-2","sta');
    await writeFile(join(dir, 'journal.log.tmp'), 'a rewrite cut short');
    const reopened = await open(dir);
    expect(reopened.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-1']);
    expect(reopened.get('exec-2')).toBeUndefined();
    expect((await readdir(dir)).sort()).toEqual(['journal.log']);
    // Opening rewrote the log without the torn line; what is appended next reads back whole.
    await reopened.finished(finishedResult('exec-3'));
    expect((await open(dir)).undeliveredResults().map((r) => r.executionId)).toEqual(['exec-1', 'exec-3']);
  });

  it('keeps only the last entry of each execution, across many appends and rewrites', async () => {
    const dir = await tempDir();
    const journal = await open(dir);
    await Promise.all(Array.from({ length: 50 }, (_, i) => journal.starting(`exec-${i}`)));
    await Promise.all(Array.from({ length: 50 }, (_, i) => journal.finished(finishedResult(`exec-${i}`))));
    await Promise.all(Array.from({ length: 25 }, (_, i) => journal.acknowledged(`exec-${i}`)));
    const reopened = await open(dir);
    expect(reopened.interruptions()).toEqual([]);
    expect(reopened.undeliveredResults()).toHaveLength(25);
    expect(reopened.get('exec-0')?.state).toBe('acknowledged');
    expect(reopened.get('exec-49')?.state).toBe('finished');
  });

  it('rewrites the log once it holds 10,000 lines more than live entries', async () => {
    const dir = await tempDir();
    const journal = await open(dir);
    const lineCount = async () => (await readFile(join(dir, 'journal.log'), 'utf8')).split('\n').filter(Boolean).length;
    const ids = Array.from({ length: 10 }, (_, i) => `exec-${i}`);
    // The same ten executions over and over: 10,000 lines for 10 live entries, still under the slack.
    await Promise.all(Array.from({ length: 1000 }, () => ids.map((id) => journal.finished(finishedResult(id)))).flat());
    expect(await lineCount()).toBe(10_000);
    // Past 10 + 10,000 lines the log is rewritten with the live entries only.
    await Promise.all(ids.flatMap((id) => [journal.starting(id), journal.finished(finishedResult(id))]));
    expect(await lineCount()).toBe(10);
    // Appends after the rewrite go to the new log.
    await journal.finished(finishedResult('exec-after'));
    expect(await lineCount()).toBe(11);
    await journal.close();
    const reopened = await open(dir);
    expect(reopened.undeliveredResults().map((r) => r.executionId).sort()).toEqual([...ids, 'exec-after'].sort());
    expect(reopened.interruptions()).toEqual([]);
  });

  it('drops a result or an interruption the service never confirmed after 7 days, not before', async () => {
    const dir = await tempDir();
    const t0 = Date.now();
    // Only Date is faked: the journal stamps entries with Date.now(); its flushes still run.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(t0);
      const first = await open(dir);
      await first.finished(finishedResult('exec-old'));
      await first.starting('exec-cut-old');
      await first.close();
      await (await open(dir, t0)).close(); // exec-cut-old becomes an interruption, at t0

      vi.setSystemTime(t0 + 3 * DAY);
      const later = await open(dir, t0 + 3 * DAY);
      await later.finished(finishedResult('exec-young'));
      await later.starting('exec-cut-young');
      await later.close();
      await (await open(dir, t0 + 3 * DAY)).close(); // exec-cut-young: an interruption at t0 + 3 days
    } finally {
      vi.useRealTimers();
    }

    const justUnder = await open(dir, t0 + 7 * DAY - 60_000);
    expect(justUnder.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-old', 'exec-young']);
    expect(justUnder.interruptions().map((i) => i.executionId)).toEqual(['exec-cut-old', 'exec-cut-young']);
    await justUnder.close();

    const weekLater = await open(dir, t0 + 7 * DAY + 60_000);
    expect(weekLater.undeliveredResults().map((r) => r.executionId)).toEqual(['exec-young']);
    expect(weekLater.interruptions().map((i) => i.executionId)).toEqual(['exec-cut-young']);
    expect(weekLater.get('exec-old')).toBeUndefined();
    expect(weekLater.get('exec-cut-old')).toBeUndefined();
    await weekLater.close();
    // Opening rewrote the log without them: they do not come back.
    const lines = (await readFile(join(dir, 'journal.log'), 'utf8')).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).executionId).sort()).toEqual(['exec-cut-young', 'exec-young']);
  });

  it('keeps any execution id, whatever it holds', async () => {
    const dir = await tempDir();
    const journal = await open(dir);
    await journal.finished(finishedResult('../../etc/passwd\n{"x":1}'));
    expect(await readdir(dir)).toEqual(['journal.log']);
    expect((await open(dir)).get('../../etc/passwd\n{"x":1}')?.state).toBe('finished');
  });
});
