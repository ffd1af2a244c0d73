import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

// Two service nodes on one PostgreSQL, the sweeper's once-an-hour pass leaving no safety net:
// what node A accepts for an agent connected to node B reaches it only through LISTEN/NOTIFY.
describe.skipIf(!testDialects().includes('postgres'))('two service nodes on one PostgreSQL', () => {
  let a: TestEnv;
  let b: TestEnv;
  let agent: AgentProcess;
  const hourly = 3_600_000;

  beforeAll(async () => {
    a = await startTestEnv('postgres', { listen: true, sweepIntervalMs: hourly });
    b = await startTestEnv('postgres', { listen: true, sweepIntervalMs: hourly, database: a.database });
    agent = spawnAgent({ server: b.listening!.httpsUrl, apiKey: b.tenant.apiKey, hostname: 'on-node-b', fingerprint: b.listening!.fingerprint });
    await waitOnline(b.api, 'on-node-b');
  });
  afterAll(async () => {
    await agent.stop();
    await b.close();
    await a.close();
  });

  const execution = async (id: string) => (await a.api('GET', `/api/v1/executions/${id}`)).json();

  async function fireThroughA(script: string): Promise<string> {
    const rule = await a.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script } } });
    const reply = await a.webhook(rule.triggerId, { HostName: 'on-node-b' });
    expect(reply.json().outcome).toBe('accepted');
    return reply.json().executionIds[0];
  }

  it('an allowlist changed through node A holds on node B at once, not when its cache would expire', async () => {
    const rule = await a.createWebhookRule();
    // Node B has the tenant's key and settings cached (for 30 s unless told).
    expect((await b.webhook(rule.triggerId, {})).statusCode).toBe(202);
    try {
      expect((await a.api('PATCH', '/api/v1/tenant', { ipAllowlist: ['203.0.113.0/24'] })).statusCode).toBe(200);
      await waitFor(async () => (await b.webhook(rule.triggerId, {})).statusCode === 403, 'node B to refuse an address the allowlist no longer has', 5_000);
    } finally {
      expect((await a.api('PATCH', '/api/v1/tenant', { ipAllowlist: [] })).statusCode).toBe(200);
    }
    await waitFor(async () => (await b.webhook(rule.triggerId, {})).statusCode === 202, 'node B to take calls again', 5_000);
  });

  it('work accepted by node A reaches the agent connected to node B', async () => {
    const id = await fireThroughA('echo "ran on $PITCREW_HOSTNAME"');
    const done = await waitFor(async () => {
      const e = await execution(id);
      return e.state === 'succeeded' ? e : undefined;
    }, 'the execution to run through node B');
    expect(done.stdout).toBe('ran on on-node-b\n');
  });

  it('a cancel asked on node A stops a script whose agent is on node B', async () => {
    const id = await fireThroughA('echo started; sleep 60');
    await waitFor(async () => (await execution(id)).state === 'running', 'the script to start');
    expect((await a.api('POST', `/api/v1/executions/${id}/cancel`)).statusCode).toBe(202);
    await waitFor(async () => (await execution(id)).state === 'cancelled', 'the cancel to reach the agent through node B');
  });

  it('streams live output on node A of a script whose agent is connected to node B', async () => {
    const id = await fireThroughA('echo first; sleep 2; echo second');
    await waitFor(async () => (await execution(id)).state === 'running', 'the script to start');
    const response = await fetch(`${a.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${a.tenant.token}` } });
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean).map((block) => ({ event: /event: (\w+)/.exec(block)?.[1], data: JSON.parse(/data: (.*)/.exec(block)?.[1] ?? 'null') }));
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { state: 'succeeded', stdout: 'first\nsecond\n' } });
    // Relayed from node B while it ran, before the end: what ran before the stream opened, and after.
    const live = events.filter((e) => e.event === 'output').map((e) => e.data.chunk).join('');
    expect(live).toBe('first\nsecond\n');
  });
});
