import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from './testing/fake-service.js';
import { isAlive, useTempDirs, waitFor } from './testing/helpers.js';

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

function startAgent(args: string[]) {
  const child = spawn(process.execPath, [bundle, ...args], { cwd: bundleDir, stdio: ['ignore', 'pipe', 'pipe'] });
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

function execute(fake: FakeService, executionId: string, script: string) {
  fake.send({ type: 'execute', executionId, hostId: fake.hostId, tenantId: fake.tenantId, flavour: 'autofix', interpreter: 'sh', script, env: {}, context: {}, timeoutSeconds: 60 });
}

describe('the bundled agent', () => {
  it('runs from a directory with nothing else in it', async () => {
    const help = await run(process.execPath, [bundle, '--help'], { cwd: bundleDir });
    expect(help.stdout).toContain('Usage: pitcrew-agent --server https://HOST:PORT --api-key KEY');
    expect((await run(process.execPath, [bundle, '--version'], { cwd: bundleDir })).stdout).toBe('pitcrew-agent 0.1.0\n');
  });

  it('exits 2 with advice on a wrong flag', async () => {
    const { exited, stderr } = startAgent(['--server', 'http://pitcrew.example.com']);
    expect(await exited).toBe(2);
    expect(stderr()).toContain('the agent connects over TLS only');
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
    expect((await stat(join(stateDir, 'credentials.json'))).uid).toBe(65534);
    execute(fake, 'e1', 'id -u; id -g');
    await waitFor(() => fake.received('finished').length === 1, 'the result');
    expect(fake.received('finished')[0]!.result.stdout).toBe('65534\n65534\n');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr()).toContain('"msg":"stopping","signal":"SIGTERM"');
    expect(stderr()).not.toContain(fake.apiKey);
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
    expect(fake.received('started').slice(startedBefore).map((m) => m.executionId)).toEqual(['e2']);
  });
});
