import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTEGRATION_PATH } from '../src/ingress/integration.js';
import { WEBHOOK_PATHS } from '../src/ingress/webhook.js';
import { INTEGRATION_TYPES } from '../src/integrations/schema.js';
import { startTestEnv, type TestEnv } from './support/app.js';

/** A path parameter holding a secret, as docs/security.md words it. */
const SECRET_PARAM = /^\w*(?:key|token|secret|password)$/i;
const REDACTED = '[REDACTED]';

/**
 * Every route Fastify knows, read from its own print of the route table (one node a line, each
 * indented four characters deeper than its parent and naming the rest of the path): nothing here
 * comes from the redaction's own list.
 */
function routeTable(env: TestEnv): string[] {
  const paths: string[] = [];
  const parents: string[] = [];
  for (const line of env.app.server.printRoutes({ commonPrefix: false }).split('\n')) {
    const node = /^([│ ]*)[├└]── (\S+)/.exec(line);
    if (!node) continue;
    parents.length = node[1]!.length / 4;
    parents.push(node[2]!);
    paths.push(parents.join(''));
  }
  return paths;
}

const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);

/*
 * The tenant API key travels in trigger URLs (DESIGN.md §3). Whatever happens to a call on such a
 * URL, at the most verbose log level, neither a log line nor the reply may carry the key. Storage
 * plays no part: SQLite only.
 */
describe('API keys in paths', () => {
  let env: TestEnv;
  let revokedKey: string;
  let triggerId: string;
  const integrations = new Map<string, string>();

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { logLevel: 'trace' });
    triggerId = (await env.createWebhookRule()).triggerId;
    for (const type of INTEGRATION_TYPES) {
      // docs/integrations/generic.md: a generic integration needs a mapping.
      const config = type === 'generic' ? { mapping: { name: 'title' } } : undefined;
      const made = await env.api('POST', '/api/v1/integrations', { name: `redaction-${type}`, type, config });
      expect(made.statusCode, made.body).toBe(201);
      integrations.set(type, made.json().id);
    }
    const doomed = (await env.api('POST', '/api/v1/api-keys', { name: 'doomed', scopes: ['webhook'] })).json();
    expect((await env.api('POST', `/api/v1/api-keys/${doomed.id}/revoke`)).statusCode).toBe(200);
    revokedKey = doomed.apiKey;
  });
  afterAll(async () => env?.close());

  const keyedRoutes = () => routeTable(env).filter((path) => paramsOf(path).some((name) => SECRET_PARAM.test(name)));

  /** The path's parameters as a caller fills them on a working URL: one set per integration type for `:type`. */
  function fillings(path: string, key: string): Record<string, string>[] {
    const types = paramsOf(path).includes('type') ? [...integrations.keys()] : [undefined];
    return types.map((type) => Object.fromEntries(paramsOf(path).map((name) => {
      if (SECRET_PARAM.test(name)) return [name, key];
      if (name === 'type' && type) return [name, type];
      if (name === 'triggerId') return [name, triggerId];
      if (name === 'integrationId' && type) return [name, integrations.get(type)!];
      throw new Error(`${path} carries a key and a parameter this test cannot fill (:${name}): teach it, so that the route is called`);
    })));
  }

  const fill = (path: string, values: Record<string, string>) => path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(values[name]!));

  async function post(url: string, body: string): Promise<LightMyRequestResponse> {
    return env.app.server.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body, remoteAddress: '127.0.0.1' });
  }

  /** The request's own lines: it was logged at trace, with the key's segment (and nothing else) redacted. */
  function expectLoggedRedacted(url: string, key: string) {
    const shown = url.replaceAll(key, REDACTED);
    const lines = env.logs.map((line) => JSON.parse(line) as { msg: string; req?: { url: string } });
    expect(lines.some((line) => line.msg === 'incoming request' && line.req?.url === shown), `the incoming request ${shown}`).toBe(true);
  }

  function expectNoKey(reply: LightMyRequestResponse, ...keys: string[]) {
    for (const key of keys) {
      expect(reply.body).not.toContain(key);
      expect(JSON.stringify(reply.headers)).not.toContain(key);
    }
  }

  it('finds every keyed route in the route table, and redaction knows each one', () => {
    const keyed = keyedRoutes();
    expect(keyed).toEqual(expect.arrayContaining([...WEBHOOK_PATHS, INTEGRATION_PATH]));
    expect(new Set(env.app.server.keyedRoutes.paths)).toEqual(new Set(keyed));
  });

  it('keeps the key out of the log and the reply: a bad body, a wrong id, a revoked key, on every keyed route', async () => {
    const key = env.tenant.apiKey;
    let calls = 0;
    for (const path of keyedRoutes()) {
      for (const values of fillings(path, key)) {
        const wrongIds = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, /Id$/.test(name) ? randomUUID() : value]));
        const cases = [
          { what: 'a bad body', url: fill(path, values), body: '{"HostName": ', status: 400, key },
          { what: 'a wrong id', url: fill(path, wrongIds), body: '{}', status: 404, key },
          { what: 'a revoked key', url: fill(path, fillings(path, revokedKey).find((v) => v.type === values.type)!), body: '{}', status: 401, key: revokedKey },
        ];
        for (const call of cases) {
          const reply = await post(call.url, call.body);
          expect(reply.statusCode, `${call.what}: POST ${call.url.replaceAll(call.key, REDACTED)}: ${reply.body}`).toBe(call.status);
          expect(reply.json().instance).toBe(call.url.replaceAll(call.key, REDACTED));
          expectNoKey(reply, key, revokedKey);
          expectLoggedRedacted(call.url, call.key);
          calls += 1;
        }
      }
    }
    for (const secret of [key, revokedKey]) expect(env.logs.filter((line) => line.includes(secret))).toEqual([]);
    expect(env.logs.filter((line) => line.includes('"msg":"request refused"') && line.includes(REDACTED)).length).toBeGreaterThanOrEqual(calls);
  });

  it('keeps the key out of the log and the reply on URLs that match no route, or that Fastify refuses before routing', async () => {
    const key = env.tenant.apiKey;
    for (const path of keyedRoutes()) {
      const url = fill(path, fillings(path, key)[0]!);
      const segments = url.split('/');
      const keyAt = segments.indexOf(key);
      const variants = [
        `${url}/extra`,
        segments.slice(0, keyAt + 1).join('/'),
        // The segment before the key another tool's name: the older webhook form has no such route.
        [...segments.slice(0, keyAt - 1), 'nosuchtool', ...segments.slice(keyAt)].join('/'),
        url.replace('/trigger/', '//trigger/'),
        url.toUpperCase().replace(key.toUpperCase(), key),
        `${segments.slice(0, keyAt).join('/')}?apiKey=${key}`,
        `${url}%zz`,
        `${url}${'z'.repeat(200)}`,
      ];
      for (const variant of variants) {
        const reply = await post(variant, '{}');
        expect(reply.statusCode, `POST ${variant.replaceAll(key, REDACTED)}: ${reply.body}`).toBeGreaterThanOrEqual(400);
        expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
        expectNoKey(reply, key);
        expectLoggedRedacted(variant, key);
      }
    }
    expect(env.logs.filter((line) => line.includes(key))).toEqual([]);
  });

  it('hides a key-shaped run of hex even where no keyed route says so', async () => {
    const key = env.tenant.apiKey;
    const typo = `${key.slice(0, 30)}g${key.slice(31)}`;
    const reply = await post(`/api/trigger/channel/alertmanager/${typo}/${integrations.get('alertmanager')}`, '{}');
    expect(reply.statusCode).toBe(404);
    expect(reply.json().instance).toBe(`/api/trigger/channel/alertmanager/${REDACTED}g${REDACTED}/${integrations.get('alertmanager')}`);
    expect(env.logs.filter((line) => line.includes(key.slice(0, 16)) || line.includes(key.slice(31, 47)))).toEqual([]);
  });
});
