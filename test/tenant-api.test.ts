import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { hashSecret } from '../src/identity/secrets.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import type { BootstrapResult } from '../src/tenants/bootstrap.js';
import { expectProblem } from './support/problems.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;


interface KeyView { id: string; name: string; scopes: string[]; hint: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null; replacedBy: string | null }

describe.each(testDialects())('tenant API on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv(dialect);
  });
  afterAll(() => env.close());

  let counter = 0;
  const freshTenant = () => env.addTenant(`tenant-${dialect}-${(counter += 1)}`);
  const patchTenant = (body: unknown, token?: string) => env.api('PATCH', '/api/v1/tenant', body, token);
  const getTenant = async (token?: string) => (await env.api('GET', '/api/v1/tenant', undefined, token)).json();
  const keys = async (t: BootstrapResult): Promise<KeyView[]> => {
    const response = await env.api('GET', '/api/v1/api-keys?limit=1000', undefined, t.token);
    expect(response.statusCode).toBe(200);
    return response.json().items;
  };
  /** A webhook call into tenant t's own rule, with the given key. */
  const fire = async (t: BootstrapResult, apiKey = t.apiKey, ip?: string) => {
    const rule = await env.createWebhookRule({}, t.token);
    return env.webhook(rule.triggerId, {}, { apiKey, ...(ip ? { ip } : {}) });
  };

  it('GET /tenant shows the tenant of the token, with service defaults', async () => {
    const t = await freshTenant();
    const response = await env.api('GET', '/api/v1/tenant', undefined, t.token);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: t.tenantId, name: `tenant-${dialect}-${counter}`, ipAllowlist: [], agentAllowlist: [], throttle: null, createdAt: expect.stringMatching(ISO), incidents: { automationWindowSeconds: 3600, quietSeconds: 1800 }, retentionDays: null });
    expect((await getTenant()).id).toBe(env.tenant.tenantId);
  });

  describe('PATCH /tenant', () => {
    it('stores a valid IPv4/IPv6 allowlist (trimmed) and ingress obeys it', async () => {
      const t = await freshTenant();
      const response = await patchTenant({ ipAllowlist: ['10.0.0.0/8', ' 192.168.1.0/24 ', '2001:db8::/32', '::1', '203.0.113.7', '::ffff:198.51.100.0/120'] }, t.token);
      expect(response.statusCode, response.body).toBe(200);
      const expected = ['10.0.0.0/8', '192.168.1.0/24', '2001:db8::/32', '::1', '203.0.113.7', '::ffff:198.51.100.0/120'];
      expect(response.json().ipAllowlist).toEqual(expected);
      expect((await getTenant(t.token)).ipAllowlist).toEqual(expected);
      expect((await fire(t, t.apiKey, '127.0.0.1')).statusCode).toBe(403);
      expect((await fire(t, t.apiKey, '2001:db8::7')).statusCode).toBe(202);
      // Only this tenant is filtered.
      expect((await fire(env.tenant, env.tenant.apiKey, '127.0.0.1')).statusCode).toBe(202);
    });

    it('refuses invalid CIDRs, each at its index, and keeps the allowlist it had', async () => {
      const t = await freshTenant();
      expect((await patchTenant({ ipAllowlist: ['10.0.0.0/8'] }, t.token)).statusCode).toBe(200);
      const problem = expectProblem(await patchTenant({ ipAllowlist: ['192.168.0.0/16', '10.0.0.0/33', '::1', 'example.com', '2001:db8::/129'] }, t.token), 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors!.map((e) => e.path)).toEqual(['/body/ipAllowlist/1', '/body/ipAllowlist/3', '/body/ipAllowlist/4']);
      expect(problem.errors![1]!.message).toContain('"example.com"');
      expect((await getTenant(t.token)).ipAllowlist).toEqual(['10.0.0.0/8']);
    });

    it('an empty allowlist lets every address in again', async () => {
      const t = await freshTenant();
      await patchTenant({ ipAllowlist: ['10.0.0.0/8'] }, t.token);
      expect((await fire(t, t.apiKey, '127.0.0.1')).statusCode).toBe(403);
      expect((await patchTenant({ ipAllowlist: [] }, t.token)).json().ipAllowlist).toEqual([]);
      expect((await fire(t, t.apiKey, '127.0.0.1')).statusCode).toBe(202);
    });

    it('sets a throttle that ingress applies, and null goes back to the service defaults', async () => {
      const t = await freshTenant();
      const rule = await env.createWebhookRule({}, t.token);
      const set = await patchTenant({ throttle: { ratePerSecond: 1, burst: 2 } }, t.token);
      expect(set.statusCode, set.body).toBe(200);
      expect(set.json().throttle).toEqual({ ratePerSecond: 1, burst: 2 });
      expect((await getTenant(t.token)).throttle).toEqual({ ratePerSecond: 1, burst: 2 });
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey })).statusCode);
      expect(statuses).toEqual([202, 202, 429]);

      const reset = await patchTenant({ throttle: null }, t.token);
      expect(reset.json().throttle).toBeNull();
      expect((await getTenant(t.token)).throttle).toBeNull();
      // The test defaults allow 100,000 a second: five calls in a row pass again.
      for (let i = 0; i < 5; i += 1) expect((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey })).statusCode).toBe(202);
    });

    it('changing one setting leaves the other as it was', async () => {
      const t = await freshTenant();
      await patchTenant({ ipAllowlist: ['10.0.0.0/8'], throttle: { ratePerSecond: 5, burst: 9 } }, t.token);
      expect((await patchTenant({ throttle: { ratePerSecond: 6, burst: 9 } }, t.token)).json()).toMatchObject({ ipAllowlist: ['10.0.0.0/8'], throttle: { ratePerSecond: 6, burst: 9 } });
      expect((await patchTenant({ ipAllowlist: [] }, t.token)).json()).toMatchObject({ ipAllowlist: [], throttle: { ratePerSecond: 6, burst: 9 } });
    });

    it.each<[string, unknown, string]>([
      ['an empty patch', {}, '/body'],
      ['an unknown field', { name: 'renamed' }, '/body/name'],
      ['a list that is not a list', { ipAllowlist: '10.0.0.0/8' }, '/body/ipAllowlist'],
      ['a zero rate', { throttle: { ratePerSecond: 0, burst: 5 } }, '/body/throttle'],
      ['a throttle without burst', { throttle: { ratePerSecond: 5 } }, '/body/throttle'],
      ['a fractional burst', { throttle: { ratePerSecond: 5, burst: 1.5 } }, '/body/throttle'],
    ])('400 for %s', async (_case, body, path) => {
      const t = await freshTenant();
      const problem = expectProblem(await patchTenant(body, t.token), 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors!.some((e) => e.path.startsWith(path)), JSON.stringify(problem.errors)).toBe(true);
      expect(await getTenant(t.token)).toMatchObject({ ipAllowlist: [], throttle: null });
    });
  });

  describe('API keys', () => {
    it('lists keys with hint and times, never the key or its hash; records the last use', async () => {
      const t = await freshTenant();
      const response = await env.api('GET', '/api/v1/api-keys', undefined, t.token);
      expect(response.body).not.toContain(t.apiKey);
      expect(response.body).not.toContain(hashSecret(t.apiKey));
      const [key, ...others] = response.json().items as KeyView[];
      expect(others).toEqual([]);
      expect(Object.keys(key!).sort()).toEqual(['createdAt', 'hint', 'id', 'lastUsedAt', 'name', 'replacedBy', 'revokedAt', 'scopes']);
      expect(key).toMatchObject({ name: 'bootstrap', scopes: ['webhook', 'enrol'], hint: t.apiKey.slice(-4), createdAt: expect.stringMatching(ISO), lastUsedAt: null, revokedAt: null, replacedBy: null });

      const before = Date.now();
      expect((await fire(t)).statusCode).toBe(202);
      const used = (await keys(t))[0]!;
      expect(used.lastUsedAt).toMatch(ISO);
      expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(used.lastUsedAt!)).toBeLessThanOrEqual(Date.now());
    });

    it('issues a key that is shown once and works at once', async () => {
      const t = await freshTenant();
      const issued = await env.api('POST', '/api/v1/api-keys', { name: 'nagios' }, t.token);
      expect(issued.statusCode, issued.body).toBe(201);
      const { apiKey, ...view } = issued.json();
      expect(apiKey).toMatch(/^[0-9a-f]{64}$/);
      expect(view).toMatchObject({ name: 'nagios', hint: apiKey.slice(-4), lastUsedAt: null, revokedAt: null, replacedBy: null });
      const listed = await keys(t);
      expect(listed.find((k) => k.id === view.id)).toEqual(view);
      expect(JSON.stringify(listed)).not.toContain(apiKey);
      expect((await fire(t, apiKey)).statusCode).toBe(202);
      expectProblem(await env.api('POST', '/api/v1/api-keys', {}, t.token), 400, 'PITCREW_ERR_VALIDATION');
    });

    it('revoke: 200 with the replacement, the list links old to new, revoking again is 409', async () => {
      const t = await freshTenant();
      const [old] = await keys(t);
      const revoked = await env.api('POST', `/api/v1/api-keys/${old!.id}/revoke`, undefined, t.token);
      expect(revoked.statusCode, revoked.body).toBe(200);
      const { apiKey, ...replacement } = revoked.json();
      expect(apiKey).toMatch(/^[0-9a-f]{64}$/);
      expect(apiKey).not.toBe(t.apiKey);
      expect(replacement).toMatchObject({ name: old!.name, hint: apiKey.slice(-4), revokedAt: null, replacedBy: null });
      expect(replacement.id).not.toBe(old!.id);

      const listed = await keys(t);
      expect(listed.map((k) => k.id)).toEqual([old!.id, replacement.id]);
      expect(listed[0]).toMatchObject({ revokedAt: expect.stringMatching(ISO), replacedBy: replacement.id });
      expect(listed[1]!.revokedAt).toBeNull();

      expectProblem(await env.api('POST', `/api/v1/api-keys/${old!.id}/revoke`, undefined, t.token), 409, 'PITCREW_ERR_CONFLICT');
      expect(await keys(t)).toHaveLength(2);
      expect((await fire(t, t.apiKey)).statusCode).toBe(401);
      expect((await fire(t, apiKey)).statusCode).toBe(202);
    });

    it('404 for revoking another tenant’s key, which keeps working; 404/400 for unknown or malformed ids', async () => {
      const a = await freshTenant();
      const b = await freshTenant();
      const [aKey] = await keys(a);
      expectProblem(await env.api('POST', `/api/v1/api-keys/${aKey!.id}/revoke`, undefined, b.token), 404, 'PITCREW_ERR_NOT_FOUND');
      expect((await keys(a))[0]!.revokedAt).toBeNull();
      expect((await fire(a)).statusCode).toBe(202);
      expect((await keys(b)).map((k) => k.id)).not.toContain(aKey!.id);
      expectProblem(await env.api('POST', '/api/v1/api-keys/7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c/revoke', undefined, b.token), 404, 'PITCREW_ERR_NOT_FOUND');
      expectProblem(await env.api('POST', '/api/v1/api-keys/not-a-uuid/revoke', undefined, b.token), 400, 'PITCREW_ERR_VALIDATION');
    });

    it('pages through keys with limit and cursor', async () => {
      const t = await freshTenant();
      for (const name of ['a', 'b', 'c', 'd']) await env.api('POST', '/api/v1/api-keys', { name }, t.token);
      const all = (await keys(t)).map((k) => k.id);
      expect(all).toHaveLength(5);
      const first = (await env.api('GET', '/api/v1/api-keys?limit=3', undefined, t.token)).json();
      const second = (await env.api('GET', `/api/v1/api-keys?limit=3&cursor=${first.nextCursor}`, undefined, t.token)).json();
      expect([...first.items, ...second.items].map((k: KeyView) => k.id)).toEqual(all);
      expect(second.nextCursor).toBeNull();
      expectProblem(await env.api('GET', '/api/v1/api-keys?cursor=nope', undefined, t.token), 400, 'PITCREW_ERR_BAD_CURSOR');
    });
  });
});

describe.each(testDialects())('service throttle defaults (PITCREW_THROTTLE_RATE, PITCREW_THROTTLE_BURST) on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv(dialect, { throttleDefaults: { ratePerSecond: 1, burst: 3 } });
  });
  afterAll(() => env.close());

  it('limit a tenant without its own throttle; its own larger throttle replaces them; null brings them back', async () => {
    const t = await env.addTenant(`defaults-${dialect}`);
    const rule = await env.createWebhookRule({}, t.token);
    const statuses = async (calls: number) => {
      const seen: number[] = [];
      for (let i = 0; i < calls; i += 1) seen.push((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey })).statusCode);
      return seen;
    };

    expect((await env.api('GET', '/api/v1/tenant', undefined, t.token)).json().throttle).toBeNull();
    expect(await statuses(4)).toEqual([202, 202, 202, 429]);
    expectProblem(await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey }), 429, 'PITCREW_ERR_THROTTLED');

    expect((await env.api('PATCH', '/api/v1/tenant', { throttle: { ratePerSecond: 100_000, burst: 1000 } }, t.token)).statusCode).toBe(200);
    expect(await statuses(12)).toEqual(Array(12).fill(202));

    const reset = await env.api('PATCH', '/api/v1/tenant', { throttle: null }, t.token);
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.json().throttle).toBeNull();
    expect(await statuses(4)).toEqual([202, 202, 202, 429]);
  });
});

describe.each(testDialects())('what replies and logs never carry on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv(dialect);
  });
  afterAll(() => env.close());

  const logLines = () => env.logs.map((line) => JSON.parse(line) as { msg: string; err?: { message: string } });

  it('a 500 answers a generic detail, and only the log has the underlying error', async () => {
    // The table the route reads is gone: an error no handler expects, raised by the database itself.
    await sql`alter table api_keys rename to api_keys_away`.execute(env.store.db);
    let response;
    try {
      response = await env.api('GET', '/api/v1/api-keys');
    } finally {
      await sql`alter table api_keys_away rename to api_keys`.execute(env.store.db);
    }
    const problem = expectProblem(response, 500, 'PITCREW_ERR_INTERNAL');
    expect(problem.detail).toBe('the service hit an unexpected error; it has been logged. Try again, and report it if it persists.');
    expect(Object.keys(problem).sort()).toEqual(['code', 'detail', 'instance', 'status', 'title', 'type']);

    const logged = logLines().find((line) => line.msg === 'unexpected error');
    expect(logged?.err?.message).toMatch(/api_keys/);
    expect(response.body).not.toContain(logged!.err!.message);
    expect(response.body).not.toContain('api_keys');
    // The route works again once the table is back: the 500 came from the broken table alone.
    expect((await env.api('GET', '/api/v1/api-keys')).statusCode).toBe(200);
  });

  it('no log line carries a management token or an API key, whatever the call got', async () => {
    const t = await env.addTenant(`secrets-${dialect}`);
    const rule = await env.createWebhookRule({}, t.token);
    const issued = (await env.api('POST', '/api/v1/api-keys', { name: 'nagios' }, t.token)).json().apiKey as string;
    const unknownKey = 'cd'.repeat(32);
    const unknownToken = `pct_${'x'.repeat(40)}`;
    const from = env.logs.length;

    expect((await env.webhook(rule.triggerId, { HostName: 'web-1' }, { apiKey: t.apiKey })).statusCode).toBe(202);
    expect((await env.webhook(rule.triggerId, { HostName: [5] }, { apiKey: issued })).statusCode).toBe(400);
    expect((await env.webhook(rule.triggerId, {}, { apiKey: unknownKey })).statusCode).toBe(401);
    expect((await env.webhook('00000000-0000-4000-8000-000000000000', {}, { apiKey: t.apiKey, older: true })).statusCode).toBe(404);
    expect((await env.api('GET', '/api/v1/tenant', undefined, t.token)).statusCode).toBe(200);
    expect((await env.api('PATCH', '/api/v1/tenant', { ipAllowlist: ['10.0.0.0/8'] }, t.token)).statusCode).toBe(200);
    expect((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey })).statusCode).toBe(403);
    expect((await env.api('GET', '/api/v1/rules/not-a-uuid', undefined, t.token)).statusCode).toBe(400);
    expect((await env.api('GET', '/api/v1/tenant', undefined, unknownToken)).statusCode).toBe(401);

    for (const secret of [t.token, t.apiKey, issued, unknownKey, unknownToken]) {
      expect(env.logs.filter((line) => line.includes(secret))).toEqual([]);
    }
    // The calls were logged (at debug in tests), with the key's path segment redacted.
    const lines = env.logs.slice(from);
    expect(lines.filter((line) => line.includes(`/webhook/[REDACTED]/${rule.triggerId}`)).length).toBeGreaterThanOrEqual(6);
    expect(lines.some((line) => line.includes('"status":401'))).toBe(true);
  });
});
