import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_TRUST_AFTER_MS } from '../src/cluster/nodes.js';
import { startTestEnv, type TestEnv, type TestEnvOptions } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { admin as postgresAdmin } from './support/postgres.js';
import { waitFor } from './support/wait.js';

interface TwoNodes {
  a: TestEnv;
  b: TestEnv;
  agent: AgentProcess;
}

/** Nodes A and B on one PostgreSQL database, and an agent of host `hostname` connected to B. */
async function twoNodes(hostname: string, options: TestEnvOptions = {}): Promise<TwoNodes> {
  const a = await startTestEnv('postgres', { listen: true, ...options });
  const b = await startTestEnv('postgres', { listen: true, ...options, database: a.database });
  const agent = spawnAgent({ server: b.listening!.httpsUrl, apiKey: b.tenant.apiKey, hostname, fingerprint: b.listening!.fingerprint });
  await waitOnline(b.api, hostname);
  return { a, b, agent };
}

async function stopTwoNodes({ a, b, agent }: TwoNodes): Promise<void> {
  await agent.stop();
  await b.close();
  await a.close();
}

// Two service nodes on one PostgreSQL, the sweeper's once-an-hour pass leaving no safety net:
// what node A accepts for an agent connected to node B reaches it only through LISTEN/NOTIFY.
describe.skipIf(!testDialects().includes('postgres'))('two service nodes on one PostgreSQL', () => {
  let a: TestEnv;
  let b: TestEnv;
  let agent: AgentProcess;
  const hourly = 3_600_000;

  beforeAll(async () => {
    ({ a, b, agent } = await twoNodes('on-node-b', { sweepIntervalMs: hourly }));
  });
  afterAll(() => stopTwoNodes({ a, b, agent }));

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

  it('a key narrowed through node A is refused by node B at once, for webhooks and enrolment alike', async () => {
    const narrowed = (await a.api('POST', '/api/v1/api-keys', { name: 'narrowed', scopes: ['webhook', 'enrol'] })).json();
    const rule = await a.createWebhookRule();
    const enrol = (hostname: string) => b.app.server.inject({
      method: 'POST', url: '/api/v1/agents/enrol',
      headers: { authorization: `Bearer ${narrowed.apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ hostname, tags: [], os: 'Linux test', arch: 'x64', version: 'test' }),
    });
    // Node B has the key cached with both scopes.
    expect((await b.webhook(rule.triggerId, {}, { apiKey: narrowed.apiKey })).statusCode).toBe(202);
    expect((await enrol('narrow-b-1')).statusCode).toBe(201);

    expect((await a.api('PATCH', `/api/v1/api-keys/${narrowed.id}`, { scopes: ['webhook'] })).statusCode).toBe(200);
    const refused = await enrol('narrow-b-2');
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().detail).toMatch(/"narrowed" lacks the enrol scope/);
    expect((await b.webhook(rule.triggerId, {}, { apiKey: narrowed.apiKey })).statusCode).toBe(202);

    expect((await a.api('PATCH', `/api/v1/api-keys/${narrowed.id}`, { scopes: [] })).statusCode).toBe(400);
    const enrolOnly = (await a.api('POST', '/api/v1/api-keys', { name: 'enrol-only', scopes: ['webhook', 'enrol'] })).json();
    expect((await b.webhook(rule.triggerId, {}, { apiKey: enrolOnly.apiKey })).statusCode).toBe(202);
    expect((await a.api('PATCH', `/api/v1/api-keys/${enrolOnly.id}`, { scopes: ['enrol'] })).statusCode).toBe(200);
    const webhook = await b.webhook(rule.triggerId, {}, { apiKey: enrolOnly.apiKey });
    expect(webhook.statusCode, webhook.body).toBe(403);
    expect(webhook.json().detail).toMatch(/"enrol-only" lacks the webhook scope/);
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

// A PostgreSQL restart or failover cuts every connection of every node at once, the connections
// holding the nodes' liveness locks included. No node may take another for dead because of it.
describe.skipIf(!testDialects().includes('postgres'))('two service nodes through a PostgreSQL restart', () => {
  let a: TestEnv;
  let b: TestEnv;
  let agent: AgentProcess;

  beforeAll(async () => {
    ({ a, b, agent } = await twoNodes('restart-b'));
  });
  afterAll(() => stopTwoNodes({ a, b, agent }));

  it('keeps a running execution running when every database connection is cut for seconds; both nodes take their locks and listen again', async () => {
    const gate = path.join(a.database.dataDir, 'restart-b.go');
    const rule = await a.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script: `while [ ! -e ${gate} ]; do sleep 0.05; done; echo done` } } });
    const [id] = (await a.webhook(rule.triggerId, { HostName: 'restart-b' })).json().executionIds as string[];
    const state = async () => (await a.api('GET', `/api/v1/executions/${id}`)).json();
    await waitFor(async () => (await state()).state === 'running', 'the script to start on node B');

    const admin = a.database.open();
    try {
      /** The backends holding the nodes' liveness locks (pg_locks shows every database's: other suites run beside this one). */
      const holders = async () => (await sql<{ pid: number }>`select pid from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`.execute(admin.db)).rows.map((r) => r.pid);
      const before = await holders();
      expect(before).toHaveLength(2);
      // Down for longer than a node may be silent with its lock free: no new connection is
      // allowed (this one stays) until both nodes' heartbeats are that old.
      const database = (await sql<{ name: string }>`select current_database() as name`.execute(admin.db)).rows[0]!.name;
      const allowConnections = (allow: boolean) => postgresAdmin((client) => client.query(`alter database "${database}" with allow_connections ${allow}`));
      await allowConnections(false);
      try {
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`.execute(admin.db);
        await waitFor(async () => {
          const beats = await admin.db.selectFrom('nodes').select('heartbeat_at').execute();
          return beats.every((node) => Date.now() - node.heartbeat_at > LOCK_TRUST_AFTER_MS + 500);
        }, 'the outage to last longer than a node waits to believe a free lock');
      } finally {
        await allowConnections(true);
      }
      await waitFor(async () => {
        const now = await holders();
        return now.length === 2 && now.every((pid) => !before.includes(pid));
      }, 'both nodes to hold their locks again, on new connections', 10_000);
      // Both listen to the other again (cross-node wake-ups, live output, tenant changes).
      await waitFor(async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and query = ${`LISTEN ${'pitcrew_wakeup'}`}`.execute(admin.db)).rows[0]!.n === 2, 'both nodes to listen again', 10_000);
      // Had a node been taken for dead, its running execution would have been ended lost by now.
      expect((await state()).state).toBe('running');
      const nodes = await admin.db.selectFrom('nodes').select('id').execute();
      expect(nodes).toHaveLength(2);
    } finally {
      await admin.close();
    }
    fs.writeFileSync(gate, '');
    const done = await waitFor(async () => {
      const e = await state();
      return e.state === 'succeeded' ? e : undefined;
    }, 'the script to end and its result to be stored');
    expect(done).toMatchObject({ stdout: 'done\n', lateResult: null });
  });
  it('a node that finds itself taken for dead has its agents connect afresh', async () => {
    const admin = a.database.open();
    try {
      const host = await admin.db.selectFrom('hosts').select('node_id').where('hostname', '=', 'restart-b').executeTakeFirstOrThrow();
      // What another node does to one it takes for dead, after settling what ran through it.
      await admin.db.deleteFrom('nodes').where('id', '=', host.node_id!).execute();
      await waitFor(() => agent.output().includes('"code":1012'), 'node B to close its agent connections');
      await waitFor(async () => (await admin.db.selectFrom('nodes').select('id').where('id', '=', host.node_id!).execute()).length === 1, 'node B to register again');
    } finally {
      await admin.close();
    }
    await waitOnline(b.api, 'restart-b');
  });
});
