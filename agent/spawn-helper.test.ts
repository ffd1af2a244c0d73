import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DirectLauncher, type Launcher } from './launcher.js';
import type { Logger } from './log.js';
import { statFields } from './process-group.js';
import { ScriptRun, type RunSpec } from './runner.js';
import { HelperLauncher } from './spawn-helper.js';
import { isAlive, isGroupAlive, runnerSettings, useTempDirs, waitFor } from './testing/helpers.js';

const tempDir = useTempDirs();
const launchers: HelperLauncher[] = [];
afterEach(() => {
  for (const launcher of launchers.splice(0)) launcher.close();
});

function helperLauncher() {
  const logged: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const log: Logger = {
    info: (message, fields) => logged.push({ level: 'info', message, fields }),
    warn: (message, fields) => logged.push({ level: 'warn', message, fields }),
    error: (message, fields) => logged.push({ level: 'error', message, fields }),
  };
  const launcher = new HelperLauncher(new DirectLauncher(), log);
  launchers.push(launcher);
  return { launcher, logged };
}

let nextId = 1;
async function start(launcher: Launcher, script: string, overrides: Partial<Parameters<typeof runnerSettings>[1]> = {}) {
  const spec: RunSpec = { executionId: `exec-${nextId++}`, flavour: 'autofix', interpreter: 'sh', script, env: {}, context: {}, timeoutSeconds: 60 };
  let pgid: number | undefined;
  const live: string[] = [];
  const run = new ScriptRun(spec, runnerSettings(await tempDir(), { launcher, ...overrides }), { spawned: (id) => (pgid = id), output: (_, text) => live.push(text) });
  return { run, pgid: () => pgid, live };
}

const parentOf = (pid: number) => Number(statFields(pid)?.[1]);

describe('HelperLauncher', () => {
  it('starts scripts as children of its helper, a small process of the agent named in ps', async () => {
    const { launcher } = helperLauncher();
    const { run } = await start(launcher, 'echo "$PPID"; echo err >&2; exit 4');
    const result = await run.result;
    const helper = launcher.helperPid!;
    expect(result).toMatchObject({ ending: 'exited', exitCode: 4, stderr: 'err\n' });
    expect(Number(result.stdout)).toBe(helper);
    expect(helper).not.toBe(process.pid);
    expect(parentOf(helper)).toBe(process.pid);
    expect(readFileSync(`/proc/${helper}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()).toBe('pitcrew-agent spawn helper');
    // No environment of the agent's reaches it: only Node's own IPC settings.
    expect(readFileSync(`/proc/${helper}/environ`, 'utf8').split('\0').filter(Boolean).map((entry) => entry.split('=')[0])).toEqual(['NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE']);
  });

  it('keeps only what fits of a large output, and reads the rest so the script is not blocked', async () => {
    const { launcher } = helperLauncher();
    const { run } = await start(launcher, 'head -c 300000 /dev/zero | tr "\\0" x; echo done >&2', { maxOutputBytes: 1000 });
    const result = await run.result;
    expect(result).toMatchObject({ ending: 'exited', exitCode: 0, stdoutTruncated: true, stderr: 'done\n' });
    expect(result.stdout).toBe('x'.repeat(1000));
  });

  it('forwards output byte for byte, whatever the bytes', async () => {
    const { launcher } = helperLauncher();
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      launcher.launch({ path: '/bin/sh', args: ['-c', "printf '\\000\\001\\177\\200\\377caf\\303\\251 \\342\\202\\254\\n'"], cwd: '/', env: {}, maxBytes: 100, drainMs: 100 }, {
        spawned: () => undefined, output: (_, chunk) => chunks.push(chunk), ended: () => resolve(), lost: reject, failed: reject,
      });
    });
    expect([...Buffer.concat(chunks)]).toEqual([0, 1, 0x7f, 0x80, 0xff, ...Buffer.from('café €\n')]);
  });

  it('says why a program could not start', async () => {
    const { launcher } = helperLauncher();
    const failed = await new Promise<string>((resolve, reject) => {
      launcher.launch({ path: '/nonexistent/sh', args: [], cwd: '/', env: {}, maxBytes: 100, drainMs: 100 }, {
        spawned: () => reject(new Error('spawned')), output: () => undefined, ended: () => reject(new Error('ended')), lost: reject, failed: resolve,
      });
    });
    expect(failed).toBe('/nonexistent/sh could not be started: spawn /nonexistent/sh ENOENT');
  });

  it('kills and reports the runs of a helper that died, and starts a new helper for the next run', async () => {
    const { launcher, logged } = helperLauncher();
    const { run, pgid, live } = await start(launcher, 'echo started; sleep 1000 & sleep 1000');
    await waitFor(() => live.join('') === 'started\n', 'the script to start');
    const helper = launcher.helperPid!;
    process.kill(helper, 'SIGKILL');
    const result = await run.result;
    expect(result).toMatchObject({ ending: 'cancelled', exitCode: null, signal: 'SIGKILL', stdout: 'started\n' });
    expect(result.reason).toBe("the agent's process that starts scripts was killed by SIGKILL while the script ran; its process group was killed, and how far the script got is unknown");
    await waitFor(() => !isGroupAlive(pgid()!), 'the script and what it started in the background to be killed');
    expect(logged).toContainEqual(expect.objectContaining({ level: 'error', message: 'the process that starts scripts stopped; the scripts it watched were killed' }));

    const next = await start(launcher, 'echo "$PPID"');
    const ranUnder = Number((await next.run.result).stdout);
    expect(ranUnder).toBe(launcher.helperPid);
    expect(ranUnder).not.toBe(helper);
  });

  it('reports a run whose helper died before saying it started as never started: no start time', async () => {
    const { launcher } = helperLauncher();
    launcher.start();
    const helper = launcher.helperPid!;
    // Killed as the launch is sent: the helper never reads it, so the script never runs.
    const killing: Launcher = {
      launch: (spec, events) => {
        const launched = launcher.launch(spec, events);
        process.kill(helper, 'SIGKILL');
        return launched;
      },
      close: () => launcher.close(),
    };
    const { run, pgid } = await start(killing, 'echo should-not-run');
    const result = await run.result;
    expect(result).toMatchObject({ ending: 'cancelled', exitCode: null, stdout: '', startedAt: null });
    expect(pgid()).toBeUndefined();
  });

  it('starts scripts from the agent itself once its helper keeps dying', async () => {
    const { launcher, logged } = helperLauncher();
    for (let death = 1; death <= 3; death++) {
      const { run, live } = await start(launcher, 'echo started; sleep 1000');
      await waitFor(() => live.length > 0, 'the script to start');
      process.kill(launcher.helperPid!, 'SIGKILL');
      expect((await run.result).ending).toBe('cancelled');
    }
    expect(logged).toContainEqual(expect.objectContaining({ level: 'error', message: 'the process that starts scripts keeps stopping; scripts now start from the agent itself' }));
    const { run } = await start(launcher, 'echo "$PPID"');
    expect(Number((await run.result).stdout)).toBe(process.pid);
    expect(launcher.helperPid).toBeUndefined();
  });

  it('ends its helper when closed', async () => {
    const { launcher } = helperLauncher();
    launcher.start();
    const helper = launcher.helperPid!;
    expect(isAlive(helper)).toBe(true);
    launcher.close();
    await waitFor(() => !isAlive(helper), 'the helper to end');
  });
});

describe('HelperLauncher without a helper', () => {
  it('runs what waited for a helper that could not start from the agent itself, and gives up on it after three tries', async () => {
    const logged: string[] = [];
    const log: Logger = { info: () => undefined, warn: () => undefined, error: (message) => logged.push(message) };
    const launcher = new HelperLauncher(new DirectLauncher(), log, '/nonexistent/node');
    launchers.push(launcher);
    for (let attempt = 1; attempt <= 4; attempt++) {
      const { run } = await start(launcher, 'echo "$PPID"');
      const result = await run.result;
      expect(result).toMatchObject({ ending: 'exited', exitCode: 0 });
      expect(Number(result.stdout)).toBe(process.pid);
    }
    expect(logged).toEqual([
      ...Array(3).fill('could not start the process that starts scripts; the runs waiting for it start from the agent itself'),
      'the process that starts scripts keeps stopping; scripts now start from the agent itself',
    ]);
  });
});
