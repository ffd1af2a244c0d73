import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';
import { ActionKinds } from '../src/actions/kinds.js';
import { EventWriter, type OccurrenceResult } from '../src/ingest/writer.js';
import type { Occurrence } from '../src/ingest/occurrence.js';
import { Metrics } from '../src/metrics/registry.js';
import { parseAlertPayload } from '../src/ingress/payload.js';
import { isRefusedData } from '../src/store/faults.js';

/** An object nested `depth` levels deep, the outermost counted. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

/** One call's failure is its own: the others of its group commit, other tenants' included, are stored. */
describe.each(testDialects())('one call never fails another on %s', (dialect) => {
  let env: TestEnv;
  let rule: { id: string; triggerId: string };
  let neighbour: { tenantId: string; apiKey: string; rule: { id: string; triggerId: string } };

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    await env.enrol('web-1');
    rule = await env.createWebhookRule();
    const other = await env.addTenant('neighbour');
    await env.enrol('other-1', [], other.tenantId);
    neighbour = { tenantId: other.tenantId, apiKey: other.apiKey, rule: await env.createWebhookRule({}, other.token) };
  });
  afterAll(() => env.close());

  const eventsOf = async (ruleId: string) => Number((await env.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('rule_id', '=', ruleId).executeTakeFirstOrThrow()).n);

  it('refuses a body nested deeper than 64 levels with a 400 that says the limit, and stores nothing of it', async () => {
    const before = await eventsOf(rule.id);
    const [deep, other] = await Promise.all([
      // Written as text: JSON.stringify of it would overflow this test's stack as it did the service's.
      env.webhook(rule.triggerId, `{"HostName": "web-1", "MetaData": ${'{"a":'.repeat(35_000)}1${'}'.repeat(35_000)}}`),
      env.webhook(neighbour.rule.triggerId, { HostName: 'other-1' }, { apiKey: neighbour.apiKey }),
    ]);
    expectProblem(deep, 400, 'PITCREW_ERR_VALIDATION');
    expect(deep.json().detail).toMatch(/more than 64 levels deep/);
    expect(other.statusCode, other.body).toBe(202);
    expect(await eventsOf(rule.id)).toBe(before);
    // 64 levels, the whole body counted, is still a body.
    const deepest = await env.webhook(rule.triggerId, { HostName: 'web-1', MetaData: nested(63) });
    expect(deepest.statusCode, deepest.body).toBe(202);
  });

  it('refuses a host name that cannot name a host (a NUL, or longer than 255 characters) with a 400', async () => {
    const nul = await env.webhook(rule.triggerId, { HostName: 'web\u00001' });
    expectProblem(nul, 400, 'PITCREW_ERR_VALIDATION');
    expect(nul.json().detail).toMatch(/HostName must not contain a NUL character/);
    const long = await env.webhook(rule.triggerId, { hostname: 'h'.repeat(256) }, { older: true });
    expectProblem(long, 400, 'PITCREW_ERR_VALIDATION');
    expect(long.json().detail).toMatch(/hostname is 256 characters long; a host name has at most 255/);
    expect((await env.webhook(rule.triggerId, { HostName: 'h'.repeat(255) })).statusCode).toBe(202);
  });

  async function submission(tenantId: string, triggerId: string, raw: Record<string, unknown>): Promise<Occurrence> {
    const key = await env.store.db.selectFrom('api_keys').select('id').where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    const parsed = parseAlertPayload({});
    if (!parsed.ok) throw new Error('unreachable');
    return { credential: { kind: 'api_key', keyId: key.id }, tenantId, rule: { by: 'trigger', triggerId }, source: 'webhook', receivedAt: Date.now(), sourceIp: '127.0.0.1', payload: { ...parsed.payload, raw, hostName: raw.HostName as string | undefined } };
  }

  /** Submitted in one turn of the event loop, so the group commit takes them in one transaction. */
  function together(submissions: Occurrence[]): Promise<PromiseSettledResult<OccurrenceResult>[]> {
    return Promise.allSettled(submissions.map((s) => env.app.context.writer.submit(s)));
  }

  it('a payload that cannot be serialised fails its own call only, not the batch it shared', async () => {
    // What ingress now refuses, given to the writer directly: any error building one event's rows.
    const [deep, other] = await together([
      await submission(env.tenant.tenantId, rule.triggerId, { HostName: 'web-1', MetaData: nested(20_000) }),
      await submission(neighbour.tenantId, neighbour.rule.triggerId, { HostName: 'other-1' }),
    ]);
    expect(deep).toMatchObject({ status: 'fulfilled', value: { status: 'unstorable', error: expect.any(RangeError) } });
    expect(other).toMatchObject({ status: 'fulfilled', value: { status: 'stored', outcome: 'accepted', executionIds: [expect.any(String)] } });
    const stored = (other as PromiseFulfilledResult<Extract<OccurrenceResult, { status: 'stored' }>>).value;
    expect(await env.store.db.selectFrom('executions').select('id').where('event_id', '=', stored.eventId).execute()).toHaveLength(1);
  });

  it('values the database refuses fail their own call only', async () => {
    // A NUL in text: PostgreSQL refuses it (SQLSTATE 22021) in the batch's reads and writes; SQLite stores it.
    const [refused, other] = await together([
      await submission(env.tenant.tenantId, rule.triggerId, { HostName: 'web\u00001' }),
      await submission(neighbour.tenantId, neighbour.rule.triggerId, { HostName: 'other-1' }),
    ]);
    expect(other).toMatchObject({ status: 'fulfilled', value: { status: 'stored', outcome: 'accepted' } });
    if (dialect === 'postgres') {
      expect(refused?.status).toBe('rejected');
      expect(isRefusedData((refused as PromiseRejectedResult).reason)).toBe(true);
    } else {
      expect(refused).toMatchObject({ status: 'fulfilled', value: { status: 'stored' } });
    }
  });

  it("a failure after the commit (telling agents) never turns stored events into errors", async () => {
    const errors: unknown[] = [];
    const failing = new Error('a session could not be told');
    const writer = new EventWriter(env.store.db, env.store.durability, new Metrics(), {
      dialect, maxBatch: 256, maxQueued: 1000, executionExpirySeconds: 3600, kinds: new ActionKinds(),
      onQueued: () => {
        throw failing;
      },
      onAfterCommitError: (error) => errors.push(error),
    });
    const calls = [
      await submission(env.tenant.tenantId, rule.triggerId, { HostName: 'web-1' }),
      await submission(neighbour.tenantId, neighbour.rule.triggerId, { HostName: 'other-1' }),
    ];
    const results = await Promise.allSettled(calls.map((call) => writer.submit(call)));
    expect(results).toMatchObject([
      { status: 'fulfilled', value: { status: 'stored', outcome: 'accepted' } },
      { status: 'fulfilled', value: { status: 'stored', outcome: 'accepted' } },
    ]);
    expect(errors).toEqual([failing]);
    await writer.drain();
  });
});
