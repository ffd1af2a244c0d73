import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../src/tenants/bootstrap.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

interface KeyView { id: string; name: string; scopes: string[]; revokedAt: string | null }

// Issue 22: the key in every monitoring tool's webhook URL also enrolled agents, and enrolling an
// existing host name took that host over, from any address.
describe.each(testDialects())('API key scopes and enrolment on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv(dialect, { throttleDelayMs: 0 });
  });
  afterAll(() => env.close());

  let counter = 0;
  const freshTenant = () => env.addTenant(`scopes-${dialect}-${(counter += 1)}`);
  const issue = async (t: BootstrapResult, body: Record<string, unknown>) => {
    const response = await env.api('POST', '/api/v1/api-keys', body, t.token);
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as KeyView & { apiKey: string };
  };
  const keys = async (t: BootstrapResult): Promise<KeyView[]> => (await env.api('GET', '/api/v1/api-keys?limit=1000', undefined, t.token)).json().items;
  const fire = async (t: BootstrapResult, apiKey: string) => env.webhook((await env.createWebhookRule({}, t.token)).triggerId, {}, { apiKey });
  const enrol = (apiKey: string, hostname: string, extra: { replace?: boolean; ip?: string } = {}) =>
    env.app.server.inject({
      method: 'POST',
      url: '/api/v1/agents/enrol',
      remoteAddress: extra.ip ?? '127.0.0.1',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ hostname, tags: [], os: 'Linux test', arch: 'x64', version: 'test', ...(extra.replace === undefined ? {} : { replace: extra.replace }) }),
    });
  const history = async (t: BootstrapResult, hostId: string) => (await env.api('GET', `/api/v1/hosts/${hostId}/history`, undefined, t.token)).json().items;

  describe('scopes', () => {
    it('a new key is single-purpose: webhook unless the caller names its scopes; the list shows them', async () => {
      const t = await freshTenant();
      const plain = await issue(t, { name: 'nagios' });
      const agents = await issue(t, { name: 'agents', scopes: ['enrol'] });
      const both = await issue(t, { name: 'both', scopes: ['enrol', 'webhook'] });
      expect([plain.scopes, agents.scopes, both.scopes]).toEqual([['webhook'], ['enrol'], ['webhook', 'enrol']]);
      expect((await keys(t)).map((k) => [k.name, k.scopes])).toEqual([
        ['bootstrap', ['webhook', 'enrol']], ['nagios', ['webhook']], ['agents', ['enrol']], ['both', ['webhook', 'enrol']],
      ]);
      for (const scopes of [[], ['admin'], ['webhook', 'webhook']]) {
        expectProblem(await env.api('POST', '/api/v1/api-keys', { name: 'bad', scopes }, t.token), 400, 'PITCREW_ERR_VALIDATION');
      }
    });

    it('a webhook with an enrol-only key is 403 and says the key lacks the webhook scope; an enrolment with a webhook-only key likewise', async () => {
      const t = await freshTenant();
      const agents = await issue(t, { name: 'agents', scopes: ['enrol'] });
      const nagios = await issue(t, { name: 'nagios', scopes: ['webhook'] });
      const refused = expectProblem(await fire(t, agents.apiKey), 403, 'PITCREW_ERR_KEY_SCOPE');
      expect(refused.detail).toMatch(/"agents" lacks the webhook scope/);
      expect((await fire(t, nagios.apiKey)).statusCode).toBe(202);

      const enrolment = expectProblem(await enrol(nagios.apiKey, 'scope-1'), 403, 'PITCREW_ERR_KEY_SCOPE');
      expect(enrolment.detail).toMatch(/"nagios" lacks the enrol scope/);
      expect((await env.api('GET', '/api/v1/hosts?hostname=scope-1', undefined, t.token)).json().items).toEqual([]);
      expect((await enrol(agents.apiKey, 'scope-1')).statusCode).toBe(201);
    });

    // Issue 36: the 401 sent people to GET /api/v1/api-keys, which never shows a key.
    it('an enrolment with an unknown key is 401 and says how to get an enrol key', async () => {
      const { detail } = expectProblem(await enrol('ab'.repeat(32), 'unknown-key-1'), 401, 'PITCREW_ERR_INVALID_API_KEY');
      expect(detail).not.toMatch(/GET \/api\/v1\/api-keys/);
      expect(detail).toMatch(/^the API key is unknown or revoked; a key is shown only once, .* issue a key with the enrol scope \("Make an agent key" on the hosts page, .*npx pitcrew api-keys create --name NAME --scope enrol\) and start the agent with it: npx pitcrew agent --api-key <key>$/);
    });

    it('PATCH narrows a key at once; a scope is never added; revoking keeps the scopes on the new key', async () => {
      const t = await freshTenant();
      const [bootstrap] = await keys(t);
      expect((await fire(t, t.apiKey)).statusCode).toBe(202);
      const narrowed = await env.api('PATCH', `/api/v1/api-keys/${bootstrap!.id}`, { scopes: ['enrol'] }, t.token);
      expect(narrowed.statusCode, narrowed.body).toBe(200);
      expect(narrowed.json()).toMatchObject({ id: bootstrap!.id, scopes: ['enrol'] });
      expectProblem(await fire(t, t.apiKey), 403, 'PITCREW_ERR_KEY_SCOPE');
      expect((await enrol(t.apiKey, 'narrow-1')).statusCode).toBe(201);

      const widen = expectProblem(await env.api('PATCH', `/api/v1/api-keys/${bootstrap!.id}`, { scopes: ['webhook', 'enrol'] }, t.token), 409, 'PITCREW_ERR_CONFLICT');
      expect(widen.detail).toMatch(/cannot gain the webhook scope.*Issue a new key/);
      expect((await keys(t))[0]!.scopes).toEqual(['enrol']);
      expectProblem(await env.api('PATCH', `/api/v1/api-keys/${bootstrap!.id}`, { scopes: [] }, t.token), 400, 'PITCREW_ERR_VALIDATION');
      const other = await freshTenant();
      expectProblem(await env.api('PATCH', `/api/v1/api-keys/${bootstrap!.id}`, { scopes: ['enrol'] }, other.token), 404, 'PITCREW_ERR_NOT_FOUND');

      const revoked = await env.api('POST', `/api/v1/api-keys/${bootstrap!.id}/revoke`, undefined, t.token);
      expect(revoked.json().scopes).toEqual(['enrol']);
      expectProblem(await fire(t, revoked.json().apiKey), 403, 'PITCREW_ERR_KEY_SCOPE');
      expect((await enrol(revoked.json().apiKey, 'narrow-2')).statusCode).toBe(201);
      expectProblem(await env.api('PATCH', `/api/v1/api-keys/${bootstrap!.id}`, { scopes: ['enrol'] }, t.token), 409, 'PITCREW_ERR_CONFLICT');
    });

    it('a key narrowed behind the cache (another node, its announcement lost) is refused by the transaction that would act on it', async () => {
      const t = await freshTenant();
      const [bootstrap] = await keys(t);
      // Both paths have the key cached with both scopes.
      expect((await fire(t, t.apiKey)).statusCode).toBe(202);
      expect((await enrol(t.apiKey, 'cached-1')).statusCode).toBe(201);
      await env.store.db.updateTable('api_keys').set({ scopes: '[]' }).where('id', '=', bootstrap!.id).execute();

      // Enrolment first: a refused webhook makes this node forget the tenant's cached keys.
      expect(expectProblem(await enrol(t.apiKey, 'cached-2'), 403, 'PITCREW_ERR_KEY_SCOPE').detail).toMatch(/lacks the enrol scope/);
      expect((await env.api('GET', '/api/v1/hosts?hostname=cached-2', undefined, t.token)).json().items).toEqual([]);
      expect(expectProblem(await fire(t, t.apiKey), 403, 'PITCREW_ERR_KEY_SCOPE').detail).toMatch(/lacks the webhook scope/);
    });
  });

  describe('enrolling a host name that is taken', () => {
    it('is refused with 409 naming the host and --replace; with replace it takes the host, and the history says who and from where', async () => {
      const t = await freshTenant();
      const agents = await issue(t, { name: 'agents eu', scopes: ['enrol'] });
      const first = await enrol(agents.apiKey, 'taken-1', { ip: '10.1.2.3' });
      expect(first.statusCode, first.body).toBe(201);
      const { hostId, token: firstToken } = first.json();

      // Case-insensitive, as host names are (RFC 4343).
      const refused = expectProblem(await enrol(agents.apiKey, 'TAKEN-1'), 409, 'PITCREW_ERR_HOST_ALREADY_ENROLLED');
      expect(refused.detail).toMatch(/host taken-1 is already enrolled and its agent is offline.*--replace/);
      expectProblem(await enrol(agents.apiKey, 'taken-1', { replace: false }), 409, 'PITCREW_ERR_HOST_ALREADY_ENROLLED');

      const replaced = await enrol(agents.apiKey, 'taken-1', { replace: true, ip: '10.9.9.9' });
      expect(replaced.statusCode, replaced.body).toBe(201);
      expect(replaced.json().hostId).toBe(hostId);
      expect(replaced.json().token).not.toBe(firstToken);
      const rows = await env.store.db.selectFrom('hosts').select('token_hash').where('id', '=', hostId).execute();
      expect(rows).toHaveLength(1);

      expect(await history(t, hostId)).toEqual([
        expect.objectContaining({ kind: 'replaced', hostname: 'taken-1', apiKeyId: agents.id, apiKeyName: 'agents eu', sourceIp: '10.9.9.9', wasOnline: false }),
        expect.objectContaining({ kind: 'enrolled', hostname: 'taken-1', apiKeyId: agents.id, apiKeyName: 'agents eu', sourceIp: '10.1.2.3', wasOnline: false }),
      ]);
      const other = await freshTenant();
      expectProblem(await env.api('GET', `/api/v1/hosts/${hostId}/history`, undefined, other.token), 404, 'PITCREW_ERR_NOT_FOUND');

      // The other remedy the 409 names: a forgotten host's name is free again, for a new host.
      expect((await env.api('DELETE', `/api/v1/hosts/${hostId}`, undefined, t.token)).statusCode).toBe(204);
      const again = await enrol(agents.apiKey, 'taken-1');
      expect(again.statusCode, again.body).toBe(201);
      expect(again.json().hostId).not.toBe(hostId);
    });

    it('a new name enrols without --replace, and replace on a new name is an ordinary enrolment', async () => {
      const t = await freshTenant();
      const fresh = await enrol(t.apiKey, 'brand-new-1', { replace: true });
      expect(fresh.statusCode).toBe(201);
      expect((await history(t, fresh.json().hostId)).map((h: { kind: string }) => h.kind)).toEqual(['enrolled']);
    });
  });

  describe('enrolment honours the tenant', () => {
    it("agent allowlist of its own: 403 from elsewhere; the webhook IP allowlist does not apply to it, nor it to webhooks", async () => {
      const t = await freshTenant();
      const patched = await env.api('PATCH', '/api/v1/tenant', { agentAllowlist: [' 198.51.100.0/24 '], ipAllowlist: ['203.0.113.0/24'] }, t.token);
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({ agentAllowlist: ['198.51.100.0/24'], ipAllowlist: ['203.0.113.0/24'] });

      const refused = expectProblem(await enrol(t.apiKey, 'fenced-1', { ip: '203.0.113.9' }), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
      expect(refused.detail).toMatch(/203\.0\.113\.9.*agent allowlist.*agentAllowlist/);
      expect((await enrol(t.apiKey, 'fenced-1', { ip: '198.51.100.7' })).statusCode).toBe(201);
      const rule = await env.createWebhookRule({}, t.token);
      expect((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey, ip: '198.51.100.7' })).statusCode).toBe(403);
      expect((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey, ip: '203.0.113.9' })).statusCode).toBe(202);

      const bad = expectProblem(await env.api('PATCH', '/api/v1/tenant', { agentAllowlist: ['10.0.0.0/33'] }, t.token), 400, 'PITCREW_ERR_VALIDATION');
      expect(bad.errors).toEqual([expect.objectContaining({ path: '/body/agentAllowlist/0' })]);
      expect((await env.api('PATCH', '/api/v1/tenant', { agentAllowlist: [] }, t.token)).json().agentAllowlist).toEqual([]);
      expect((await enrol(t.apiKey, 'fenced-2', { ip: '203.0.113.9' })).statusCode).toBe(201);
    });

    it('and its throttle: 429 with Retry-After once the bucket is empty', async () => {
      const t = await freshTenant();
      expect((await env.api('PATCH', '/api/v1/tenant', { throttle: { ratePerSecond: 1, burst: 2 } }, t.token)).statusCode).toBe(200);
      const statuses = [];
      for (const name of ['flood-1', 'flood-2', 'flood-3']) statuses.push((await enrol(t.apiKey, name)).statusCode);
      expect(statuses).toEqual([201, 201, 429]);
      const throttled = await enrol(t.apiKey, 'flood-4');
      expectProblem(throttled, 429, 'PITCREW_ERR_THROTTLED');
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await env.api('GET', '/api/v1/hosts?hostname=flood-4', undefined, t.token)).json().items).toEqual([]);
    });
  });
});
