import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyObservations } from '../src/incidents/apply.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

/*
 * Two service nodes on one PostgreSQL ingest the same alarm at once: each transaction takes the
 * alarm's lock before reading its incident (src/incidents/reads.ts), so there is never a second
 * open incident (the partial unique index would refuse it, failing the batch: a 500 here), and no
 * occurrence counted by one node is lost to the other's write.
 */
describe.skipIf(!testDialects().includes('postgres'))('incidents across two service nodes on one PostgreSQL', () => {
  let a: TestEnv;
  let b: TestEnv;

  beforeAll(async () => {
    // One occurrence per transaction, so the two nodes' transactions interleave as much as they can.
    a = await startTestEnv('postgres', { ingestMaxBatch: 1 });
    b = await startTestEnv('postgres', { database: a.database, ingestMaxBatch: 1 });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  // The alarm's lock runs the nodes' transactions one after another, each about ten trips to
  // PostgreSQL: a test lasts that chain, which grows with the machine's load, not with a wait.
  // 20 calls of the same alarm still tell (without the lock, 20 and 10 failed every run), and
  // took 29 s at load 20-23, each trip 50-400 ms (bench/README.md, "Session 34: flaky").
  const CHAIN_TIMEOUT_MS = 120_000;

  const openOf = (hostname: string) => a.store.db.selectFrom('incidents').selectAll().where('hostname', '=', hostname).execute();

  it('webhook calls of one alarm split between the nodes: one open incident, every call counted', async () => {
    const rule = await a.createWebhookRule();
    const calls = 20;
    const replies = await Promise.all(Array.from({ length: calls }, (_, i) => (i % 2 ? a : b).webhook(rule.triggerId, { HostName: 'shared-1', AlarmName: 'disk_full' })));
    expect(replies.map((r) => r.statusCode)).toEqual(Array(calls).fill(202));
    const incidents = await openOf('shared-1');
    expect(incidents.map((i) => [i.state, i.occurrences])).toEqual([['open', calls]]);
    const linked = await a.store.db.selectFrom('events').select('id').where('incident_id', '=', incidents[0]!.id).execute();
    expect(linked).toHaveLength(calls);
  }, CHAIN_TIMEOUT_MS);

  it('an alert re-sent to both nodes, and an import beside them: one incident, counted once', async () => {
    const integration = (await a.api('POST', '/api/v1/integrations', { name: 'both', type: 'alertmanager' })).json().id as string;
    const startsAt = '2026-11-25T10:00:00.000Z';
    const body = JSON.stringify({
      version: '4', status: 'firing', receiver: 'pitcrew', groupKey: '{}:{}',
      alerts: [{ status: 'firing', labels: { alertname: 'DiskFull', instance: 'shared-2:9100' }, annotations: {}, startsAt, endsAt: '0001-01-01T00:00:00Z', fingerprint: 'ab12' }],
    });
    const post = (node: TestEnv) => node.app.server.inject({ method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${node.tenant.apiKey}/${integration}`, headers: { 'content-type': 'application/json' }, payload: body });
    const observation = { incidentKey: 'ab12', alarmName: 'DiskFull', hostname: 'shared-2', severity: null, state: 'firing' as const, at: Date.parse(startsAt) };
    const [replies] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, (_, i) => post(i % 2 ? a : b))),
      Promise.all(Array.from({ length: 5 }, () => applyObservations(b.store.db, b.tenant.tenantId, integration, [observation], Date.now()))),
    ]);
    expect(replies.map((r) => r.statusCode)).toEqual(Array(20).fill(202));
    expect((await openOf('shared-2')).map((i) => [i.state, i.occurrences, i.opened_at])).toEqual([['open', 1, Date.parse(startsAt)]]);
  }, CHAIN_TIMEOUT_MS);
});
