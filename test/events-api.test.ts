import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

interface EventView { id: string; ruleId: string; outcome: string; reason: string | null; receivedAt: string; payload: Record<string, unknown>; env: Record<string, string> }
interface Page { items: EventView[]; nextCursor: string | null }

const UNKNOWN = '7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c';


describe.each(testDialects())('events API on %s', (dialect) => {
  let env: TestEnv;
  let rule: { id: string; triggerId: string };
  /** Event ids in the order they were fired, with the outcome each got. */
  const fired: Array<{ id: string; outcome: string }> = [];

  async function fire(body: Record<string, unknown>): Promise<void> {
    const response = await env.webhook(rule.triggerId, body);
    expect(response.statusCode, response.body).toBe(202);
    fired.push({ id: response.json().eventId, outcome: response.json().outcome });
  }
  const setEnabled = async (enabled: boolean) => expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { enabled })).statusCode).toBe(200);
  const list = async (query = '', ruleId = rule.id): Promise<Page> => {
    const response = await env.api('GET', `/api/v1/rules/${ruleId}/events${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  /** Follows nextCursor to the end, from `cursor` on; returns every page. */
  async function allPages(query: string, from: string | null = null): Promise<Page[]> {
    const pages: Page[] = [];
    let cursor = from;
    do {
      const page = await list(`?${query}${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor);
    return pages;
  }
  const newestFirst = (outcome?: string) => fired.filter((e) => !outcome || e.outcome === outcome).map((e) => e.id).reverse();

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    rule = await env.createWebhookRule();
    for (let i = 0; i <= 8; i += 1) await env.enrol(`web-${i}`);
    // Another rule's events must never show up in this rule's list.
    const other = await env.createWebhookRule();
    await env.webhook(other.triggerId, { HostName: 'elsewhere' });

    for (let i = 0; i < 4; i += 1) await fire({ HostName: `web-${i}`, MetaData: { Seq: i } });
    await fire({ HostName: 'web-4', Act: false });
    await fire({ HostName: 'web-5', Act: false });
    await setEnabled(false);
    await fire({ HostName: 'web-6' });
    await fire({ HostName: 'web-7', Act: false });
    await setEnabled(true);
    await fire({ HostName: 'web-8' });
    expect(fired.map((e) => e.outcome)).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'dry_run', 'dry_run', 'rule_off', 'rule_off', 'accepted']);
  });
  afterAll(() => env.close());

  it('lists a rule’s events newest first, with what was received and decided', async () => {
    const page = await list();
    expect(page.nextCursor).toBeNull();
    expect(page.items.map((e) => e.id)).toEqual(newestFirst());
    const times = page.items.map((e) => Date.parse(e.receivedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const oldest = page.items.at(-1)!;
    expect(oldest).toMatchObject({ ruleId: rule.id, outcome: 'accepted', reason: null, payload: { HostName: 'web-0', MetaData: { Seq: 0 } }, env: { HostName: 'web-0', Seq: '0' }, skippedEnv: [] });
    expect(page.items[0]).toMatchObject({ outcome: 'accepted', payload: { HostName: 'web-8' } });
  });

  it.each([1, 2, 4, 8, 9, 50])('pages through with limit=%i, with no repeats or gaps', async (limit) => {
    const pages = await allPages(`limit=${limit}`);
    expect(pages.map((p) => p.items.length).slice(0, -1).every((n) => n === limit)).toBe(true);
    expect(pages.at(-1)!.items.length).toBeGreaterThan(0);
    expect(pages.length).toBe(Math.ceil(fired.length / limit));
    expect(pages.flatMap((p) => p.items.map((e) => e.id))).toEqual(newestFirst());
  });

  it('does not let events stored after the first page shift the pages that follow', async () => {
    const first = await list('?limit=3');
    await fire({ HostName: 'late-arrival' });
    const rest = await allPages('limit=3', first.nextCursor);
    // The new event is newer than the cursor, so it belongs before the first page, not inside later ones.
    const seen = [...first.items, ...rest.flatMap((p) => p.items)].map((e) => e.id);
    expect(seen).toEqual(newestFirst().slice(1));
    expect((await list('?limit=1')).items[0]!.id).toBe(fired.at(-1)!.id);
  });

  it.each(['accepted', 'rule_off', 'dry_run'])('filters by outcome=%s, newest first, across pages', async (outcome) => {
    expect((await list(`?outcome=${outcome}`)).items.map((e) => e.id)).toEqual(newestFirst(outcome));
    const pages = await allPages(`outcome=${outcome}&limit=1`);
    expect(pages.flatMap((p) => p.items.map((e) => e.id))).toEqual(newestFirst(outcome));
    for (const page of pages) for (const event of page.items) expect(event.outcome).toBe(outcome);
  });

  it('gives an empty list for an outcome the rule never had, and for a rule with no events', async () => {
    expect(await list('?outcome=flapping')).toEqual({ items: [], nextCursor: null });
    const quiet = await env.createWebhookRule();
    expect(await list('', quiet.id)).toEqual({ items: [], nextCursor: null });
  });

  it('refuses an unknown outcome, a bad limit and a bad cursor', async () => {
    expectProblem(await env.api('GET', `/api/v1/rules/${rule.id}/events?outcome=exploded`), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('GET', `/api/v1/rules/${rule.id}/events?limit=0`), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('GET', `/api/v1/rules/${rule.id}/events?cursor=abc`), 400, 'PITCREW_ERR_BAD_CURSOR');
  });

  it('404 for the events of an unknown rule, with or without filters', async () => {
    expectProblem(await env.api('GET', `/api/v1/rules/${UNKNOWN}/events`), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('GET', `/api/v1/rules/${UNKNOWN}/events?outcome=accepted&limit=5`), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('GET', '/api/v1/rules/not-a-uuid/events'), 400, 'PITCREW_ERR_VALIDATION');
  });

  it('GET /events/{id} returns the event as listed; unknown → 404, malformed → 400', async () => {
    const [newest] = (await list('?limit=1')).items;
    const one = await env.api('GET', `/api/v1/events/${newest!.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(newest);
    expectProblem(await env.api('GET', `/api/v1/events/${UNKNOWN}`), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('GET', `/api/v1/events/${rule.id}`), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('GET', '/api/v1/events/not-a-uuid'), 400, 'PITCREW_ERR_VALIDATION');
  });
});
