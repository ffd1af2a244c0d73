import { existsSync, readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAgentMessage } from '../src/agents/protocol.js';
import { signalGroup } from './process-group.js';
import { ScriptRun, type RunnerSettings, type RunSpec } from './runner.js';
import { isAlive, runnerSettings, useTempDirs, waitFor } from './testing/helpers.js';
import { DirectLauncher, type Launcher } from './launcher.js';
import { HelperLauncher } from './spawn-helper.js';
import { silentLogger } from './log.js';

const tempDir = useTempDirs();
let launcher: Launcher;
const settingsFor = (workDir: string, overrides: Partial<RunnerSettings> = {}) => runnerSettings(workDir, { launcher, ...overrides });
// Every behaviour holds whichever way the script is started: the agent starts them through its helper, and from itself when it has none.
const launchers: [string, () => Launcher][] = [
  ['through the spawn helper', () => new HelperLauncher(new DirectLauncher(), silentLogger)],
  ['from the agent itself', () => new DirectLauncher()],
];

function spec(script: string, overrides: Partial<RunSpec> = {}): RunSpec {
  return { executionId: 'exec-1', flavour: 'autofix', interpreter: 'sh', script, env: {}, context: {}, timeoutSeconds: 60, ...overrides };
}

async function start(script: string, overrides: Partial<RunSpec> = {}, settings: Partial<RunnerSettings> = {}) {
  const workDir = await tempDir();
  const live: string[] = [];
  let pgid: number | undefined;
  let skipped: string[] = [];
  const run = new ScriptRun(spec(script, overrides), settingsFor(workDir, settings), {
    spawned: (id) => (pgid = id),
    output: (stream, text) => live.push(`${stream}:${text}`),
    skippedEnv: (names) => (skipped = names),
  });
  return { run, live, workDir, pgid: () => pgid, skipped: () => skipped };
}

describe.each(launchers)('ScriptRun, started %s', (_, makeLauncher) => {
  beforeAll(() => {
    launcher = makeLauncher();
  });
  afterAll(() => launcher.close());

  it('reports the exit code, output and times', async () => {
    const { run, pgid } = await start('echo out; echo err >&2; exit 3');
    const result = await run.result;
    expect(result).toMatchObject({ executionId: 'exec-1', ending: 'exited', exitCode: 3, signal: null, reason: null, stdout: 'out\n', stderr: 'err\n', stdoutTruncated: false });
    expect(result.startedAt).toBeGreaterThan(0);
    expect(result.finishedAt).toBeGreaterThanOrEqual(result.startedAt!);
    expect(pgid()).toBeGreaterThan(0);
  });

  it('passes event variables as environment, never as script text', async () => {
    const marker = join(await tempDir(), 'pwned');
    const hostile = `it's "quoted" with  spaces $(touch ${marker}) \`touch ${marker}\`; touch ${marker}`;
    process.env.PITCREW_AGENT_SECRET = 'agent-only';
    const { run, skipped } = await start('printf "%s\\n" "$HostName" "$Key1" "$PITCREW_EXECUTION_ID" "${LD_PRELOAD-none}" "${PITCREW_AGENT_SECRET-none}" "$PATH" "$LANG"', {
      env: { HostName: 'web-1', Key1: hostile, LD_PRELOAD: '/tmp/x.so' },
      context: { PITCREW_EXECUTION_ID: 'exec-1' },
    });
    const result = await run.result;
    delete process.env.PITCREW_AGENT_SECRET;
    expect(result.stdout.split('\n')).toEqual(['web-1', hostile, 'exec-1', 'none', 'none', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'C.UTF-8', '']);
    expect(existsSync(marker)).toBe(false);
    expect(skipped()).toEqual(['LD_PRELOAD']);
  });

  it('runs in an empty working directory; one the script left files in is removed afterwards', async () => {
    const { run, workDir } = await start('pwd; ls -A; touch left-behind');
    const result = await run.result;
    expect(result.stdout).toMatch(new RegExp(`^${workDir}/run-[^/]+/cwd\n$`));
    await run.removed;
    expect(await readdir(workDir)).toEqual([]);
  });

  it('keeps the directory of a tidy run for the next one; a diagnostics run with artifacts leaves nothing', async () => {
    const workDir = await tempDir();
    const settings = settingsFor(workDir);
    const tidy = new ScriptRun(spec('pwd; ls -A ..'), settings, { spawned: () => undefined, output: () => undefined });
    const first = await tidy.result;
    await tidy.removed;
    const [kept] = await readdir(workDir);
    expect(first.stdout).toBe(`${join(workDir, kept!, 'cwd')}\ncwd\nscript.sh\n`);
    expect((await readdir(join(workDir, kept!))).sort()).toEqual(['cwd', 'script.sh']);

    const again = new ScriptRun(spec('pwd; ls -A; ls -A ..', { executionId: 'exec-2' }), settings, { spawned: () => undefined, output: () => undefined });
    expect((await again.result).stdout).toBe(`${join(workDir, kept!, 'cwd')}\ncwd\nscript.sh\n`);
    await again.removed;

    const diagnostics = new ScriptRun(spec('echo report > "$PITCREW_ARTIFACTS/report.txt"', { executionId: 'exec-3', flavour: 'diagnostics' }), settings, { spawned: () => undefined, output: () => undefined });
    expect((await diagnostics.result).artifacts.map((a) => a.name)).toEqual(['report.txt']);
    await diagnostics.removed;
    expect(await readdir(workDir)).toEqual([]);
  });

  it('does not keep the directory of a run whose processes outlive it', async () => {
    const { run, workDir } = await start('sleep 30 >/dev/null 2>&1 & echo $!', {}, { drainMs: 50 });
    const result = await run.result;
    await run.removed;
    expect(await readdir(workDir)).toEqual([]);
    process.kill(Number(result.stdout.trim()), 'SIGKILL');
  });

  it('kills the whole process group on timeout, backgrounded grandchildren included', async () => {
    const { run } = await start('sleep 1000 & echo $!; sleep 1000', { timeoutSeconds: 1 });
    const result = await run.result;
    expect(result).toMatchObject({ ending: 'timed_out', exitCode: null, signal: 'SIGTERM', reason: expect.stringContaining('timeout of 1 s') });
    const grandchild = Number(result.stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    await waitFor(() => !isAlive(grandchild), 'the backgrounded sleep to die');
  });

  it('reports the signal, and no exit code, for a script killed by one', async () => {
    const { run } = await start('echo before; kill -9 $$; echo after');
    expect(await run.result).toMatchObject({ ending: 'exited', exitCode: null, signal: 'SIGKILL', reason: null, stdout: 'before\n' });
  });

  it('leaves background processes running after a normal exit and stops reading their output after the drain time', async () => {
    // The background sleep inherits stdout and holds it open long after the script exits.
    const { run, pgid } = await start('sleep 30 & echo $!; exit 0', { timeoutSeconds: 20 }, { drainMs: 500 });
    try {
      const result = await run.result;
      expect(result).toMatchObject({ ending: 'exited', exitCode: 0, signal: null, reason: null });
      expect(result.finishedAt - result.startedAt!).toBeLessThan(10_000);
      const background = Number(result.stdout.trim());
      expect(background).toBeGreaterThan(0);
      expect(isAlive(background)).toBe(true);
    } finally {
      signalGroup(pgid()!, 'SIGKILL');
    }
  });

  it('cancels a running script', async () => {
    const { run, live } = await start('echo started; sleep 1000');
    await waitFor(() => live.join('').includes('started'), 'the script to start');
    run.cancel();
    expect(await run.result).toMatchObject({ ending: 'cancelled', signal: 'SIGTERM', stdout: 'started\n', reason: expect.stringContaining('cancelled') });
  });

  it('sends SIGKILL when the group ignores SIGTERM', async () => {
    const { run, live } = await start("trap '' TERM; echo ready; sleep 1000", {}, { killGraceMs: 200 });
    await waitFor(() => live.join('').includes('ready'), 'the trap to be set');
    run.cancel();
    expect(await run.result).toMatchObject({ ending: 'cancelled', signal: 'SIGKILL' });
  });

  it('keeps output within the limit, cut on a character boundary', async () => {
    const { run, live } = await start('i=0; while [ $i -lt 20 ]; do printf "é"; i=$((i+1)); done; echo short >&2', {}, { maxOutputBytes: 11 });
    const result = await run.result;
    expect(result).toMatchObject({ stdout: 'ééééé', stdoutTruncated: true, stderr: 'short\n', stderrTruncated: false });
    expect(live.filter((l) => l.startsWith('stdout:')).join('').replace(/stdout:/g, '')).toBe('ééééé');
  });

  it('collects diagnostics artifacts within the size limit, never through symbolic links', async () => {
    const script = [
      'echo hello > "$PITCREW_ARTIFACTS/a.txt"',
      'mkdir "$PITCREW_ARTIFACTS/sub" && echo nested > "$PITCREW_ARTIFACTS/sub/b.txt"',
      'head -c 2000 /dev/zero > "$PITCREW_ARTIFACTS/big.bin"',
      'ln -s /etc/passwd "$PITCREW_ARTIFACTS/link"',
    ].join('\n');
    const { run } = await start(script, { flavour: 'diagnostics' }, { maxArtifactBytes: 100 });
    const result = await run.result;
    expect(result.artifacts).toEqual([
      { name: 'a.txt', base64: Buffer.from('hello\n').toString('base64') },
      { name: 'sub/b.txt', base64: Buffer.from('nested\n').toString('base64') },
    ]);
    expect(result.artifactsTruncated).toBe(true);
  });

  it('keeps artifacts within the protocol’s limits on files and name length, so the service accepts the result', async () => {
    const long = `${'d'.repeat(200)}/${'f'.repeat(99)}`; // 300 characters; each path part fits the file system's 255 bytes
    const script = [
      `mkdir "$PITCREW_ARTIFACTS/${long.split('/')[0]}" && echo long > "$PITCREW_ARTIFACTS/${long}"`,
      'i=100; while [ $i -lt 250 ]; do echo $i > "$PITCREW_ARTIFACTS/f$i.txt"; i=$((i+1)); done',
    ].join('\n');
    const { run } = await start(script, { flavour: 'diagnostics' });
    const result = await run.result;
    expect(result.exitCode).toBe(0);
    expect(result.artifacts).toHaveLength(100);
    expect(result.artifacts.map((a) => a.name)).not.toContain(long);
    expect(result.artifactsTruncated).toBe(true);
    expect(parseAgentMessage(JSON.stringify({ type: 'finished', result }))).toEqual({ type: 'finished', result });
  });

  it('gives autofix scripts no artifacts directory', async () => {
    const { run } = await start('echo "${PITCREW_ARTIFACTS-unset}"');
    expect(await run.result).toMatchObject({ stdout: 'unset\n', artifacts: [], artifactsTruncated: false });
  });

  it('runs python scripts', async () => {
    const { run } = await start('import os\nprint(os.environ["HostName"])', { interpreter: 'python', env: { HostName: 'web-1' } });
    expect(await run.result).toMatchObject({ ending: 'exited', exitCode: 0, stdout: 'web-1\n' });
  });

  it('fails to start when the interpreter is missing', async () => {
    const { run: pwsh } = await start('Write-Output hi', { interpreter: 'pwsh' });
    expect(await pwsh.result).toMatchObject({ ending: 'failed_to_start', startedAt: null, reason: expect.stringContaining('pwsh') });
    const { run: bash } = await start('echo hi', { interpreter: 'bash' }, { baseEnv: { PATH: '/nonexistent' } });
    expect(await bash.result).toMatchObject({ ending: 'failed_to_start', reason: expect.stringContaining('the bash interpreter (bash) is not installed') });
  });

  it('prepares its directory at once but spawns only once it may start', async () => {
    const workDir = await tempDir();
    let allow!: (refusal: string | undefined) => void;
    let pgid: number | undefined;
    const run = new ScriptRun(spec('echo ran'), settingsFor(workDir), { spawned: (id) => (pgid = id), output: () => undefined }, new Promise((resolve) => (allow = resolve)));
    await waitFor(() => readdirSync(workDir).length === 1, 'the run directory');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pgid).toBeUndefined();
    allow(undefined);
    expect(await run.result).toMatchObject({ ending: 'exited', exitCode: 0, stdout: 'ran\n' });
    expect(pgid).toBeGreaterThan(0);
  });

  it('never spawns a run refused before it may start, says why, and keeps its clean directory', async () => {
    const workDir = await tempDir();
    let pgid: number | undefined;
    const run = new ScriptRun(spec('echo should-not-run'), settingsFor(workDir), { spawned: (id) => (pgid = id), output: () => undefined }, Promise.resolve('the journal is full'));
    expect(await run.result).toMatchObject({ ending: 'failed_to_start', startedAt: null, stdout: '', reason: 'the journal is full' });
    await run.removed;
    expect(pgid).toBeUndefined();
    const [kept] = await readdir(workDir);
    expect((await readdir(join(workDir, kept!))).sort()).toEqual(['cwd', 'script.sh']);
  });

  it('never starts a run cancelled before its process exists', async () => {
    let pgid: number | undefined;
    const run = new ScriptRun(spec('echo should-not-run'), settingsFor(await tempDir()), { spawned: (id) => (pgid = id), output: () => undefined });
    run.cancel('stopped early');
    expect(await run.result).toMatchObject({ ending: 'cancelled', startedAt: null, stdout: '', reason: 'stopped early' });
    expect(pgid).toBeUndefined();
  });
});
