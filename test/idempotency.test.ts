import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../src/store/ids.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

const DAY_MS = 24 * 3600 * 1000;

describe.each(testDialects())('idempotent webhook retries on %s', (dialect) => {
  let env: TestEnv;
  let rule: { id: string; triggerId: string };
  let now = Date.now();

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => now });
    rule = await env.createWebhookRule();
    await env.enrol('idem-1');
  });
  afterAll(() => env.close());

  const fire = (body: unknown, key?: string, ruleOf = rule) => env.webhook(ruleOf.triggerId, body, { headers: key === undefined ? {} : { 'idempotency-key': key } });
  const count = async (table: 'events' | 'executions', ruleId = rule.id) =>
    Number((await env.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('rule_id', '=', ruleId).executeTakeFirstOrThrow()).n);

  it('a retry with the same key returns the original event and runs nothing again', async () => {
    const body = { HostName: 'idem-1', 'bad-name': 'x' };
    const first = await fire(body, 'alert-1');
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ outcome: 'accepted', replayed: false, executionIds: [expect.any(String)] });
    const [events, executions] = [await count('events'), await count('executions')];

    const retry = await fire(body, 'alert-1');
    expect(retry.statusCode).toBe(202);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.json()).toEqual({ ...first.json(), replayed: true });
    expect([await count('events'), await count('executions')]).toEqual([events, executions]);

    // The same key quoted as a structured-field string is the same key.
    expect((await fire(body, '"alert-1"')).json().eventId).toBe(first.json().eventId);
    // Without a key, or with another one, a call is a new alarm.
    expect((await fire(body)).json().eventId).not.toBe(first.json().eventId);
    expect((await fire(body, 'alert-2')).json().eventId).not.toBe(first.json().eventId);
  });

  it('concurrent identical retries make one event', async () => {
    const before = await count('events');
    const replies = await Promise.all(Array.from({ length: 50 }, () => fire({ HostName: 'idem-1' }, 'storm-key')));
    expect(new Set(replies.map((r) => r.json().eventId)).size).toBe(1);
    expect(replies.filter((r) => r.json().replayed === false)).toHaveLength(1);
    expect(await count('events')).toBe(before + 1);
  });

  it('repeats the original outcome, whatever changed since', async () => {
    const off = await env.createWebhookRule({ enabled: false });
    const original = (await fire({ HostName: 'idem-1' }, 'while-off', off)).json();
    expect(original.outcome).toBe('rule_off');
    await env.api('PATCH', `/api/v1/rules/${off.id}`, { enabled: true });
    expect((await fire({ HostName: 'idem-1' }, 'while-off', off)).json()).toEqual({ ...original, replayed: true });
    expect(await count('executions', off.id)).toBe(0);
  });

  it('keys belong to one rule', async () => {
    const other = await env.createWebhookRule();
    const a = (await fire({}, 'shared-key')).json();
    const b = (await fire({}, 'shared-key', other)).json();
    expect(b.replayed).toBe(false);
    expect(b.eventId).not.toBe(a.eventId);
  });

  it('422 when a key is reused for a different body; nothing is stored', async () => {
    await fire({ HostName: 'idem-1' }, 'reused');
    const before = await count('events');
    const problem = expectProblem(await fire({ HostName: 'other' }, 'reused'), 422, 'PITCREW_ERR_IDEMPOTENCY_KEY_REUSED');
    expect(problem.detail).toMatch(/use a new key for a new alarm/);
    expect(await count('events')).toBe(before);
  });

  it.each([['empty', ''], ['too long', 'k'.repeat(256)], ['not printable ASCII', 'clé-1']])('400 for a key that is %s', async (_case, key) => {
    const problem = expectProblem(await fire({}, key), 400, 'PITCREW_ERR_VALIDATION');
    expect(problem.errors).toEqual([{ path: '/headers/idempotency-key', message: expect.stringMatching(/1 to 255 printable ASCII/) }]);
  });

  it('forgets a key after 24 hours: the call is a new alarm again', async () => {
    const first = (await fire({ HostName: 'idem-1' }, 'day-old')).json();
    now += DAY_MS - 1000;
    expect((await fire({ HostName: 'idem-1' }, 'day-old')).json().eventId).toBe(first.eventId);
    now += 2000;
    const later = (await fire({ HostName: 'idem-1' }, 'day-old')).json();
    expect(later).toMatchObject({ replayed: false, outcome: 'accepted' });
    expect(later.eventId).not.toBe(first.eventId);
    // ...and the new event is the key's original from now on.
    expect((await fire({ HostName: 'idem-1' }, 'day-old')).json().eventId).toBe(later.eventId);
  });

  it("purges a key once its event is past the 24 hours and the purge's margin, and keeps a younger one", async () => {
    // Event ids are UUIDv7 of the receipt, never behind the last id this process made (store/ids.ts):
    // the other database's run of this file moved the clock ahead, so this one starts after it.
    now = Math.max(now, parseInt(newId(0).replace(/-/g, '').slice(0, 12), 16) + 1);
    const keyRow = (key: string) => env.store.db.selectFrom('idempotency_keys').select(['key', 'event_id']).where('rule_id', '=', rule.id).where('key', '=', key).executeTakeFirst();
    const old = (await fire({ HostName: 'idem-1' }, 'purged-key')).json();
    now += 2 * 3600_000;
    const young = (await fire({ HostName: 'idem-1' }, 'kept-key')).json();
    expect((await keyRow('purged-key'))?.event_id).toBe(old.eventId);
    // The first event is now 26.5 h old (past the hour's margin), the second 24.5 h (past 24 h, within the margin).
    now += DAY_MS + 1800_000;
    await vi.waitFor(async () => expect(await keyRow('purged-key')).toBeUndefined(), { timeout: 10_000, interval: 100 });
    expect((await keyRow('kept-key'))?.event_id).toBe(young.eventId);
    // Kept, it answers nothing: the call past 24 h is a new alarm.
    expect((await fire({ HostName: 'idem-1' }, 'kept-key')).json()).toMatchObject({ replayed: false });
  });

  it('shows the key on the event', async () => {
    const reply = (await fire({}, 'visible-key')).json();
    expect((await env.api('GET', `/api/v1/events/${reply.eventId}`)).json().idempotencyKey).toBe('visible-key');
  });
});

describe.skipIf(!testDialects().includes('postgres'))('idempotent retries across two service nodes on one PostgreSQL', () => {
  let a: TestEnv;
  let b: TestEnv;

  beforeAll(async () => {
    a = await startTestEnv('postgres');
    b = await startTestEnv('postgres', { database: a.database });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('retries split between the nodes make one event', async () => {
    const rule = await a.createWebhookRule();
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).webhook(rule.triggerId, { HostName: 'x' }, { headers: { 'idempotency-key': 'both-nodes' } })));
    expect(replies.every((r) => r.statusCode === 202)).toBe(true);
    expect(new Set(replies.map((r) => r.json().eventId)).size).toBe(1);
    const stored = await a.store.db.selectFrom('events').select('id').where('rule_id', '=', rule.id).execute();
    expect(stored).toHaveLength(1);
  });
});
