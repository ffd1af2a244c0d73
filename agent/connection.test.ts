import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';
import { Connection } from './connection.js';
import { CredentialStore } from './credentials.js';
import { Executor } from './executor.js';
import { Journal } from './journal.js';
import { createLogger } from './log.js';
import { FakeService } from './testing/fake-service.js';
import { runnerSettings, useTempDirs, waitFor } from './testing/helpers.js';

const tempDir = useTempDirs();
const HOST = { hostname: 'web-1', tags: ['web', 'eu'], os: 'Linux 6.1', arch: 'x64', version: '0.1.0' };
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startService(): Promise<FakeService> {
  const service = new FakeService();
  await service.start();
  cleanups.push(() => service.stop());
  return service;
}

async function startAgent(service: FakeService, { apiKey = service.apiKey, withoutApiKey = false, stateDir = '', backoff = new Backoff(10, 50) } = {}) {
  const dir = stateDir || (await tempDir());
  const logs: string[] = [];
  const log = createLogger((line) => void logs.push(line));
  const journal = await Journal.open(join(dir, 'journal'));
  const executor = new Executor({ journal, runner: runnerSettings(await tempDir()), allow: [], log });
  const credentials = new CredentialStore(dir);
  const connection = new Connection({
    server: new URL(service.url), trust: { kind: 'plain' }, apiKey: withoutApiKey ? undefined : apiKey, host: HOST, credentials, executor, log, backoff,
  });
  const exit = connection.run();
  cleanups.push(async () => {
    connection.stop();
    await exit;
    await executor.settled();
    await journal.close();
  });
  return { dir, logs, exit, connection, credentials };
}

function execute(service: FakeService, executionId: string, script: string) {
  service.send({ type: 'execute', executionId, hostId: service.hostId, tenantId: service.tenantId, flavour: 'autofix', interpreter: 'sh', script, env: {}, context: {}, timeoutSeconds: 30 });
}

describe('Connection', () => {
  it('enrols with the API key, keeps only its own credential, and says hello', async () => {
    const service = await startService();
    const { dir, logs } = await startAgent(service);
    await waitFor(() => service.received('hello').length === 1, 'hello');
    expect(service.enrolments).toEqual([{ authorization: `Bearer ${service.apiKey}`, body: HOST }]);
    expect(service.received('hello')[0]).toEqual({ type: 'hello', v: 1, ...HOST, running: [], interrupted: [], finished: [] });
    const saved = JSON.parse(await readFile(join(dir, 'credentials.json'), 'utf8')) as Record<string, string>;
    expect(saved).toMatchObject({ hostId: 'host-1', tenantId: 'tenant-1', server: `${service.url}/` });
    expect(service.upgrades).toEqual([saved.token]);
    expect((await stat(join(dir, 'credentials.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(saved)).not.toContain(service.apiKey);
    await waitFor(() => logs.some((l) => l.includes('connected to the service')), 'the connected log line');
    expect(logs.join('')).not.toContain(service.apiKey);
    expect(logs.join('')).not.toContain(saved.token);
  });

  it('runs what it is sent and heartbeats', async () => {
    const service = await startService();
    service.heartbeatSeconds = 1;
    await startAgent(service);
    await waitFor(() => service.received('hello').length === 1, 'hello');
    execute(service, 'e1', 'echo hi');
    await waitFor(() => service.received('finished').length === 1, 'the result');
    expect(service.received('finished')[0]!.result).toMatchObject({ executionId: 'e1', ending: 'exited', stdout: 'hi\n' });
    expect(service.received('started').map((m) => m.executionId)).toEqual(['e1']);
    await waitFor(() => service.received('heartbeat').length > 0, 'a heartbeat');
  });

  it('ignores frames it does not understand', async () => {
    const service = await startService();
    const { logs } = await startAgent(service);
    await waitFor(() => service.received('hello').length === 1, 'hello');
    service.send('{"type":"reboot"}');
    service.send('not json');
    execute(service, 'e1', 'true');
    await waitFor(() => service.received('finished').length === 1, 'the result');
    expect(logs.filter((l) => l.includes('not a known service message'))).toHaveLength(2);
  });

  it('keeps running through a service restart and delivers the result it could not send', async () => {
    const service = await startService();
    service.autoRecord = false;
    const { dir } = await startAgent(service);
    await waitFor(() => service.received('hello').length === 1, 'hello');
    const gate = join(dir, 'gate');
    execute(service, 'e1', `while [ ! -e ${gate} ]; do sleep 0.01; done; echo survived`);
    await waitFor(() => service.received('started').length === 1, 'the run to start');
    await service.stop();
    await service.start();
    await waitFor(() => service.received('hello').length === 2, 'a second hello after the restart');
    expect(service.received('hello')[1]!.running).toEqual(['e1']);
    await writeFile(gate, '');
    await waitFor(() => service.received('finished').length === 1, 'the result');
    // The service did not say recorded: a third connection offers the same result again.
    await service.stop();
    await service.start();
    await waitFor(() => service.received('finished').length === 2, 'the result offered again');
    expect(service.received('finished').map((m) => m.result.stdout)).toEqual(['survived\n', 'survived\n']);
  });

  it('retries a service that is restarting (nothing listens) within the refused cap, and says so once', async () => {
    const service = await startService();
    const failures: string[] = [];
    // The ceiling would pass 10 s after ten doublings; a refusal keeps it at the 40 ms cap.
    const backoff = new (class extends Backoff {
      override next(failure: 'refused' | 'other' = 'other'): number {
        failures.push(failure);
        return super.next(failure);
      }
    })(10, 60_000, Math.random, 40);
    const { logs } = await startAgent(service, { backoff });
    await waitFor(() => service.received('hello').length === 1, 'hello');
    await service.stop();
    const from = failures.length;
    await waitFor(() => failures.length >= from + 12, 'a dozen attempts while nothing listens');
    expect(failures.slice(from + 1)).toEqual(Array(failures.length - from - 1).fill('refused'));
    expect(logs.filter((l) => l.includes('could not reach the service'))).toHaveLength(1);
    await service.start();
    await waitFor(() => service.received('hello').length === 2, 'hello once the service listens again');
  });

  it('enrols again when the service no longer knows its credential', async () => {
    const service = await startService();
    const { credentials } = await startAgent(service);
    await waitFor(() => service.received('hello').length === 1, 'hello');
    const first = await credentials.load(`${service.url}/`);
    service.tokens.clear();
    await service.stop();
    await service.start();
    await waitFor(() => service.received('hello').length === 2, 'hello with a new credential');
    expect(service.enrolments).toHaveLength(2);
    expect((await credentials.load(`${service.url}/`))?.token).not.toBe(first?.token);
  });

  it('stops with a clear message when its credential is refused and it has no API key', async () => {
    const service = await startService();
    const stateDir = await tempDir();
    await new CredentialStore(stateDir).save({ hostId: 'h', tenantId: 't', token: 'pca_revoked', server: `${service.url}/` });
    const { exit, logs } = await startAgent(service, { withoutApiKey: true, stateDir });
    expect(await exit).toBe(1);
    expect(logs.join('')).toContain('the host was probably deleted. Start the agent with --api-key KEY');
  });

  it('stops when the API key is refused at enrolment', async () => {
    const service = await startService();
    const { exit, logs } = await startAgent(service, { apiKey: 'b'.repeat(64) });
    expect(await exit).toBe(1);
    expect(logs.join('')).toContain('the service refused the enrolment (HTTP 401): enrol with a current tenant API key');
  });
});
