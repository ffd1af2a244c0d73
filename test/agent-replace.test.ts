import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

// Issue 22: a second machine giving an enrolled host's name took that host at once. Now it is
// refused unless it says --replace; the replacement is recorded, and the agent it replaced does
// not take the host back.
describe.each(testDialects())('replacing a host with real agent processes on %s', (dialect) => {
  let env: TestEnv;
  const agents: AgentProcess[] = [];
  let enrolKey: { id: string; apiKey: string };

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    const issued = await env.api('POST', '/api/v1/api-keys', { name: 'agents', scopes: ['enrol'] });
    enrolKey = issued.json();
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.kill()));
    await env.close();
  });

  const start = (hostname: string, args: string[] = []) => {
    const agent = spawnAgent({ server: env.listening!.httpsUrl, apiKey: enrolKey.apiKey, hostname, fingerprint: env.listening!.fingerprint, args });
    agents.push(agent);
    return agent;
  };

  it('a second machine with the name of an online host is refused (409) and told about --replace; with --replace it takes the host, and the old agent stops', async () => {
    const original = start('web-1');
    const { id: hostId } = await waitOnline(env.api, 'web-1');

    const impostor = start('web-1');
    expect(await impostor.exited).toBe(1);
    expect(impostor.output()).toMatch(/refused the enrolment \(HTTP 409\): host web-1 is already enrolled and its agent is connected now.*--replace/);
    expect(original.child.exitCode).toBeNull();

    const replacement = start('web-1', ['--replace']);
    await waitFor(() => /connected to the service/.test(replacement.output()), 'the replacement to connect');
    // The replaced agent's credential no longer works: it enrols again without --replace, is
    // refused, and stops, instead of taking the host back.
    expect(await original.exited).toBe(1);
    expect(original.output()).toMatch(/host web-1 is already enrolled and its agent is connected now/);
    await waitOnline(env.api, 'web-1');
    expect(replacement.child.exitCode).toBeNull();

    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "$PITCREW_HOSTNAME"' } } });
    const [executionId] = (await env.webhook(rule.triggerId, { HostName: 'web-1' })).json().executionIds;
    const done = await waitFor(async () => {
      const e = (await env.api('GET', `/api/v1/executions/${executionId}`)).json();
      return e.state === 'succeeded' ? e : undefined;
    }, 'the execution to run on the replacement');
    expect(done.stdout).toBe('web-1\n');

    const history = (await env.api('GET', `/api/v1/hosts/${hostId}/history`)).json().items;
    expect(history).toEqual([
      expect.objectContaining({ kind: 'replaced', hostname: 'web-1', apiKeyId: enrolKey.id, apiKeyName: 'agents', sourceIp: '127.0.0.1', wasOnline: true }),
      expect.objectContaining({ kind: 'enrolled', hostname: 'web-1', apiKeyId: enrolKey.id, apiKeyName: 'agents', sourceIp: '127.0.0.1', wasOnline: false }),
    ]);
  });

  it('--replace is spent by the first enrolment: an agent started with it, replaced in turn, stops instead of taking the host back', async () => {
    const second = start('app-1', ['--replace']);
    await waitOnline(env.api, 'app-1');
    const third = start('app-1', ['--replace']);
    await waitFor(() => /connected to the service/.test(third.output()), 'the third machine to connect');
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(/host app-1 is already enrolled and its agent is connected now/);
    expect(third.child.exitCode).toBeNull();
    const { id } = await waitOnline(env.api, 'app-1');
    const kinds = (await env.api('GET', `/api/v1/hosts/${id}/history`)).json().items.map((h: { kind: string }) => h.kind);
    expect(kinds).toEqual(['replaced', 'enrolled']);
  });

  it('an offline host is replaced only with --replace too', async () => {
    const first = start('db-1');
    await waitOnline(env.api, 'db-1');
    await first.stop();
    await waitFor(async () => (await env.api('GET', '/api/v1/hosts?hostname=db-1')).json().items[0]?.status === 'offline', 'db-1 offline');

    const reinstalled = start('db-1');
    expect(await reinstalled.exited).toBe(1);
    expect(reinstalled.output()).toMatch(/host db-1 is already enrolled and its agent is offline \(last seen .*\).*--replace/);

    start('db-1', ['--replace']);
    const { id } = await waitOnline(env.api, 'db-1');
    const kinds = (await env.api('GET', `/api/v1/hosts/${id}/history`)).json().items.map((h: { kind: string; wasOnline: boolean }) => [h.kind, h.wasOnline]);
    expect(kinds).toEqual([['replaced', false], ['enrolled', false]]);
  });
});
