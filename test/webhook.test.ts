import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';
import { breakStorage } from './support/storage.js';
import { waitFor } from './support/wait.js';

describe.each(testDialects())('webhook trigger on %s', (dialect) => {
  let env: TestEnv;
  let rule: { id: string; triggerId: string };

  beforeAll(async () => {
    env = await startTestEnv(dialect, { sqliteBusyTimeoutMs: 300 });
    rule = await env.createWebhookRule();
    await env.enrol('web-1');
  });
  afterAll(() => env.close());

  async function eventCount(ruleId = rule.id): Promise<number> {
    const row = await env.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('rule_id', '=', ruleId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function storedEvent(eventId: string) {
    const response = await env.api('GET', `/api/v1/events/${eventId}`);
    expect(response.statusCode).toBe(200);
    return response.json();
  }


  describe('202 accepted', () => {
    it('stores every body field with its payload and answers with the event id', async () => {
      const body = { HostName: 'web-1', AppName: 'shop', AlarmName: 'disk_full', Severity: 'critical', Source: 'nagios', Act: true, MetaData: { Key1: 'Value1' } };
      const response = await env.webhook(rule.triggerId, body);
      expect(response.statusCode).toBe(202);
      const reply = response.json();
      expect(reply).toEqual({
        eventId: expect.any(String), outcome: 'accepted', reason: null, executionIds: [expect.any(String)], executionCount: 1,
        executionsUrl: `/api/v1/executions?eventId=${reply.eventId}`, skippedEnv: [], act: true, replayed: false,
      });
      expect(response.headers.location).toBe(`/api/v1/events/${reply.eventId}`);

      const event = await storedEvent(reply.eventId);
      expect(event).toMatchObject({ id: reply.eventId, ruleId: rule.id, outcome: 'accepted', payload: body, sourceIp: '127.0.0.1', skippedEnv: [] });
      expect(event.env).toEqual({
        HostName: 'web-1', AppName: 'shop', AlarmName: 'disk_full', Severity: 'critical', Source: 'nagios', Act: 'true', Key1: 'Value1',
      });
    });

    it('accepts the older path form and its lowercase aliases', async () => {
      const response = await env.webhook(rule.triggerId, { hostname: 'db-2', application: 'billing' }, { older: true });
      expect(response.statusCode).toBe(202);
      const event = await storedEvent(response.json().eventId);
      expect(event.env).toMatchObject({ HostName: 'db-2', AppName: 'billing', hostname: 'db-2', application: 'billing' });
    });

    it('keeps HostName when both HostName and the alias are sent', async () => {
      const response = await env.webhook(rule.triggerId, { HostName: 'web-9', hostname: 'other' });
      const event = await storedEvent(response.json().eventId);
      expect(event.env.HostName).toBe('web-9');
    });

    it('accepts a call with no body at all, and an empty JSON body', async () => {
      const none = await env.webhook(rule.triggerId);
      expect(none.statusCode).toBe(202);
      expect((await storedEvent(none.json().eventId)).payload).toEqual({});
      const empty = await env.webhook(rule.triggerId, '', { headers: { 'content-type': 'application/json; charset=utf-8' } });
      expect(empty.statusCode).toBe(202);
    });

    it('accepts any application/…+json content type', async () => {
      const body = { HostName: 'web-1', AlarmName: 'vendor_alert' };
      const response = await env.webhook(rule.triggerId, body, { headers: { 'content-type': 'application/vnd.alert+json; charset=utf-8' } });
      expect(response.statusCode, response.body).toBe(202);
      expect((await storedEvent(response.json().eventId)).payload).toEqual(body);
    });

    it('records Act: false as a dry run', async () => {
      const response = await env.webhook(rule.triggerId, { HostName: 'web-1', Act: false });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toMatchObject({ outcome: 'dry_run', executionIds: [], act: false });
      expect((await storedEvent(response.json().eventId)).reason).toMatch(/dry run/);
    });

    it('reads Act sent as the string "false" as a dry run and "true" as acting, and says so in the reply', async () => {
      const dry = await env.webhook(rule.triggerId, { HostName: 'web-1', Act: 'false' });
      expect(dry.statusCode, dry.body).toBe(202);
      expect(dry.json()).toMatchObject({ outcome: 'dry_run', executionIds: [], act: false });
      const acting = await env.webhook(rule.triggerId, { HostName: 'web-1', Act: 'TRUE' });
      expect(acting.statusCode, acting.body).toBe(202);
      expect(acting.json()).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)], act: true });
    });

    it('accepts numbers and booleans in the text fields, and matches the host by the number\'s text', async () => {
      await env.enrol('12345');
      const body = { HostName: 12345, AppName: 7, AlarmName: 99.5, Severity: 4, Source: true };
      const response = await env.webhook(rule.triggerId, body);
      expect(response.statusCode, response.body).toBe(202);
      expect(response.json()).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
      const execution = (await env.api('GET', `/api/v1/executions/${response.json().executionIds[0]}`)).json();
      expect(execution.hostname).toBe('12345');
      const event = await storedEvent(response.json().eventId);
      expect(event.payload).toEqual(body);
      expect(event.env).toEqual({ HostName: '12345', AppName: '7', AlarmName: '99.5', Severity: '4', Source: 'true' });

      const older = await env.webhook(rule.triggerId, { hostname: 12345, application: false }, { older: true });
      expect(older.statusCode, older.body).toBe(202);
      expect(older.json().outcome).toBe('accepted');
      expect((await storedEvent(older.json().eventId)).env).toEqual({ hostname: '12345', application: 'false', HostName: '12345', AppName: 'false' });
    });

    it('treats a known field sent as null as absent: the older alias stands in for a null HostName', async () => {
      const response = await env.webhook(rule.triggerId, { HostName: null, hostname: 'web-1', Severity: null });
      expect(response.statusCode, response.body).toBe(202);
      expect(response.json()).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
      expect((await storedEvent(response.json().eventId)).env).toEqual({ hostname: 'web-1', HostName: 'web-1' });
      const nobody = await env.webhook(rule.triggerId, { HostName: null });
      expect(nobody.json()).toMatchObject({ outcome: 'no_target', reason: expect.stringMatching(/names none/) });
    });

    it('reports the names it did not export, with a reason, and exports the rest', async () => {
      const response = await env.webhook(rule.triggerId, {
        HostName: 'web-1', PATH: '/tmp', LD_PRELOAD: 'evil.so', '1abc': 'x', Nested: { a: 1 }, Count: 3, Flag: false, Nothing: null,
        MetaData: { Key1: 'v', 'bad-name': 'x', HOME: '/root', HostName: 'dup', PITCREW_RULE: 'x', Deep: [1] },
      });
      expect(response.statusCode).toBe(202);
      const { skippedEnv, eventId } = response.json();
      const skipped = Object.fromEntries(skippedEnv.map((s: { name: string; reason: string }) => [s.name, s.reason]));
      expect(Object.keys(skipped).sort()).toEqual(['1abc', 'Deep', 'HOME', 'HostName', 'LD_PRELOAD', 'Nested', 'PATH', 'PITCREW_RULE', 'bad-name'].sort());
      expect(skipped.PATH).toMatch(/reserved/);
      expect(skipped['bad-name']).toMatch(/not a valid shell variable name/);
      expect(skipped.Nested).toMatch(/objects and arrays/);
      expect(skipped.HostName).toMatch(/top-level/);
      const event = await storedEvent(eventId);
      expect(event.env).toEqual({ HostName: 'web-1', Count: '3', Flag: 'false', Nothing: '', Key1: 'v' });
      expect(event.skippedEnv).toEqual(skippedEnv);
    });

    it('records a call to a rule that is off, without acting, and acts again once it is on', async () => {
      expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { enabled: false })).statusCode).toBe(200);
      const off = await env.webhook(rule.triggerId, { HostName: 'web-1' });
      expect(off.statusCode).toBe(202);
      expect(off.json()).toMatchObject({ outcome: 'rule_off', executionIds: [] });
      expect((await storedEvent(off.json().eventId)).reason).toMatch(/turned off/);
      // Rule off takes precedence over a dry run: nothing would have run either way, and the rule state explains more.
      expect((await env.webhook(rule.triggerId, { Act: false })).json().outcome).toBe('rule_off');

      expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { enabled: true })).statusCode).toBe(200);
      expect((await env.webhook(rule.triggerId, { HostName: 'web-1' })).json().outcome).toBe('accepted');
    });
  });

  describe('refusals store nothing', () => {
    let before: number;
    beforeAll(async () => {
      before = await eventCount();
    });

    it('400 for malformed JSON', async () => {
      expectProblem(await env.webhook(rule.triggerId, '{"HostName": "web-1",'), 400, 'PITCREW_ERR_MALFORMED_JSON');
    });

    it('400 for malformed JSON says where it went wrong, quoting none of it', async () => {
      const problem = expectProblem(await env.webhook(rule.triggerId, '{\n  "HostName": "web-1",\n  "MetaData": {"Token": "s3cr3t-value",}\n}'), 400, 'PITCREW_ERR_MALFORMED_JSON');
      expect(problem.detail).toBe('the body is not valid JSON: expected double-quoted property name at line 3, column 40');
      // Mistakes V8 gives no position for, in a template over several lines (issue 36).
      const unquoted = expectProblem(await env.webhook(rule.triggerId, '{\n  "HostName": "web-1",\n  "Severity": critical,\n  "MetaData": {"Token": "s3cr3t-value"}\n}'), 400, 'PITCREW_ERR_MALFORMED_JSON');
      expect(unquoted.detail).toBe("the body is not valid JSON: unexpected token 'c' at line 3, column 15");
      const cut = expectProblem(await env.webhook(rule.triggerId, '{\n  "HostName": "web-1",\n  "MetaData": {"Token": "s3cr3t-value"}\n'), 400, 'PITCREW_ERR_MALFORMED_JSON');
      expect(cut.detail).toBe("the body is not valid JSON: expected ',' or '}' after property value at line 4, column 1");
      const truncated = expectProblem(await env.webhook(rule.triggerId, '[\n  {"HostName": "web-1"},\n'), 400, 'PITCREW_ERR_MALFORMED_JSON');
      expect(truncated.detail).toBe('the body is not valid JSON: unexpected end of JSON input at line 3, column 1');
      expect(JSON.stringify([unquoted, cut, truncated])).not.toContain('s3cr3t');
    });

    it('400 for a prototype-poisoning body', async () => {
      expectProblem(await env.webhook(rule.triggerId, '{"__proto__": {"admin": true}}'), 400, 'PITCREW_ERR_MALFORMED_JSON');
    });

    it.each([
      [{ HostName: ['web-1'] }, '/body/HostName', /must be a string, number or boolean, got an array/],
      [{ hostname: ['a'] }, '/body/hostname', /must be a string, number or boolean/],
      [{ AppName: {} }, '/body/AppName', /must be a string, number or boolean, got an object/],
      [{ Severity: { level: 4 } }, '/body/Severity', /must be a string, number or boolean/],
      [{ Act: 'yes' }, '/body/Act', /true or false \(a JSON boolean, or the string "true" or "false"\), got string "yes"/],
      [{ Act: null }, '/body/Act', /got null; leave it out to act/],
      [{ Act: 1 }, '/body/Act', /got number 1/],
      [{ MetaData: ['a', 'b'] }, '/body/MetaData', /object of key\/value pairs/],
      [['not', 'an', 'object'], '/body', /JSON object/],
      ['"just a string"', '/body', /JSON object/],
    ])('400 for wrong field types: %j', async (body, pointer, message) => {
      const problem = expectProblem(await env.webhook(rule.triggerId, body), 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors![0]!.path).toBe(pointer);
      expect(problem.errors![0]!.message).toMatch(message);
    });

    it('401 for an unknown key, a malformed key, and no key at all', async () => {
      expectProblem(await env.webhook(rule.triggerId, {}, { apiKey: 'ab'.repeat(32) }), 401, 'PITCREW_ERR_INVALID_API_KEY');
      expectProblem(await env.webhook(rule.triggerId, {}, { apiKey: 'not-hex' }), 401, 'PITCREW_ERR_INVALID_API_KEY');
      expectProblem(await env.webhook(rule.triggerId, {}, { apiKey: env.tenant.apiKey.slice(0, 63) }), 401, 'PITCREW_ERR_INVALID_API_KEY');
    });

    // Issue 36: it sent people to GET /api/v1/api-keys, which never shows a key.
    it('401 says what a person can do: the key is shown once, so issue one and put it in the URL', async () => {
      const { detail } = expectProblem(await env.webhook(rule.triggerId, {}, { apiKey: 'ab'.repeat(32) }), 401, 'PITCREW_ERR_INVALID_API_KEY');
      expect(detail).not.toMatch(/GET \/api\/v1\/api-keys/);
      expect(detail).toBe('the API key in the URL is unknown or revoked; a key is shown only once, when it is issued (or replaced by a revoke), and pitcrew keeps only its hash: use the key you stored then, or issue a key with the webhook scope ("Issue key" on the API keys page, POST /api/v1/api-keys {"name":…,"scopes":["webhook"]}, or npx pitcrew api-keys create --name NAME --scope webhook) and put it in the monitoring tool\'s webhook URL in place of this one');
    });

    it('401 comes before reading the body', async () => {
      expectProblem(await env.webhook(rule.triggerId, '{bad json', { apiKey: 'ab'.repeat(32) }), 401, 'PITCREW_ERR_INVALID_API_KEY');
    });

    it('404 for an unknown trigger, a malformed trigger id, and another tenant’s trigger', async () => {
      expectProblem(await env.webhook('7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c', {}), 404, 'PITCREW_ERR_TRIGGER_NOT_FOUND');
      expectProblem(await env.webhook('not-a-uuid', {}), 404, 'PITCREW_ERR_TRIGGER_NOT_FOUND');
      const other = await env.addTenant(`other-${dialect}`);
      const otherRule = await env.createWebhookRule({}, other.token);
      expectProblem(await env.webhook(otherRule.triggerId, {}), 404, 'PITCREW_ERR_TRIGGER_NOT_FOUND');
      expect(await eventCount(otherRule.id)).toBe(0);
      // The other tenant's own key reaches it.
      expect((await env.webhook(otherRule.triggerId, {}, { apiKey: other.apiKey })).statusCode).toBe(202);
    });

    it('404 once the rule is deleted; its events stay readable', async () => {
      const doomed = await env.createWebhookRule();
      const first = await env.webhook(doomed.triggerId, { HostName: 'x' });
      expect(first.statusCode).toBe(202);
      expect((await env.api('DELETE', `/api/v1/rules/${doomed.id}`)).statusCode).toBe(204);
      expectProblem(await env.webhook(doomed.triggerId, {}), 404, 'PITCREW_ERR_TRIGGER_NOT_FOUND');
      expect((await env.api('GET', `/api/v1/events/${first.json().eventId}`)).statusCode).toBe(200);
      expect((await env.api('GET', `/api/v1/rules/${doomed.id}/events`)).json().items).toHaveLength(1);
    });

    it('413 for a body over the limit', async () => {
      const big = { HostName: 'web-1', MetaData: { Blob: 'x'.repeat(300 * 1024) } };
      expectProblem(await env.webhook(rule.triggerId, big), 413, 'PITCREW_ERR_BODY_TOO_LARGE');
    });

    it('415 for a body that is not JSON', async () => {
      expectProblem(await env.webhook(rule.triggerId, 'HostName=web-1', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'PITCREW_ERR_UNSUPPORTED_MEDIA_TYPE');
      expectProblem(await env.webhook(rule.triggerId, 'web-1', { headers: { 'content-type': 'text/plain' } }), 415, 'PITCREW_ERR_UNSUPPORTED_MEDIA_TYPE');
    });

    it('left no event behind', async () => {
      expect(await eventCount()).toBe(before);
    });
  });

  describe('API keys', () => {
    it('a revoked key fails on the very next call and its replacement works', async () => {
      const issued = await env.api('POST', '/api/v1/api-keys', { name: 'nagios' });
      expect(issued.statusCode).toBe(201);
      const { id, apiKey } = issued.json();
      expect(apiKey).toMatch(/^[0-9a-f]{64}$/);
      // Warm every cache with the key before revoking it.
      expect((await env.webhook(rule.triggerId, {}, { apiKey })).statusCode).toBe(202);

      const revoked = await env.api('POST', `/api/v1/api-keys/${id}/revoke`);
      expect(revoked.statusCode).toBe(200);
      const replacement = revoked.json().apiKey;
      expect(replacement).toMatch(/^[0-9a-f]{64}$/);
      expect(replacement).not.toBe(apiKey);

      expectProblem(await env.webhook(rule.triggerId, {}, { apiKey }), 401, 'PITCREW_ERR_INVALID_API_KEY');
      expect((await env.webhook(rule.triggerId, {}, { apiKey: replacement })).statusCode).toBe(202);
    });

    it('a key revoked behind this node’s back (another node, same database) fails at once', async () => {
      const { id, apiKey } = (await env.api('POST', '/api/v1/api-keys', { name: 'other-node' })).json();
      expect((await env.webhook(rule.triggerId, {}, { apiKey })).statusCode).toBe(202);
      // A second store is a second pitcrew node: this node's cache still holds the key.
      const otherNode = env.database.open();
      await otherNode.db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', id).execute();
      await otherNode.close();
      const before = await eventCount();
      expectProblem(await env.webhook(rule.triggerId, {}, { apiKey }), 401, 'PITCREW_ERR_INVALID_API_KEY');
      expect(await eventCount()).toBe(before);
    });
  });

  describe('tenant ingress settings', () => {
    it('403 when the caller is not on the IPv4 or IPv6 allowlist', async () => {
      const t = await env.addTenant(`allow-${dialect}`);
      const r = await env.createWebhookRule({}, t.token);
      const set = (ipAllowlist: string[]) => env.api('PATCH', '/api/v1/tenant', { ipAllowlist }, t.token);
      expect((await set(['10.0.0.0/8', '2001:db8::/32'])).statusCode).toBe(200);

      expectProblem(await env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '127.0.0.1' }), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
      expectProblem(await env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '2001:db9::1' }), 403, 'PITCREW_ERR_IP_NOT_ALLOWED');
      expect((await env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '10.20.30.40' })).statusCode).toBe(202);
      expect((await env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '::ffff:10.1.1.1' })).statusCode).toBe(202);
      expect((await env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '2001:db8:1::5' })).statusCode).toBe(202);

      expect((await set([])).statusCode).toBe(200);
      expect((await env.webhook(r.triggerId, {}, { apiKey: t.apiKey, ip: '127.0.0.1' })).statusCode).toBe(202);
    });

    it('429 with Retry-After once a tenant exceeds its throttle, stores nothing, and leaves other tenants alone', async () => {
      const noisy = await env.addTenant(`noisy-${dialect}`);
      const noisyRule = await env.createWebhookRule({}, noisy.token);
      expect((await env.api('PATCH', '/api/v1/tenant', { throttle: { ratePerSecond: 1, burst: 3 } }, noisy.token)).statusCode).toBe(200);

      const statuses = [];
      for (let i = 0; i < 5; i += 1) statuses.push(await env.webhook(noisyRule.triggerId, {}, { apiKey: noisy.apiKey }));
      expect(statuses.slice(0, 3).map((r) => r.statusCode)).toEqual([202, 202, 202]);
      const throttled = statuses[3]!;
      expectProblem(throttled, 429, 'PITCREW_ERR_THROTTLED');
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(await eventCount(noisyRule.id)).toBe(3);

      expect((await env.webhook(rule.triggerId, {})).statusCode).toBe(202);
    });
  });

  it('503 when storage cannot take the event, and nothing is recorded', async () => {
    const before = await eventCount();
    const release = await breakStorage(env);
    try {
      const response = await env.webhook(rule.triggerId, { HostName: 'web-1' });
      expectProblem(response, 503, 'PITCREW_ERR_STORAGE_UNAVAILABLE');
      expect(response.headers['retry-after']).toBe('1');
    } finally {
      await release();
    }
    expect(await eventCount()).toBe(before);
    expect((await env.webhook(rule.triggerId, { HostName: 'web-1' })).statusCode).toBe(202);
  });

  it('records 1,000 concurrent calls over real HTTP exactly once each', async () => {
    const address = await env.app.server.listen({ port: 0, host: '127.0.0.1' });
    const target = await env.createWebhookRule();
    const calls = Array.from({ length: 1000 }, (_, i) =>
      fetch(`${address}/api/v1/trigger/channel/webhook/${env.tenant.apiKey}/${target.triggerId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ HostName: `host-${i % 10}`, MetaData: { Call: i } }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { eventId: string } })),
    );
    const replies = await Promise.all(calls);
    expect(replies.every((r) => r.status === 202)).toBe(true);
    const ids = new Set(replies.map((r) => r.body.eventId));
    expect(ids.size).toBe(1000);

    const rows = await env.store.db.selectFrom('events').select(['id', 'env']).where('rule_id', '=', target.id).execute();
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((r) => r.id))).toEqual(ids);
    const calls_ = rows.map((r) => Number(JSON.parse(r.env).Call)).sort((a, b) => a - b);
    expect(calls_).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('never writes an API key to the log', async () => {
    await env.webhook(rule.triggerId, {});
    await env.app.server.inject({ method: 'POST', url: `/api/v1/trigger/channel/webhook/${env.tenant.apiKey}/${rule.triggerId}/extra` });
    const text = env.logs.join('');
    expect(text).toContain('[REDACTED]');
    expect(text).toMatch(/webhook\/\[REDACTED\]\/[0-9a-f-]+\/extra/);
    expect(text).not.toContain(env.tenant.apiKey);
    const keys = await env.store.db.selectFrom('api_keys').select('hash').execute();
    expect(keys.length).toBeGreaterThan(1);
    for (const line of env.logs) expect(line).not.toMatch(/webhook\/[0-9a-f]{64}/i);
  });

  it('logs a refused call at info with its status and the key redacted from the URL', async () => {
    // Trigger ids no other test calls, so each URL names one refusal.
    const [anyTrigger, missing, unknownKey] = [randomUUID(), randomUUID(), 'cd'.repeat(32)];
    expect((await env.webhook(anyTrigger, {}, { apiKey: unknownKey })).statusCode).toBe(401);
    expect((await env.webhook(missing, {})).statusCode).toBe(404);
    const refusal = (url: string) => waitFor(() => env.logs.map((line) => JSON.parse(line)).find((l) => l.msg === 'request refused' && l.req?.url === url), `the refusal of ${url}`);
    expect(await refusal(`/api/v1/trigger/channel/webhook/[REDACTED]/${anyTrigger}`)).toMatchObject({ level: 30, status: 401 });
    expect(await refusal(`/api/v1/trigger/channel/webhook/[REDACTED]/${missing}`)).toMatchObject({ level: 30, status: 404 });
    expect(env.logs.join('')).not.toContain(unknownKey);
  });
});

describe.each(testDialects())('webhook trigger with small configured limits on %s', (dialect) => {
  const LIMIT = 4096;
  let env: TestEnv;
  let rule: { id: string; triggerId: string };

  beforeAll(async () => {
    env = await startTestEnv(dialect, { webhookBodyLimitBytes: LIMIT, ingestMaxQueued: 1 });
    rule = await env.createWebhookRule();
  });
  afterAll(() => env.close());

  const eventsOf = async (ruleId: string): Promise<Array<{ id: string }>> => (await env.api('GET', `/api/v1/rules/${ruleId}/events?limit=1000`)).json().items;

  it('PITCREW_WEBHOOK_BODY_LIMIT: 202 for a body of exactly the limit, 413 for one byte more', async () => {
    const ofSize = (bytes: number) => JSON.stringify({ MetaData: { Blob: 'x'.repeat(bytes - JSON.stringify({ MetaData: { Blob: '' } }).length) } });
    expect(Buffer.byteLength(ofSize(LIMIT))).toBe(LIMIT);
    expect((await env.webhook(rule.triggerId, ofSize(LIMIT))).statusCode).toBe(202);
    const refused = expectProblem(await env.webhook(rule.triggerId, ofSize(LIMIT + 1)), 413, 'PITCREW_ERR_BODY_TOO_LARGE');
    expect(refused.detail).toBe(`the body is larger than the ${LIMIT / 1024} KiB this endpoint accepts; send less data, or raise PITCREW_WEBHOOK_BODY_LIMIT on the service`);
    expect(await eventsOf(rule.id)).toHaveLength(1);
    // The management API's limit is not the operator's setting: it does not send people to it.
    const big = expectProblem(await env.api('POST', '/api/v1/runbooks', { name: 'big', script: 'x'.repeat(1024 * 1024) }), 413, 'PITCREW_ERR_BODY_TOO_LARGE');
    expect(big.detail).toBe('the body is larger than the 1 MiB this endpoint accepts; send less data (a script or description over 256 KiB is refused anyway)');
  });

  it('PITCREW_INGEST_MAX_QUEUED: 503 with Retry-After once the ingest queue is full; a refused call leaves no event', async () => {
    const target = await env.createWebhookRule();
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => env.webhook(target.triggerId, { HostName: 'web-1', MetaData: { Call: i } })));
    const accepted = replies.filter((r) => r.statusCode === 202);
    const refused = replies.filter((r) => r.statusCode !== 202);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const reply of refused) {
      expect(expectProblem(reply, 503, 'PITCREW_ERR_STORAGE_UNAVAILABLE').detail).toMatch(/ingest queue is full/);
      expect(reply.headers['retry-after']).toBe('1');
    }
    const stored = (await eventsOf(target.id)).map((e) => e.id).sort();
    expect(stored).toEqual(accepted.map((r) => r.json().eventId).sort());
  });
});
