import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel } from './support/notify.js';
import { waitFor } from './support/wait.js';
import { newId } from '../src/store/ids.js';
import type { Database } from '../src/store/schema.js';

const FLEET = 10_000;
const REPLY_CAP = 100;

/**
 * Hosts as enrolment leaves them, written straight to the database: ten thousand enrolments (or
 * agents) would take minutes, and the storage of a fan-out needs only the rows.
 */
async function insertHosts(db: Kysely<Database>, tenantId: string, prefix: string, count: number, tag: string): Promise<void> {
  const now = Date.now();
  for (let start = 0; start < count; start += 500) {
    const hosts = Array.from({ length: Math.min(500, count - start) }, (_, i) => {
      const hostname = `${prefix}-${start + i}`;
      return {
        id: newId(now), tenant_id: tenantId, hostname, hostname_key: hostname, hostname_short: hostname, tags: JSON.stringify([tag]), agent_tags: JSON.stringify([tag]), managed_tags: '[]',
        os: 'Linux test', arch: 'x64', agent_version: 'test', token_hash: randomUUID(), enrolled_at: now, last_seen_at: null, session_id: null, node_id: null, last_picked_at: null,
      };
    });
    await db.insertInto('hosts').values(hosts).execute();
    await db.insertInto('host_tags').values(hosts.map((h) => ({ host_id: h.id, tenant_id: tenantId, tag }))).execute();
  }
}

async function countOf(db: Kysely<Database>, table: 'executions' | 'execution_transitions', column: string, value: string): Promise<number> {
  const row = await db.selectFrom(table as 'executions').select((eb) => eb.fn.countAll<number>().as('n')).where(column as 'event_id', '=', value).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Group commits so far, and the events they held (the ingest batch-size histogram). */
async function batches(env: TestEnv): Promise<{ count: number; sum: number }> {
  const { values } = await env.app.context.metrics.ingestBatchSize.get();
  const value = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
  return { count: value('pitcrew_ingest_batch_size_count'), sum: value('pitcrew_ingest_batch_size_sum') };
}

describe.each(testDialects())('fan-outs the size of a fleet on %s', (dialect) => {
  let env: TestEnv;
  let big: { id: string; triggerId: string };

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    await insertHosts(env.store.db, env.tenant.tenantId, 'fleet', FLEET, 'fleet');
    big = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['fleet'] } });
  }, 120_000);
  afterAll(() => env.close());

  it(`stores one queued execution per host of a ${FLEET}-host rule, each once, and answers with a count and a link`, async () => {
    const response = await env.webhook(big.triggerId, {});
    expect(response.statusCode, response.body).toBe(202);
    const reply = response.json();
    expect(reply).toMatchObject({ outcome: 'accepted', executionCount: FLEET, executionsUrl: `/api/v1/executions?eventId=${reply.eventId}` });
    expect(reply.executionIds).toHaveLength(REPLY_CAP);

    const rows = await env.store.db.selectFrom('executions').select(['id', 'host_id', 'state']).where('event_id', '=', reply.eventId).execute();
    expect(rows).toHaveLength(FLEET);
    expect(new Set(rows.map((r) => r.host_id)).size).toBe(FLEET);
    expect(rows.every((r) => r.state === 'queued')).toBe(true);
    expect(reply.executionIds.every((id: string) => rows.some((r) => r.id === id))).toBe(true);
    const transitions = await env.store.db.selectFrom('execution_transitions').innerJoin('executions', 'executions.id', 'execution_transitions.execution_id')
      .select((eb) => eb.fn.countAll<number>().as('n')).where('executions.event_id', '=', reply.eventId).executeTakeFirstOrThrow();
    expect(Number(transitions.n)).toBe(FLEET);

    // The link pages through every one of them.
    const seen = new Set<string>();
    let url: string | null = `${reply.executionsUrl}&limit=1000`;
    while (url) {
      const page: { items: Array<{ id: string }>; nextCursor: string | null } = (await env.api('GET', url)).json();
      for (const item of page.items) seen.add(item.id);
      url = page.nextCursor ? `${reply.executionsUrl}&limit=1000&cursor=${page.nextCursor}` : null;
    }
    expect(seen.size).toBe(FLEET);

    // The event, alone or in its rule's list, counts them the same way.
    const event = (await env.api('GET', `/api/v1/events/${reply.eventId}`)).json();
    expect(event).toMatchObject({ executionCount: FLEET, executionIds: reply.executionIds });
    const listed = (await env.api('GET', `/api/v1/rules/${big.id}/events`)).json().items[0];
    expect(listed).toMatchObject({ id: reply.eventId, executionCount: FLEET, executionIds: reply.executionIds });
  }, 120_000);

  it("an oversized fan-out never fails another tenant's event in the same commit", async () => {
    const other = await env.addTenant(`neighbour-${randomUUID().slice(0, 8)}`);
    await env.enrol('neighbour-1', [], other.tenantId);
    const small = await env.createWebhookRule({ target: { type: 'trigger_host' } }, other.token);
    // Its key known to the cache (as a tenant that calls is), so both calls reach the writer together.
    expect((await env.webhook(small.triggerId, { HostName: 'neighbour-1' }, { apiKey: other.apiKey })).statusCode).toBe(202);
    const before = await batches(env);
    // Submitted in the same turn of the event loop: the group commit takes them in one transaction.
    const [large, neighbour] = await Promise.all([
      env.webhook(big.triggerId, {}),
      env.webhook(small.triggerId, { HostName: 'neighbour-1' }, { apiKey: other.apiKey }),
    ]);
    expect(large.statusCode, large.body).toBe(202);
    expect(neighbour.statusCode, neighbour.body).toBe(202);
    expect(neighbour.json()).toMatchObject({ outcome: 'accepted', executionCount: 1 });
    // They shared one commit: one batch more, of two events.
    expect(await batches(env)).toEqual({ count: before.count + 1, sum: before.sum + 2 });
    expect(await countOf(env.store.db, 'executions', 'event_id', large.json().eventId)).toBe(FLEET);
    expect(await countOf(env.store.db, 'executions', 'event_id', neighbour.json().eventId)).toBe(1);
  }, 120_000);

  it('100 simultaneous webhooks on a 100-host rule all get 202', async () => {
    await insertHosts(env.store.db, env.tenant.tenantId, 'hundred', 100, 'hundred');
    const rule = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['hundred'] } });
    const replies = await Promise.all(Array.from({ length: 100 }, () => env.webhook(rule.triggerId, {})));
    expect(replies.map((r) => r.statusCode)).toEqual(Array(100).fill(202));
    for (const reply of replies) expect(reply.json()).toMatchObject({ outcome: 'accepted', executionCount: 100 });
    const stored = await env.store.db.selectFrom('executions').select((eb) => eb.fn.countAll<number>().as('n')).where('rule_id', '=', rule.id).executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(100 * 100);
  }, 120_000);
});

describe.each(testDialects())('the end of a fan-out the size of a fleet on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    await insertHosts(env.store.db, env.tenant.tenantId, 'ending', FLEET, 'ending');
  }, 120_000);
  afterAll(() => env.close());

  it('ends every execution in one ledger commit, and the message counts them and lists only a few failures', async () => {
    // Nothing delivers it: the message itself, as stored for every channel, is what is checked.
    await createChannel(env, { name: 'ops', type: 'webhook', mode: 'all', config: { url: 'http://127.0.0.1:9/hook', secret: 'a-secret-of-sixteen+' } });
    const rule = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['ending'] } });
    const reply = (await env.webhook(rule.triggerId, {})).json();
    const ids = (await env.store.db.selectFrom('executions').select('id').where('event_id', '=', reply.eventId).orderBy('id').execute()).map((r) => r.id);
    expect(ids).toHaveLength(FLEET);

    // One group commit of the ledger: 10,000 transitions and notify_pending rows.
    const { ledger } = env.app.context;
    const [cancelled, expired] = await Promise.all([
      ledger.move(ids.slice(0, 9_000), 'cancelled', 'cancelled by the test', ['queued']),
      ledger.move(ids.slice(9_000), 'expired', 'expired by the test', ['queued']),
    ]);
    expect([cancelled.length, expired.length]).toEqual([9_000, 1_000]);
    const transitions = await env.store.db.selectFrom('execution_transitions').innerJoin('executions', 'executions.id', 'execution_transitions.execution_id')
      .select((eb) => eb.fn.countAll<number>().as('n')).where('executions.event_id', '=', reply.eventId).where('to_state', 'in', ['cancelled', 'expired']).executeTakeFirstOrThrow();
    expect(Number(transitions.n)).toBe(FLEET);

    const message = await waitFor(() => env.store.db.selectFrom('notify_messages').selectAll().where('rule_id', '=', rule.id).where('kind', '=', 'run').executeTakeFirst(), 'the run message');
    const notification = JSON.parse(message.body);
    expect(notification).toMatchObject({ total: FLEET, counts: { cancelled: 9_000, expired: 1_000 }, unlisted: FLEET - 10, severity: 'error' });
    expect(notification.executions).toHaveLength(10);
    expect(notification.executions.every((e: { state: string }) => e.state === 'expired')).toBe(true);
    expect(message.body.length).toBeLessThan(20_000);
    expect(message.title).toBe(`❌ ${rule.body.name} failed on 1000 of ${FLEET} hosts`);
  }, 120_000);
});
