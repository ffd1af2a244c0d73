import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentMessage, Execute, ExecutionResult } from '../src/agents/protocol.js';
import { Executor } from './executor.js';
import { Journal } from './journal.js';
import { silentLogger } from './log.js';
import { finishedResult, runnerSettings, useTempDirs, waitFor } from './testing/helpers.js';

const tempDir = useTempDirs();
const opened: Array<{ journal: Journal; executor?: Executor }> = [];
afterEach(async () => {
  for (const { journal, executor } of opened.splice(0)) {
    await executor?.settled();
    await journal.close();
  }
});
const ADDRESS = { hostId: 'host-1', tenantId: 'tenant-1' };
/** Holds a script until the test creates $DIR/gate. */
const WAIT_FOR_GATE = 'while [ ! -e "$DIR/gate" ]; do sleep 0.01; done';

async function setUp(allow: string[] = [], dir?: string) {
  const stateDir = dir ?? (await tempDir());
  const journal = await Journal.open(join(stateDir, 'journal'));
  const workDir = await tempDir();
  const executor = new Executor({ journal, runner: runnerSettings(workDir), allow, log: silentLogger, outputFlushMs: 5 });
  opened.push({ journal, executor });
  const sent: AgentMessage[] = [];
  const link = { send: (message: AgentMessage) => void sent.push(message) };
  return { stateDir, workDir, journal, executor, sent, link };
}

function execute(executionId: string, script: string, overrides: Partial<Execute> = {}): Execute {
  return { type: 'execute', executionId, ...ADDRESS, flavour: 'autofix', interpreter: 'sh', script, env: {}, context: {}, timeoutSeconds: 30, ...overrides };
}

function results(sent: AgentMessage[]): ExecutionResult[] {
  return sent.flatMap((m) => (m.type === 'finished' ? [m.result] : []));
}

describe('Executor', () => {
  // A full disk, for real: the state directory on a tmpfs of 64 KiB, filled up. Mounting needs root (CI runs as root).
  it.runIf(process.getuid?.() === 0)('does not run a script it could not journal first (a full disk), says why, and runs again once there is room', async () => {
    const stateDir = await tempDir();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', stateDir]);
    try {
      const { executor, sent, link } = await setUp([], stateDir);
      await executor.connected(link, ADDRESS, []);
      expect(() => writeFileSync(join(stateDir, 'filler'), Buffer.alloc(1024 * 1024))).toThrow(/ENOSPC/);
      const marker = join(await tempDir(), 'ran');
      await executor.handle(execute('e1', `touch ${marker}`));
      expect(results(sent)).toEqual([expect.objectContaining({
        executionId: 'e1',
        ending: 'failed_to_start',
        reason: expect.stringMatching(/^the agent could not write its journal \(ENOSPC.*\), so it did not run the script$/),
      })]);
      expect(existsSync(marker)).toBe(false);
      expect(sent.some((m) => m.type === 'started')).toBe(false);

      // Once someone frees the disk, the next execution runs, with no restart of the agent.
      rmSync(join(stateDir, 'filler'));
      await executor.handle(execute('e2', 'echo back'));
      expect(results(sent)[1]).toMatchObject({ executionId: 'e2', ending: 'exited', exitCode: 0, stdout: 'back\n' });
    } finally {
      execFileSync('umount', ['-l', stateDir]);
    }
  });

  it('runs an execution: started, live output, then the result, journaled', async () => {
    const { executor, sent, link, journal } = await setUp();
    await executor.connected(link, ADDRESS, []);
    await executor.handle(execute('e1', 'echo hello'));
    expect(sent.map((m) => m.type)).toEqual(['started', 'output', 'finished']);
    expect(sent[1]).toEqual({ type: 'output', executionId: 'e1', stream: 'stdout', chunk: 'hello\n' });
    expect(results(sent)[0]).toMatchObject({ executionId: 'e1', ending: 'exited', exitCode: 0, stdout: 'hello\n' });
    expect(journal.get('e1')?.state).toBe('finished');
  });

  it('tells a run that ends at once its start in its result, and a longer one with started while it runs', async () => {
    const { executor, sent, link, journal } = await setUp();
    await executor.connected(link, ADDRESS, []);
    await executor.handle(execute('quick', 'true'));
    expect(sent.map((m) => m.type)).toEqual(['finished']);
    expect(results(sent)[0]).toMatchObject({ executionId: 'quick', ending: 'exited', exitCode: 0, startedAt: expect.any(Number) });
    expect(journal.get('quick')?.state).toBe('finished');

    const dir = await tempDir();
    const long = executor.handle(execute('long', WAIT_FOR_GATE, { env: { DIR: dir } }));
    await waitFor(() => sent.some((m) => m.type === 'started' && m.executionId === 'long'), 'started, while the run goes on');
    expect(sent.flatMap((m) => (m.type === 'started' ? [m.executionId] : []))).toEqual(['long']);
    expect(results(sent).map((r) => r.executionId)).toEqual(['quick']);
    await writeFile(join(dir, 'gate'), '');
    await long;
    expect(results(sent).map((r) => r.executionId)).toEqual(['quick', 'long']);
  });

  it('never runs a duplicate delivery: re-sends started while running, the result once finished', async () => {
    const { executor, sent, link } = await setUp();
    const dir = await tempDir();
    const message = execute('e1', `echo run >> "$DIR/runs"; ${WAIT_FOR_GATE}`, { env: { DIR: dir } });
    await executor.connected(link, ADDRESS, []);
    const first = executor.handle(message);
    await waitFor(() => sent.some((m) => m.type === 'started'), 'the run to start');
    await executor.handle(message);
    expect(sent.filter((m) => m.type === 'started')).toHaveLength(2);
    await writeFile(join(dir, 'gate'), '');
    await first;
    await executor.handle(message);
    expect(results(sent).map((r) => r.executionId)).toEqual(['e1', 'e1']);
    expect(await readFile(join(dir, 'runs'), 'utf8')).toBe('run\n');
  });

  it('refuses, without running, an execution addressed to another host or tenant', async () => {
    const { executor, sent, link, journal } = await setUp();
    const marker = join(await tempDir(), 'ran');
    await executor.connected(link, ADDRESS, []);
    await executor.handle(execute('e1', `touch ${marker}`, { hostId: 'host-2' }));
    await executor.handle(execute('e2', `touch ${marker}`, { tenantId: 'tenant-2' }));
    expect(results(sent).map((r) => [r.executionId, r.ending])).toEqual([['e1', 'refused'], ['e2', 'refused']]);
    expect(results(sent)[0]!.reason).toContain('addressed to host host-2');
    await expect(readFile(marker)).rejects.toThrow();
    expect(journal.get('e1')).toBeUndefined();
  });

  it('refuses a script outside the allowlist with the reason, and remembers it', async () => {
    const { executor, sent, link, journal } = await setUp(['df *']);
    await executor.connected(link, ADDRESS, []);
    await executor.handle(execute('e1', 'df -h\nreboot'));
    expect(results(sent)[0]).toMatchObject({ ending: 'refused', startedAt: null, reason: 'line 2: "reboot" is not allowed by any --allow pattern, so the script was not run' });
    expect(journal.get('e1')?.state).toBe('finished');
  });

  it('runs a script only when its bytes have the SHA-256 the service recorded for its runbook', async () => {
    const { executor, sent, link, journal } = await setUp();
    await executor.connected(link, ADDRESS, []);
    const marker = join(await tempDir(), 'ran');
    const script = `touch ${marker}\necho 'déjà' \n`;
    const sha256 = createHash('sha256').update(script, 'utf8').digest('hex');
    await executor.handle(execute('e1', script.replace('déjà', 'deja'), { sha256 }));
    expect(results(sent)[0]).toMatchObject({
      executionId: 'e1', ending: 'refused', startedAt: null,
      reason: expect.stringMatching(new RegExp(`^the script received has SHA-256 [0-9a-f]{64}, not the ${sha256} the service recorded for its runbook; not run$`)),
    });
    expect(existsSync(marker)).toBe(false);
    expect(journal.get('e1')?.state).toBe('finished');
    await executor.handle(execute('e2', script, { sha256 }));
    expect(results(sent)[1]).toMatchObject({ executionId: 'e2', ending: 'exited', exitCode: 0, stdout: 'déjà\n' });
    expect(existsSync(marker)).toBe(true);
  });

  it('cancels a running execution', async () => {
    const { executor, sent, link } = await setUp();
    await executor.connected(link, ADDRESS, []);
    const running = executor.handle(execute('e1', 'sleep 1000'));
    await waitFor(() => sent.some((m) => m.type === 'started'), 'the run to start');
    await executor.handle({ type: 'cancel', executionId: 'e1' });
    await running;
    expect(results(sent)[0]).toMatchObject({ ending: 'cancelled', signal: 'SIGTERM' });
  });

  it('forgets a result once recorded and ignores the id afterwards', async () => {
    const { executor, sent, link, journal } = await setUp();
    await executor.connected(link, ADDRESS, []);
    await executor.handle(execute('e1', 'true'));
    await executor.handle({ type: 'recorded', executionId: 'e1' });
    expect(journal.undeliveredResults()).toEqual([]);
    sent.length = 0;
    await executor.handle(execute('e1', 'true'));
    expect(sent).toEqual([]);
  });

  it('keeps running while disconnected and delivers the result on the next connection', async () => {
    const { executor, sent, link } = await setUp();
    await executor.connected(link, ADDRESS, []);
    const dir = await tempDir();
    const running = executor.handle(execute('e1', `${WAIT_FOR_GATE}; echo done`, { env: { DIR: dir } }));
    await waitFor(() => sent.some((m) => m.type === 'started'), 'the run to start');
    executor.disconnected();
    expect(executor.resumeState().running).toEqual(['e1']);
    await writeFile(join(dir, 'gate'), '');
    await running;
    expect(results(sent)).toEqual([]);
    // Said in the next hello, so the service waits for the result instead of taking the run for lost.
    expect(executor.resumeState()).toMatchObject({ running: [], finished: ['e1'] });
    await executor.connected(link, ADDRESS, []);
    expect(results(sent)[0]).toMatchObject({ executionId: 'e1', stdout: 'done\n' });
  });

  it('after an agent crash: reports the interrupted run in hello, never re-runs it, forgets it once welcomed', async () => {
    const stateDir = await tempDir();
    const crashed = await Journal.open(join(stateDir, 'journal'));
    opened.push({ journal: crashed });
    await crashed.starting('e1');
    await crashed.finished(finishedResult('e0'));

    const { executor, sent, link, journal } = await setUp([], stateDir);
    expect(executor.resumeState()).toEqual({ running: [], interrupted: [{ executionId: 'e1', reason: expect.stringContaining('it was not re-run') }], finished: ['e0'] });
    await executor.connected(link, ADDRESS, ['e1']);
    expect(results(sent).map((r) => r.executionId)).toEqual(['e0']);
    expect(journal.get('e1')?.state).toBe('acknowledged');
    expect(executor.resumeState().interrupted).toEqual([]);
    sent.length = 0;
    await executor.handle(execute('e1', 'echo again'));
    expect(sent).toEqual([]);
  });

  it('stops every run on shutdown, journals their results and leaves no run directory behind', async () => {
    const { executor, sent, link, journal, workDir } = await setUp();
    await executor.connected(link, ADDRESS, []);
    await executor.handle(execute('e0', 'true'));
    expect(readdirSync(workDir)).toHaveLength(1); // kept for the next run
    void executor.handle(execute('e1', 'sleep 1000'));
    await waitFor(() => sent.some((m) => m.type === 'started' && m.executionId === 'e1'), 'the run to start');
    await executor.stopAll('the agent was stopped (SIGTERM) while the script ran');
    expect(journal.undeliveredResults().find((r) => r.executionId === 'e1')).toMatchObject({ ending: 'cancelled', reason: 'the agent was stopped (SIGTERM) while the script ran' });
    await waitFor(() => readdirSync(workDir).length === 0, 'the run directories to be removed');
  });
});
