import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signalGroup, statFields } from './process-group.js';
import { AGENT_VERSION } from './version.js';
import { FakeService } from './testing/fake-service.js';
import { isAlive, isGroupAlive, useTempDirs, waitFor } from './testing/helpers.js';

/*
 * The bundled agent as operators run it: one file in an otherwise empty directory, started as a
 * process. These tests run as root in CI's container; the root-only ones skip elsewhere.
 */

const run = promisify(execFile);
const tempDir = useTempDirs();
const asRoot = process.getuid?.() === 0;
let bundleDir: string;
let bundle: string;
const children: ChildProcess[] = [];
const services: FakeService[] = [];

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'pitcrew-agent-bundle-'));
  bundle = join(bundleDir, 'pitcrew-agent.mjs');
  await run(process.execPath, ['agent/build.mjs', bundle]);
  // The run-as user must be able to reach state directories made under it.
  await chmod(bundleDir, 0o755);
}, 60_000);

afterAll(() => rm(bundleDir, { recursive: true, force: true }));

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const service of services.splice(0)) await service.stop();
});

function startAgent(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, [bundle, ...args], { cwd: bundleDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

async function service(): Promise<FakeService> {
  const fake = new FakeService();
  await fake.start();
  services.push(fake);
  return fake;
}

/** The process's supplementary groups, from the `Groups:` line of /proc/PID/status. */
function groupsIn(status: string): number[] {
  const line = /^Groups:(.*)$/m.exec(status)?.[1] ?? '';
  return line.trim().split(/\s+/).filter(Boolean).map(Number).sort((a, b) => a - b);
}

/** What initgroups(user, gid) gives with /etc/group: gid plus every group that lists the user. */
async function initgroupsOf(user: string, gid: number): Promise<number[]> {
  const members = (await readFile('/etc/group', 'utf8')).split('\n').map((line) => line.split(':'))
    .filter((fields) => fields.length === 4 && fields[3]!.split(',').includes(user)).map((fields) => Number(fields[2]));
  return [...new Set([gid, ...members])].sort((a, b) => a - b);
}

function execute(fake: FakeService, executionId: string, script: string) {
  fake.send({ type: 'execute', executionId, hostId: fake.hostId, tenantId: fake.tenantId, flavour: 'autofix', interpreter: 'sh', script, env: {}, context: {}, timeoutSeconds: 60 });
}

describe('the bundled agent', () => {
  it('runs from a directory with nothing else in it', async () => {
    const help = await run(process.execPath, [bundle, '--help'], { cwd: bundleDir });
    expect(help.stdout).toContain('Usage: pitcrew-agent --server https://HOST:PORT --api-key KEY');
    expect((await run(process.execPath, [bundle, '--version'], { cwd: bundleDir })).stdout).toBe(`pitcrew-agent ${AGENT_VERSION}\n`);
  });

  it('exits 2 with advice on a wrong flag', async () => {
    const { exited, stderr } = startAgent(['--server', 'http://pitcrew.example.com']);
    expect(await exited).toBe(2);
    expect(stderr()).toContain('the agent connects over TLS only');
  });

  it('hides a key given with --api-key from ps, and says to use PITCREW_API_KEY', async () => {
    const fake = await service();
    const args = ['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--state-dir', join(await tempDir(), 'state'), '--hostname', 'web-1'];
    const { child, stderr } = startAgent(asRoot ? [...args, '--allow-root'] : args);
    await waitFor(() => fake.received('hello').length === 1, 'hello');
    const commandLine = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    expect(commandLine).not.toContain(fake.apiKey);
    expect(commandLine).toContain('--api-key [REDACTED] --state-dir');
    expect(stderr()).toContain('set PITCREW_API_KEY instead');
  });

  it.runIf(asRoot)('refuses to run as root without --run-as or --allow-root', async () => {
    const { exited, stderr } = startAgent(['--server', 'https://127.0.0.1:1', '--api-key', 'k', '--state-dir', join(await tempDir(), 'state')]);
    expect(await exited).toBe(1);
    expect(stderr()).toBe('pitcrew-agent refuses to run as root; pass --run-as USER (the agent drops to that user) or --allow-root\n');
  });

  it.runIf(asRoot)('drops to the --run-as user before connecting, scripts included', async () => {
    const fake = await service();
    const stateDir = join(bundleDir, `state-${Date.now()}`);
    const { child, exited, stderr } = startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--run-as', 'nobody', '--state-dir', stateDir, '--hostname', 'web-1']);
    await waitFor(() => fake.received('hello').length === 1, 'hello');
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    expect(status).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
    expect(status).toMatch(/^Gid:\s+65534\s+65534\s+65534\s+65534$/m);
    // initgroups: nobody's own groups, none of root's.
    expect(groupsIn(status)).toEqual(await initgroupsOf('nobody', 65534));
    expect(groupsIn(status).join(' ')).toBe((await run('id', ['-G', 'nobody'])).stdout.trim());
    expect((await stat(join(stateDir, 'credentials.json'))).uid).toBe(65534);
    execute(fake, 'e1', 'id -u; id -g; id -G');
    await waitFor(() => fake.received('finished').length === 1, 'the result');
    expect(fake.received('finished')[0]!.result.stdout).toBe(`65534\n65534\n${groupsIn(status).join(' ')}\n`);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr()).toContain('"msg":"stopping","signal":"SIGTERM"');
    expect(stderr()).not.toContain(fake.apiKey);
  });

  it.runIf(asRoot)('runs with the --group group as its primary group, scripts included', async () => {
    // Not nogroup: that is nobody's own group on Debian, so it would not show that --group applies.
    const [, , gid] = (await run('getent', ['group', 'users'])).stdout.trim().split(':');
    const users = Number(gid);
    expect(users).not.toBe(65534);
    const fake = await service();
    const stateDir = join(bundleDir, `state-${Date.now()}`);
    const { child } = startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--run-as', 'nobody', '--group', 'users', '--state-dir', stateDir]);
    await waitFor(() => fake.received('hello').length === 1, 'hello');
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    expect(status).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
    expect(status).toMatch(new RegExp(`^Gid:\\s+${users}\\s+${users}\\s+${users}\\s+${users}$`, 'm'));
    expect(groupsIn(status)).toEqual(await initgroupsOf('nobody', users));
    execute(fake, 'e1', 'id -g');
    await waitFor(() => fake.received('finished').length === 1, 'the result');
    expect(fake.received('finished')[0]!.result.stdout).toBe(`${users}\n`);
  });

  it('starts scripts from a small helper process of its own, which ends with the agent however the agent ends', async () => {
    const fake = await service();
    const args = ['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--state-dir', join(await tempDir(), 'state')];
    const { child, exited } = startAgent(asRoot ? [...args, '--allow-root'] : args);
    await waitFor(() => fake.received('hello').length === 1, 'hello');
    execute(fake, 'e1', 'echo $PPID');
    await waitFor(() => fake.received('finished').length === 1, 'the result');
    const helper = Number(fake.received('finished')[0]!.result.stdout);
    expect(helper).not.toBe(child.pid);
    expect(statFields(helper)?.[1]).toBe(String(child.pid));
    expect((await readFile(`/proc/${helper}/cmdline`, 'utf8')).replace(/\0/g, ' ').trim()).toBe('pitcrew-agent spawn helper');
    child.kill('SIGKILL');
    await exited;
    await waitFor(() => !isAlive(helper), 'the helper to end with the agent');
  });

  it('on SIGTERM, stops running scripts and delivers their results before exiting 0', async () => {
    const fake = await service();
    const { child, exited } = startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--allow-root', '--state-dir', join(await tempDir(), 'state')]);
    await waitFor(() => fake.received('hello').length === 1, 'hello');
    execute(fake, 'e1', 'echo $$; sleep 60');
    await waitFor(() => fake.received('started').length === 1 && fake.received('output').length === 1, 'the script to start');
    const pgid = Number(fake.received('output')[0]!.chunk.trim());
    expect(isGroupAlive(pgid)).toBe(true);
    try {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(fake.received('finished').map((m) => m.result)).toEqual([
        expect.objectContaining({ executionId: 'e1', ending: 'cancelled', signal: 'SIGTERM', reason: 'the agent was stopped (SIGTERM) while the script ran' }),
      ]);
      expect(isGroupAlive(pgid)).toBe(false);
    } finally {
      signalGroup(pgid, 'SIGKILL');
    }
  });

  it('sends no more tags than the service accepts', async () => {
    const tags = (count: number) => Array.from({ length: count }, (_, i) => `${i}`.padStart(128, 't')).join(',');
    const tooMany = startAgent(['--server', 'http://127.0.0.1:1', '--insecure', '--allow-root', '--tags', tags(60), '--state-dir', join(await tempDir(), 'state')]);
    expect(await tooMany.exited).toBe(2);
    expect(tooMany.stderr()).toContain('60 tags given; at most 50');
    // The fake service validates every frame with the service's parseAgentMessage.
    const fake = await service();
    startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--allow-root', '--tags', tags(50), '--state-dir', join(await tempDir(), 'state')]);
    await waitFor(() => fake.received('hello').length === 1, 'a valid hello');
    expect(fake.received('hello')[0]!.tags).toEqual(tags(50).split(','));
  });

  it.runIf(asRoot)('never hands a directory holding other files to the --run-as user', async () => {
    const stateDir = await tempDir();
    await writeFile(join(stateDir, 'important.conf'), 'keep me\n');
    await chmod(stateDir, 0o755);
    const { exited, stderr } = startAgent(['--server', 'https://127.0.0.1:1', '--api-key', 'k', '--run-as', 'nobody', '--state-dir', stateDir]);
    expect(await exited).toBe(1);
    expect(stderr()).toContain(`${stateDir} is not writable by nobody`);
    expect((await stat(stateDir)).uid).toBe(0);
  });

  it('refuses to share its state directory with a running agent, names --state-dir, and takes over from one that crashed', async () => {
    const fake = await service();
    const stateDir = join(await tempDir(), 'state');
    // Neither is given --state-dir: both take the same default, as two agents started on one host do.
    const env = { ...process.env, PITCREW_AGENT_STATE_DIR: stateDir };
    const agent = (hostname: string) => startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--allow-root', '--hostname', hostname], env);
    const first = agent('web-1');
    await waitFor(() => fake.received('hello').length === 1, 'hello from the first agent');

    const second = agent('web-2');
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(`pitcrew-agent: another pitcrew agent (pid ${first.child.pid}, --hostname web-1, running since `);
    expect(second.stderr()).toContain(`holds the state directory ${stateDir}`);
    expect(second.stderr()).toContain('with --state-dir DIR (or PITCREW_AGENT_STATE_DIR)');
    expect(fake.received('hello').map((m) => m.hostname)).toEqual(['web-1']);
    expect(isAlive(first.child.pid!)).toBe(true);

    // A crash leaves the lock behind, naming a process that is gone: the next agent breaks it.
    first.child.kill('SIGKILL');
    await first.exited;
    const restarted = agent('web-1');
    await waitFor(() => fake.received('hello').length === 2, 'hello from the agent started after the crash');
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);
    await expect(stat(join(stateDir, 'agent.lock'))).rejects.toThrow('ENOENT');
  });

  it.runIf(asRoot)('never hands a state directory another agent holds to its --run-as user', async () => {
    const fake = await service();
    const stateDir = join(bundleDir, `state-${Date.now()}`);
    const first = startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--allow-root', '--state-dir', stateDir, '--hostname', 'web-1']);
    await waitFor(() => fake.received('hello').length === 1, 'hello from the first agent');
    const second = startAgent(['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--run-as', 'nobody', '--state-dir', stateDir, '--hostname', 'web-2']);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(`another pitcrew agent (pid ${first.child.pid}, --hostname web-1`);
    for (const path of [stateDir, join(stateDir, 'credentials.json'), join(stateDir, 'journal'), join(stateDir, 'work')]) expect((await stat(path)).uid).toBe(0);
  });

  it.runIf(asRoot)('after being killed mid-run, reports the run as interrupted, kills its leftovers and never re-runs it', async () => {
    const fake = await service();
    fake.autoRecord = false;
    const stateDir = join(await tempDir(), 'state');
    const args = ['--server', fake.url, '--insecure', '--api-key', fake.apiKey, '--allow-root', '--state-dir', stateDir];
    const first = startAgent(args);
    await waitFor(() => fake.received('hello').length === 1, 'hello');
    execute(fake, 'e1', 'echo $$; sleep 1000');
    await waitFor(() => fake.received('output').length === 1, 'the script to print its pid');
    const scriptPid = Number(fake.received('output')[0]!.chunk.trim());
    first.child.kill('SIGKILL');
    await first.exited;
    expect(isAlive(scriptPid)).toBe(true);

    startAgent(args);
    await waitFor(() => fake.received('hello').length === 2, 'hello from the restarted agent');
    expect(fake.received('hello')[1]!.interrupted).toEqual([
      { executionId: 'e1', reason: `the agent stopped while the script ran (pid/pgid ${scriptPid}); it was not re-run; its remaining processes were killed` },
    ]);
    await waitFor(() => !isAlive(scriptPid), 'the orphaned script to be killed');
    // At-least-once delivery sends e1 again: the agent must not run it. e2 shows the agent got past it.
    const startedBefore = fake.received('started').length;
    execute(fake, 'e1', 'echo $$; sleep 1000');
    execute(fake, 'e2', 'true');
    await waitFor(() => fake.received('finished').some((m) => m.result.executionId === 'e2'), 'e2');
    // e1 neither starts nor ends again; e2, a run shorter than the agent holds `started` back, tells its start in its result.
    expect(fake.received('started').slice(startedBefore).map((m) => m.executionId)).not.toContain('e1');
    expect(fake.received('finished').map((m) => m.result.executionId)).not.toContain('e1');
    expect(fake.received('finished').find((m) => m.result.executionId === 'e2')!.result).toMatchObject({ ending: 'exited', exitCode: 0, startedAt: expect.any(Number) });
  });
});
