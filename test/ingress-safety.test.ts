import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../src/tenants/bootstrap.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

async function eventsOf(env: TestEnv, ruleId: string): Promise<number> {
  const row = await env.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('rule_id', '=', ruleId).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe.each(testDialects())('per-tenant throttling on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    // Held 429s as in production (PITCREW_THROTTLE_DELAY_MS), shorter.
    env = await startTestEnv(dialect, { throttleDelayMs: 300 });
  });
  afterAll(() => env.close());

  it('a tenant flooding is refused with 429 while another tenant gets every request accepted', async () => {
    const flooder = await env.addTenant(`flooder-${dialect}`);
    const quiet = await env.addTenant(`quiet-${dialect}`);
    expect((await env.api('PATCH', '/api/v1/tenant', { throttle: { ratePerSecond: 1, burst: 20 } }, flooder.token)).statusCode).toBe(200);
    const floodRule = await env.createWebhookRule({}, flooder.token);
    const quietRule = await env.createWebhookRule({}, quiet.token);

    // Interleaved: 2,000 calls of the flooder and 200 of the other tenant, all in flight at once.
    const calls = Array.from({ length: 2200 }, (_, i) => (i % 11 === 0 ? { tenant: quiet, rule: quietRule } : { tenant: flooder, rule: floodRule }));
    const replies = await Promise.all(calls.map(({ tenant, rule }) => env.webhook(rule.triggerId, { HostName: 'x' }, { apiKey: tenant.apiKey }).then((reply) => ({ tenant, reply }))));

    const of = (tenant: BootstrapResult) => replies.filter((r) => r.tenant === tenant).map((r) => r.reply);
    expect(of(quiet)).toHaveLength(200);
    expect(of(quiet).every((r) => r.statusCode === 202)).toBe(true);
    const accepted = of(flooder).filter((r) => r.statusCode === 202).length;
    const throttled = of(flooder).filter((r) => r.statusCode === 429);
    // The burst, plus what one token a second refilled while the flood lasted.
    expect(accepted).toBeGreaterThanOrEqual(20);
    expect(accepted).toBeLessThan(40);
    expect(accepted + throttled.length).toBe(2000);
    const problem = expectProblem(throttled[0]!, 429, 'PITCREW_ERR_THROTTLED');
    expect(problem.detail).toMatch(/retry after \d+ s or raise the throttle/);
    expect(Number(throttled[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Each attempt over the throttle is counted, and none stored an event.
    expect(await eventsOf(env, floodRule.id)).toBe(accepted);
    expect(await eventsOf(env, quietRule.id)).toBe(200);
    const metrics = await env.scrape();
    expect(metrics).toContain(`pitcrew_ingress_throttled_total{tenant="${flooder.tenantId}"} ${throttled.length}`);
    expect(metrics).not.toContain(`pitcrew_ingress_throttled_total{tenant="${quiet.tenantId}"}`);
  });
});

/** A real HTTP call from a chosen local address family, so the server sees a real peer address. */
function post(url: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.end('{"HostName":"web-1"}');
  });
}

describe.each(testDialects())('IP allowlist over real IPv4 and IPv6 connections on %s', (dialect) => {
  let env: TestEnv;
  let rule: { triggerId: string };
  let v4: string;
  let v6: string;

  beforeAll(async () => {
    // '::' takes both families on one port: IPv4 peers show as ::ffff:127.0.0.1.
    env = await startTestEnv(dialect, { listen: true, listenHost: '::' });
    rule = await env.createWebhookRule();
    const port = new URL(env.listening!.httpUrl).port;
    const path = `/api/v1/trigger/channel/webhook/${env.tenant.apiKey}/${rule.triggerId}`;
    v4 = `http://127.0.0.1:${port}${path}`;
    v6 = `http://[::1]:${port}${path}`;
  });
  afterAll(() => env.close());

  const allow = async (ipAllowlist: string[]) => expect((await env.api('PATCH', '/api/v1/tenant', { ipAllowlist })).statusCode).toBe(200);

  it.each<[string, string[], number, number]>([
    ['empty: every address', [], 202, 202],
    ['an IPv4 CIDR', ['127.0.0.0/8'], 202, 403],
    ['an IPv6 address', ['::1'], 403, 202],
    ['an IPv6 CIDR and an IPv4 address', ['::/64', '127.0.0.1'], 202, 202],
    ['neither', ['203.0.113.0/24', '2001:db8::/32'], 403, 403],
  ])('%s → IPv4 %i, IPv6 %i', async (_case, list, fromV4, fromV6) => {
    await allow(list);
    const [a, b] = [await post(v4, '127.0.0.1'), await post(v6, '::1')];
    expect([a.status, b.status]).toEqual([fromV4, fromV6]);
    if (a.status === 403) expect(JSON.parse(a.body)).toMatchObject({ code: 'PITCREW_ERR_IP_NOT_ALLOWED', detail: expect.stringMatching(/calls from ::ffff:127\.0\.0\.1 are not on this tenant's IP allowlist/) });
    if (b.status === 202) expect((await env.api('GET', `/api/v1/events/${JSON.parse(b.body).eventId}`)).json().sourceIp).toBe('::1');
  });

  it('ignores X-Forwarded-For without a trusted proxy configured', async () => {
    await allow(['2001:db8::/32']);
    expect((await post(v4, '127.0.0.1', { 'x-forwarded-for': '2001:db8::7' })).status).toBe(403);
  });
});

describe.each(testDialects())('trusted proxy (PITCREW_TRUST_PROXY) on %s', (dialect) => {
  let env: TestEnv;
  let rule: { triggerId: string };

  beforeAll(async () => {
    env = await startTestEnv(dialect, { trustProxy: ['127.0.0.1', '::1'] });
    rule = await env.createWebhookRule();
    expect((await env.api('PATCH', '/api/v1/tenant', { ipAllowlist: ['2001:db8::/32', '198.51.100.0/24'] })).statusCode).toBe(200);
  });
  afterAll(() => env.close());

  const call = (ip: string, forwardedFor?: string) => env.webhook(rule.triggerId, {}, { ip, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });

  it('takes the client address from X-Forwarded-For sent by a trusted proxy, and records it', async () => {
    const reply = await call('127.0.0.1', '2001:db8::7');
    expect(reply.statusCode).toBe(202);
    expect((await env.api('GET', `/api/v1/events/${reply.json().eventId}`)).json().sourceIp).toBe('2001:db8::7');
    expect((await call('::1', '203.0.113.9, 198.51.100.4')).statusCode).toBe(202);
    expectProblem(await call('127.0.0.1', '203.0.113.9'), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const problem = expectProblem(await call('203.0.113.50', '2001:db8::7'), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
    expect(problem.detail).toMatch(/calls from 203\.0\.113\.50/);
  });

  it('checks the allowlist before the throttle: refused addresses do not use up the bucket', async () => {
    const t = await env.addTenant(`bucket-${dialect}`);
    const r = await env.createWebhookRule({}, t.token);
    const settings = { ipAllowlist: ['198.51.100.0/24'], throttle: { ratePerSecond: 1, burst: 2 } };
    expect((await env.api('PATCH', '/api/v1/tenant', settings, t.token)).statusCode).toBe(200);
    const from = (client: string) => env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '127.0.0.1', headers: { 'x-forwarded-for': client } });

    for (let i = 0; i < 10; i += 1) expectProblem(await from('203.0.113.9'), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
    expect([(await from('198.51.100.4')).statusCode, (await from('198.51.100.4')).statusCode]).toEqual([202, 202]);
    expectProblem(await from('198.51.100.4'), 429, 'PITCREW_ERR_THROTTLED');
  });
});

describe.each(testDialects())('trusted proxy as a hop count (PITCREW_TRUST_PROXY=1 or 2) on %s', (dialect) => {
  // Each X-Forwarded-For proxy appends the address it got the call from, so the right-most entries
  // are the ones the trusted proxies wrote; anything to their left the client may have made up.
  const envs = new Map<number, { env: TestEnv; triggerId: string }>();

  beforeAll(async () => {
    for (const hops of [1, 2]) {
      const env = await startTestEnv(dialect, { trustProxy: hops });
      const rule = await env.createWebhookRule();
      expect((await env.api('PATCH', '/api/v1/tenant', { ipAllowlist: ['198.51.100.0/24'] })).statusCode).toBe(200);
      envs.set(hops, { env, triggerId: rule.triggerId });
    }
  });
  afterAll(() => Promise.all([...envs.values()].map(({ env }) => env.close())));

  const call = (hops: number, forwardedFor?: string) => {
    const { env, triggerId } = envs.get(hops)!;
    return env.webhook(triggerId, {}, { ip: '127.0.0.1', headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });
  };
  const sourceIp = async (hops: number, eventId: string) => (await envs.get(hops)!.env.api('GET', `/api/v1/events/${eventId}`)).json().sourceIp;

  it('1 hop: the right-most X-Forwarded-For address is the client; a spoofed left-most one gets no call through', async () => {
    const spoofed = expectProblem(await call(1, '198.51.100.4, 203.0.113.9'), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
    expect(spoofed.detail).toMatch(/^calls from 203\.0\.113\.9 are not/);

    const real = await call(1, '203.0.113.9, 198.51.100.4');
    expect(real.statusCode, real.body).toBe(202);
    expect(await sourceIp(1, real.json().eventId)).toBe('198.51.100.4');
    expect((await call(1, '198.51.100.4')).statusCode).toBe(202);
    // Without the header, the TCP peer is the client.
    expect(expectProblem(await call(1), 403, 'PITCREW_ERR_IP_NOT_ALLOWED').detail).toMatch(/^calls from 127\.0\.0\.1 are not/);
  });

  it('2 hops: the second address from the right is the client, whatever the client put before it', async () => {
    // The outer proxy (the TCP peer) got the call from the inner proxy 10.0.0.2, which got it from the client.
    const real = await call(2, '203.0.113.9, 198.51.100.4, 10.0.0.2');
    expect(real.statusCode, real.body).toBe(202);
    expect(await sourceIp(2, real.json().eventId)).toBe('198.51.100.4');
    expect((await call(2, '198.51.100.4, 10.0.0.2')).statusCode).toBe(202);

    const spoofed = expectProblem(await call(2, '198.51.100.4, 203.0.113.9, 10.0.0.2'), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
    expect(spoofed.detail).toMatch(/^calls from 203\.0\.113\.9 are not/);
    // Fewer entries than hops: the left-most one is taken.
    expect(expectProblem(await call(2, '10.0.0.2'), 403, 'PITCREW_ERR_IP_NOT_ALLOWED').detail).toMatch(/^calls from 10\.0\.0\.2 are not/);
  });
});
