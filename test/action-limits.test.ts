import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import type { Database } from '../src/store/schema.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

const HOSTS = ['lim-1', 'lim-2', 'lim-3', 'lim-4', 'lim-5'];

async function executionsPerHost(db: Kysely<Database>, ruleId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('executions').select((eb) => ['hostname', eb.fn.countAll<number>().as('n')]).where('rule_id', '=', ruleId).groupBy('hostname').execute();
  return Object.fromEntries(rows.map((r) => [r.hostname, Number(r.n)]));
}

async function outcomes(db: Kysely<Database>, ruleId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('events').select((eb) => ['outcome', eb.fn.countAll<number>().as('n')]).where('rule_id', '=', ruleId).groupBy('outcome').execute();
  return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
}

describe.each(testDialects())('action limits on %s', (dialect) => {
  let env: TestEnv;
  let now = Date.now();

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => now });
    for (const hostname of HOSTS) await env.enrol(hostname, ['lim']);
  });
  afterAll(() => env.close());

  const limitedRule = (actionLimit: Record<string, unknown>, target: Record<string, unknown> = { type: 'trigger_host' }) => env.createWebhookRule({ actionLimit, target });

  it('holds exactly under 1,000 simultaneous triggers: max per host, escalated once per host', async () => {
    const rule = await limitedRule({ max: 3, windowSeconds: 3600 });
    const replies = await Promise.all(Array.from({ length: 1000 }, (_, i) => env.webhook(rule.triggerId, { HostName: HOSTS[i % HOSTS.length] })));
    expect(replies.every((r) => r.statusCode === 202)).toBe(true);

    expect(await executionsPerHost(env.store.db, rule.id)).toEqual(Object.fromEntries(HOSTS.map((h) => [h, 3])));
    expect(await outcomes(env.store.db, rule.id)).toEqual({ accepted: 15, limited: 985 });
    const limited = replies.map((r) => r.json()).find((r) => r.outcome === 'limited');
    expect(limited.executionIds).toEqual([]);
    expect(limited.reason).toMatch(/action limit reached on lim-\d: 3 executions within 3600 s already; escalated to a human/);

    const escalations = (await env.api('GET', `/api/v1/rules/${rule.id}/escalations?limit=100`)).json().items;
    expect(escalations).toHaveLength(HOSTS.length);
    expect(escalations.map((e: { hostname: string }) => e.hostname).sort()).toEqual(HOSTS);
    // pending until the notifier's loop has handed it on (notify/escalation-relay.ts), then notified.
    for (const e of escalations) expect(e).toMatchObject({ ruleId: rule.id, state: expect.stringMatching(/^(pending|notified)$/), limitedEvents: 197, reason: expect.stringMatching(/reached its action limit on lim-\d \(3 of 3 executions within 3600 s\)/) });
  });

  it('shows the usage per host and the open escalations on the rule, and in the tenant’s list', async () => {
    const rule = await limitedRule({ max: 2, windowSeconds: 600 });
    for (const hostname of ['lim-1', 'lim-1', 'lim-1', 'lim-2']) await env.webhook(rule.triggerId, { HostName: hostname });
    const usage = (await env.api('GET', `/api/v1/rules/${rule.id}/limits`)).json();
    expect(usage).toMatchObject({ ruleId: rule.id, actionLimit: { max: 2, windowSeconds: 600, onLimit: 'escalate' } });
    expect(usage.hosts).toEqual([
      { hostId: expect.any(String), hostname: 'lim-1', used: 2, max: 2, remaining: 0, limited: true, nextSlotAt: new Date(now + 600_000).toISOString(), escalation: expect.objectContaining({ limitedEvents: 1, state: expect.stringMatching(/^(pending|notified)$/) }) },
      { hostId: expect.any(String), hostname: 'lim-2', used: 1, max: 2, remaining: 1, limited: false, nextSlotAt: null, escalation: null },
    ]);
    const escalation = usage.hosts[0].escalation;
    // The notifier's relay moves an escalation pending → notified at any moment: compare what does not change.
    const stable = { id: escalation.id, ruleId: rule.id, hostname: 'lim-1', limitedEvents: 1 };
    const all = (await env.api('GET', `/api/v1/escalations?ruleId=${rule.id}`)).json().items;
    expect(all).toEqual([expect.objectContaining(stable)]);
    expect((await env.api('GET', `/api/v1/escalations/${escalation.id}`)).json()).toMatchObject(stable);
    // Whatever its state, it is listed under that state, and each list holds only its state.
    const byState = async (state: string) => (await env.api('GET', `/api/v1/escalations?hostname=lim-1&state=${state}`)).json().items as Array<{ id: string; state: string }>;
    const pending = await byState('pending');
    const notified = await byState('notified');
    expect([...pending, ...notified].map((e) => e.id)).toContain(escalation.id);
    expect(pending.every((e) => e.state === 'pending') && notified.every((e) => e.state === 'notified')).toBe(true);
    // Another tenant sees none of it.
    const other = await env.addTenant(`limits-other-${dialect}`);
    expect((await env.api('GET', '/api/v1/escalations', undefined, other.token)).json().items).toEqual([]);
    expectProblem(await env.api('GET', `/api/v1/escalations/${escalation.id}`, undefined, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('GET', `/api/v1/rules/${rule.id}/limits`, undefined, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
  });

  it('is a sliding window: a slot frees when the oldest execution leaves it; an escalation window lasts windowSeconds', async () => {
    const rule = await limitedRule({ max: 1, windowSeconds: 60 });
    const start = now;
    const fireAt = async (offsetMs: number) => {
      now = start + offsetMs;
      return (await env.webhook(rule.triggerId, { HostName: 'lim-3' })).json().outcome;
    };
    expect(await fireAt(0)).toBe('accepted');
    expect(await fireAt(59_000)).toBe('limited'); // opens an escalation window until 119 s
    expect(await fireAt(60_001)).toBe('accepted'); // the first execution left the window
    expect(await fireAt(60_500)).toBe('limited'); // joins the open escalation
    expect(await fireAt(119_500)).toBe('limited'); // a new escalation window
    const escalations = (await env.api('GET', `/api/v1/rules/${rule.id}/escalations`)).json().items;
    expect(escalations.map((e: { limitedEvents: number; windowStart: string }) => [e.windowStart, e.limitedEvents])).toEqual([
      [new Date(start + 119_500).toISOString(), 1],
      [new Date(start + 59_000).toISOString(), 2],
    ]);
  });

  it('onLimit drop records the event as limited and escalates nothing', async () => {
    const rule = await limitedRule({ max: 1, windowSeconds: 3600, onLimit: 'drop' });
    await env.webhook(rule.triggerId, { HostName: 'lim-4' });
    const reply = (await env.webhook(rule.triggerId, { HostName: 'lim-4' })).json();
    expect(reply).toMatchObject({ outcome: 'limited', executionIds: [], reason: expect.stringMatching(/dropped \(onLimit: drop\)/) });
    expect((await env.api('GET', `/api/v1/rules/${rule.id}/escalations`)).json().items).toEqual([]);
  });

  it('counts per host for tag targets: hosts at the limit are escalated while the others run', async () => {
    const rule = await limitedRule({ max: 1, windowSeconds: 3600 }, { type: 'specific_tags', tags: ['lim'] });
    const first = (await env.webhook(rule.triggerId, {})).json();
    expect(first.executionIds).toHaveLength(HOSTS.length);
    const lonely = await env.enrol('lim-6', ['lim']);
    const second = (await env.webhook(rule.triggerId, {})).json();
    expect(second).toMatchObject({ outcome: 'accepted', reason: expect.stringMatching(/limit reached on lim-1, lim-2, lim-3, lim-4, lim-5:.*the other hosts run/) });
    const ran = await env.store.db.selectFrom('executions').select('host_id').where('event_id', '=', second.eventId).execute();
    expect(ran.map((r) => r.host_id)).toEqual([lonely.hostId]);
    expect(await executionsPerHost(env.store.db, rule.id)).toEqual({ 'lim-1': 1, 'lim-2': 1, 'lim-3': 1, 'lim-4': 1, 'lim-5': 1, 'lim-6': 1 });
  });
});

// Two service nodes share one PostgreSQL and take the same storm at once: each one's group commits
// must see what the other committed, or the two together would run twice the limit.
describe.skipIf(!testDialects().includes('postgres'))('an action limit across two service nodes on one PostgreSQL', () => {
  let a: TestEnv;
  let b: TestEnv;

  beforeAll(async () => {
    a = await startTestEnv('postgres');
    b = await startTestEnv('postgres', { database: a.database });
    for (const hostname of HOSTS) await a.enrol(hostname);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('never runs more than max per host, however the storm is split between the nodes', async () => {
    const rule = await a.createWebhookRule({ actionLimit: { max: 4, windowSeconds: 3600 } });
    const storm = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? a : b).webhook(rule.triggerId, { HostName: HOSTS[i % HOSTS.length] }));
    const replies = await Promise.all(storm);
    expect(replies.every((r) => r.statusCode === 202)).toBe(true);
    expect(await executionsPerHost(a.store.db, rule.id)).toEqual(Object.fromEntries(HOSTS.map((h) => [h, 4])));
    const escalations = await a.store.db.selectFrom('escalations').select(['hostname', 'limited_events']).where('rule_id', '=', rule.id).execute();
    expect(escalations.map((e) => e.hostname).sort()).toEqual(HOSTS);
    expect(escalations.reduce((sum, e) => sum + e.limited_events, 0)).toBe(1000 - 4 * HOSTS.length);
  });
});
