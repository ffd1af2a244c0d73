import net from 'node:net';
import { once } from 'node:events';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { RouteOptions } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/server/app.js';
import { openStore } from '../src/store/database.js';
import { RunbookLibrary } from '../src/runbooks/library/library.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { createTestDatabase, testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

// Every route Fastify registers, seen through an onRoute hook added to each instance buildApp creates.
const registered = vi.hoisted(() => new Map<object, Array<{ method: string; url: string }>>());
vi.mock('fastify', async (importOriginal) => {
  const actual = await importOriginal<typeof import('fastify')>();
  const withRouteLog = ((options: Parameters<typeof actual.default>[0]) => {
    const instance = actual.default(options);
    const routes: Array<{ method: string; url: string }> = [];
    registered.set(instance, routes);
    instance.addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    });
    return instance;
  }) as unknown as typeof actual.default;
  return { ...actual, default: withRouteLog };
});

/** Fastify's /a/:id is OpenAPI's /a/{id}. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const WEBHOOK_PATHS = ['/api/v1/trigger/channel/webhook/{apiKey}/{triggerId}', '/api/trigger/channel/webhook/{apiKey}/{triggerId}'];
const INTEGRATION_PATH = '/api/v1/trigger/channel/{type}/{apiKey}/{integrationId}';
const TEAMS_PATH = '/api/v1/chat/teams/activities';
const SLACK_PATH = '/api/v1/chat/slack/interactions';
// The document does not describe itself.
const UNDOCUMENTED = new Set(['GET /api/v1/openapi.json']);

describe('operations', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv('sqlite');
  });
  afterAll(() => env.close());

  const get = (url: string) => env.app.server.inject({ method: 'GET', url });
  // As Prometheus reads it: from the metrics listener (test/metrics.test.ts covers who may).
  const scrape = () => env.app.metricsServer.inject({ method: 'GET', url: '/metrics' });

  it('/healthz answers 200', async () => {
    const response = await get('/healthz');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 naming the storage', async () => {
    const response = await get('/readyz');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ready', storage: 'sqlite' });
  });

  it('/readyz answers 503 problem+json when storage does not answer', async () => {
    // Port 1 on loopback refuses connections at once: a database that is down.
    const store = openStore({ databaseUrl: 'postgres://pitcrew@127.0.0.1:1/pitcrew', dataDir: '' });
    const app = await buildApp({
      store, logger: pino({ level: 'silent' }), webhookBodyLimitBytes: 1024,
      throttleDefaults: { ratePerSecond: 1, burst: 1 }, ingest: { maxBatch: 1, maxQueued: 1 }, secretKey: Buffer.alloc(32), runbookLibrary: new RunbookLibrary([]),
    });
    try {
      const response = await app.server.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({ code: 'PITCREW_ERR_STORAGE_UNAVAILABLE', detail: expect.stringContaining('127.0.0.1:1/pitcrew') });
      expect((await app.server.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('/metrics is Prometheus text that counts events once a webhook was called', async () => {
    const before = await scrape();
    expect(before.statusCode).toBe(200);
    expect(before.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(before.body).not.toMatch(/^pitcrew_events_total\{/m);

    const rule = await env.createWebhookRule();
    await env.enrol('web-1');
    expect((await env.webhook(rule.triggerId, { HostName: 'web-1' })).statusCode).toBe(202);
    expect((await env.webhook(rule.triggerId, { Act: false })).statusCode).toBe(202);
    expect((await env.webhook(rule.triggerId, {}, { apiKey: 'ab'.repeat(32) })).statusCode).toBe(401);
    // Refusals found past the key check count too: a wrong field type, an unknown trigger.
    expect((await env.webhook(rule.triggerId, { HostName: [5] })).statusCode).toBe(400);
    expect((await env.webhook('00000000-0000-4000-8000-000000000000', {})).statusCode).toBe(404);

    const after = (await scrape()).body;
    expect(after).toMatch(/^# TYPE pitcrew_events_total counter$/m);
    expect(after).toMatch(/^pitcrew_events_total\{outcome="accepted"\} 1$/m);
    expect(after).toMatch(/^pitcrew_events_total\{outcome="dry_run"\} 1$/m);
    expect(after).toMatch(/^pitcrew_ingress_rejections_total\{status="401"\} 1$/m);
    expect(after).toMatch(/^pitcrew_ingress_rejections_total\{status="400"\} 1$/m);
    expect(after).toMatch(/^pitcrew_ingress_rejections_total\{status="404"\} 1$/m);
    expect(after).toMatch(/^pitcrew_http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/trigger\/channel\/webhook\/:apiKey\/:triggerId",status="202"\} 2$/m);
    expect(after).toMatch(/^pitcrew_process_cpu_seconds_total /m);
    // Every sample line is "name{labels} value" or "name value".
    for (const line of after.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^[a-zA-Z_:][\w:]*(\{.*\})? [-+\d.eEInfNa]+$/);
    expect(after).not.toContain(env.tenant.apiKey);
  });

  it('/metrics counts a replayed idempotent call as duplicate and observes every ingest commit', async () => {
    /** The value of one sample line, 0 when the series does not exist yet. */
    const sample = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? 0 : Number(line.slice(series.length + 1));
    };
    const rule = await env.createWebhookRule();
    const before = (await scrape()).body;
    expect(before).not.toMatch(/^pitcrew_events_total\{outcome="duplicate"\}/m);

    const body = { HostName: 'web-1', Act: false };
    const first = await env.webhook(rule.triggerId, body, { headers: { 'idempotency-key': 'alert-42' } });
    const replay = await env.webhook(rule.triggerId, body, { headers: { 'idempotency-key': 'alert-42' } });
    expect([first.statusCode, replay.statusCode]).toEqual([202, 202]);
    expect(replay.json()).toMatchObject({ eventId: first.json().eventId, replayed: true });

    const after = (await scrape()).body;
    const grew = (series: string) => sample(after, series) - sample(before, series);
    expect(after).toMatch(/^pitcrew_events_total\{outcome="duplicate"\} 1$/m);
    expect(grew('pitcrew_events_total{outcome="dry_run"}')).toBe(1);
    // One after the other, each call was its own transaction of one event (the replay too: it is looked up there).
    expect(after).toMatch(/^# TYPE pitcrew_ingest_batch_size histogram$/m);
    expect(grew('pitcrew_ingest_batch_size_count')).toBe(2);
    expect(grew('pitcrew_ingest_batch_size_sum')).toBe(2);
    expect(grew('pitcrew_ingest_batch_size_bucket{le="1"}')).toBe(2);
    expect(after).toMatch(/^# TYPE pitcrew_ingest_commit_duration_seconds histogram$/m);
    expect(grew('pitcrew_ingest_commit_duration_seconds_count')).toBe(2);
    expect(grew('pitcrew_ingest_commit_duration_seconds_sum')).toBeGreaterThan(0);
    expect(grew('pitcrew_ingest_commit_duration_seconds_bucket{le="+Inf"}')).toBe(2);
  });

  describe('GET /api/v1/openapi.json', () => {
    let doc: { openapi: string; paths: Record<string, Record<string, { security?: unknown[]; responses?: Record<string, unknown> }>>; components: { securitySchemes: Record<string, unknown> } };
    beforeAll(async () => {
      const response = await get('/api/v1/openapi.json');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      doc = response.json();
    });

    it('is OpenAPI 3.1 with the bearerAuth scheme', () => {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    });

    it('documents every route the app registers, and nothing else', () => {
      // HEAD routes are the ones Fastify adds beside each GET.
      const routes = (registered.get(env.app.server) ?? []).filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${openApiPath(r.url)}`);
      expect(routes.length).toBeGreaterThan(10);
      const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
      expect(documented.sort()).toEqual(routes.filter((r) => !UNDOCUMENTED.has(r)).sort());
      expect(routes).toEqual(expect.arrayContaining([...UNDOCUMENTED]));
    });

    it('documents both webhook paths, without a bearer token, the older one deprecated', () => {
      for (const path of WEBHOOK_PATHS) {
        const post = doc.paths[path]?.post as { security?: unknown[]; deprecated?: boolean; responses: Record<string, unknown> } | undefined;
        expect(post, path).toBeDefined();
        expect(post!.security).toEqual([]);
        expect(Object.keys(post!.responses).sort()).toEqual(['202', '400', '401', '403', '404', '413', '415', '422', '429', '503']);
      }
      expect((doc.paths[WEBHOOK_PATHS[1]!]!.post as { deprecated?: boolean }).deprecated).toBe(true);
    });

    it("documents the integrations' inbound URL without a bearer token: the API key in the path authenticates", () => {
      const post = doc.paths[INTEGRATION_PATH]?.post as { security?: unknown[]; responses: Record<string, unknown> } | undefined;
      expect(post).toBeDefined();
      expect(post!.security).toEqual([]);
      expect(Object.keys(post!.responses).sort()).toEqual(['200', '202', '400', '401', '403', '404', '413', '415', '429', '503']);
    });

    it("documents Slack's interactions without a pitcrew credential: the app's signature authenticates", () => {
      const post = doc.paths[SLACK_PATH]?.post as { security?: unknown[]; responses: Record<string, unknown> } | undefined;
      expect(post).toBeDefined();
      expect(post!.security).toEqual([]);
      expect(Object.keys(post!.responses)).toEqual(expect.arrayContaining(['401']));
    });

    it("documents Teams' activities without a pitcrew credential: the Bot Connector's signed token authenticates", () => {
      const post = doc.paths[TEAMS_PATH]?.post as { security?: unknown[]; responses: Record<string, unknown> } | undefined;
      expect(post).toBeDefined();
      expect(post!.security).toEqual([]);
      expect(Object.keys(post!.responses)).toEqual(expect.arrayContaining(['200', '401']));
    });

    it('marks agent enrolment as needing the API key', () => {
      expect(doc.paths['/api/v1/agents/enrol']!.post!.security).toEqual([{ apiKey: [] }]);
    });

    it('marks every management route as needing a token or session, but the sign-in routes', () => {
      const management = Object.entries(doc.paths).filter(([path]) => path.startsWith('/api/v1/') && !WEBHOOK_PATHS.includes(path) && path !== INTEGRATION_PATH && path !== TEAMS_PATH && path !== SLACK_PATH && path !== '/api/v1/agents/enrol');
      expect(management.length).toBeGreaterThan(5);
      for (const [path, item] of management) {
        for (const [method, operation] of Object.entries(item)) {
          const expected = (operation as Record<string, unknown>)['x-pitcrew-role'] === 'public' ? [] : [{ bearerAuth: [] }, { sessionCookie: [] }];
          expect(operation.security, `${method} ${path}`).toEqual(expected);
        }
      }
    });
  });

  it('answers an unknown route with 404 problem+json, never echoing an API key', async () => {
    for (const url of ['/nope', '/api/v1/nope', `/api/v1/trigger/channel/webhook/${env.tenant.apiKey}`]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({ status: 404, code: 'PITCREW_ERR_NOT_FOUND', type: 'urn:pitcrew:problem:not-found' });
      expect(response.body).not.toContain(env.tenant.apiKey);
    }
  });
});

describe('stopping the service', () => {
  // A watcher of a queued execution's live output: the stream stays open until the execution ends.
  async function watch(url: string, token: string, options: https.RequestOptions = {}): Promise<IncomingMessage> {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const get = url.startsWith('https:') ? https.get : http.get;
      get(url, { headers: { authorization: `Bearer ${token}` }, ...options }, resolve).on('error', reject);
    });
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    await once(response, 'data');
    return response;
  }

  it('cuts live output streams still open after the grace period, on HTTP and HTTPS, instead of waiting for them', async () => {
    const env = await startTestEnv('sqlite', { listen: true, shutdownGraceMs: 200 });
    await env.enrol('web-1');
    const rule = await env.createWebhookRule();
    const fired = await env.webhook(rule.triggerId, { HostName: 'web-1' });
    const [executionId] = fired.json().executionIds as string[];
    const path = `/api/v1/executions/${executionId}/stream`;
    const streams = [
      await watch(env.listening!.httpUrl + path, env.tenant.token),
      await watch(env.listening!.httpsUrl + path, env.tenant.token, { rejectUnauthorized: false }),
    ];
    const ended = streams.map((stream) => new Promise((resolve) => stream.socket.once('close', resolve)));

    await env.close();
    await Promise.all(ended);
  });

  it('does not wait for a connection to the HTTPS port that never finishes its TLS handshake', async () => {
    const env = await startTestEnv('sqlite', { listen: true, shutdownGraceMs: 200 });
    // A port probe, or a peer that died mid-handshake: connected, and silent.
    const { hostname, port } = new URL(env.listening!.httpsUrl);
    const probe = net.connect(Number(port), hostname);
    await once(probe, 'connect');
    const cut = new Promise((resolve) => probe.once('close', resolve));
    // Without the cut, the stop waits for the TLS handshake timeout: 120 s.
    await env.close();
    await cut;
  });
});

/**
 * A webhook call over a connection of its own that sends its headers and half its body, then
 * waits: the server has taken the request and is reading it. `finish` sends the rest. The reply
 * is status 0 with the error's code when the connection failed instead of answering.
 */
function halfSentCall(url: string, body: string) {
  const request = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
  const reply = new Promise<{ status: number; body: string }>((resolve) => {
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: text }));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: String(error.code) }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: String(error.code) }));
  });
  const half = Math.floor(body.length / 2);
  request.write(body.slice(0, half));
  return { reply, finish: () => request.end(body.slice(half)) };
}

/**
 * A webhook call over a raw connection, sent up to half its body like `halfSentCall`; `finish`
 * sends the rest with a second request pipelined right behind it on the same connection.
 */
function pipelinedCall(base: string, first: string, second: string) {
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  const body = JSON.stringify({ Act: false });
  socket.write(`POST ${first} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 4)}`);
  let text = '';
  socket.on('data', (chunk) => (text += chunk));
  const replies = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
  });
  return { replies, finish: () => socket.write(`${body.slice(4)}GET ${second} HTTP/1.1\r\nHost: x\r\n\r\n`) };
}

describe.each(testDialects())('stopping the service with webhook calls in flight on %s', (dialect) => {
  it('answers every call the server had taken when the stop began with 202, its event stored; refuses new connections, and new requests on its connections with a problem', async () => {
    const database = await createTestDatabase(dialect);
    try {
      const env = await startTestEnv(dialect, { listen: true, database });
      const rule = await env.createWebhookRule();
      const url = `${env.listening!.httpUrl}/api/v1/trigger/channel/webhook/${env.tenant.apiKey}/${rule.triggerId}`;
      const calls = Array.from({ length: 50 }, (_, i) => halfSentCall(url, JSON.stringify({ HostName: `web-${i}`, Act: false })));
      const pipelined = pipelinedCall(env.listening!.httpUrl, new URL(url).pathname, '/api/v1/rules');
      const taken = () => env.logs.filter((line) => line.includes('"msg":"incoming request"') && line.includes(rule.triggerId)).length;
      await waitFor(() => taken() === 51, 'the server to take all 51 calls');

      // What SIGTERM runs (src/cli/server.ts): the listeners close, then the app.
      const closing = env.close();
      await waitFor(() => !env.app.server.server.listening, 'the HTTP listener to close');
      const late = await new Promise<string>((resolve) => {
        http.get(`${env.listening!.httpUrl}/healthz`, { agent: false }, (response) => resolve(`HTTP ${response.statusCode}`)).on('error', (error: NodeJS.ErrnoException) => resolve(String(error.code)));
      });
      expect(late).toBe('ECONNREFUSED');
      for (const call of calls) call.finish();
      pipelined.finish();
      const replies = await Promise.all(calls.map((call) => call.reply));
      // The request it had taken is answered; the one behind it is refused in the words of every error.
      const [first, second] = (await pipelined.replies).split(/(?=HTTP\/1\.1 )/);
      expect(first).toMatch(/^HTTP\/1\.1 202 /);
      expect(second).toMatch(/^HTTP\/1\.1 503 /);
      expect(second).toMatch(/\r\ncontent-type: application\/problem\+json/i);
      expect(second).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(JSON.parse(second!.slice(second!.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'PITCREW_ERR_STOPPING', status: 503 });
      const pipelinedEvent = /"eventId":"([^"]+)"/.exec(first!)![1]!;
      await closing;
      expect(replies.map((r) => (r.status === 202 ? 202 : `${r.status} ${r.body}`))).toEqual(Array(50).fill(202));

      // Read back by another node once this one has stopped: every accepted event is on disk.
      const store = database.open();
      try {
        const stored = await store.db.selectFrom('events').select('id').where('rule_id', '=', rule.id).execute();
        expect(stored.map((e) => e.id).sort()).toEqual([...replies.map((r) => JSON.parse(r.body).eventId as string), pipelinedEvent].sort());
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  });
});
