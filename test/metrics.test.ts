import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRawAgent } from './support/agents.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { startServer, type ServerProcess } from './support/process.js';

// /metrics names every tenant (pitcrew_ingress_throttled_total{tenant}) and shows every tenant's
// activity: nobody who can merely reach the API may read it (docs/configuration.md#metrics).

/** GET over real HTTP(S), the self-signed certificate accepted. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string; challenge: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith('https:') ? https.get(url, { headers, rejectUnauthorized: false }) : http.get(url, { headers });
    request.on('error', reject).on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'] ?? '', body, challenge: response.headers['www-authenticate'] }));
    });
  });
}

/** A tenant throttled once: its id is then in the metrics. */
async function throttleOnce(env: TestEnv): Promise<string> {
  const tenant = await env.addTenant(`throttled-${Math.random().toString(36).slice(2, 8)}`);
  expect((await env.api('PATCH', '/api/v1/tenant', { throttle: { ratePerSecond: 1, burst: 1 } }, tenant.token)).statusCode).toBe(200);
  const rule = await env.createWebhookRule({}, tenant.token);
  const statuses = [];
  for (let i = 0; i < 3; i += 1) statuses.push((await env.webhook(rule.triggerId, { Act: false }, { apiKey: tenant.apiKey })).statusCode);
  expect(statuses).toContain(429);
  return tenant.tenantId;
}

describe('metrics without PITCREW_METRICS_TOKEN', () => {
  let env: TestEnv;
  let tenantId: string;
  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true, webUi: true });
    tenantId = await throttleOnce(env);
  });
  afterAll(() => env.close());

  it('are not served on the API ports, HTTP or HTTPS: 404, even with the web UI that answers other unknown pages', async () => {
    for (const base of [env.listening!.httpUrl, env.listening!.httpsUrl]) {
      for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${env.tenant.token}` }]) {
        const reply = await get(`${base}/metrics`, headers);
        expect(reply.status, base).toBe(404);
        expect(reply.type).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(reply.body)).toMatchObject({ code: 'PITCREW_ERR_NOT_FOUND', detail: expect.stringMatching(/PITCREW_METRICS_ADDR.*PITCREW_METRICS_TOKEN/) });
        expect(reply.body).not.toContain(tenantId);
      }
    }
  });

  it('are served on the metrics listener, tenant ids and all', async () => {
    const reply = await get(`${env.listening!.metricsUrl}/metrics`);
    expect(reply.status).toBe(200);
    expect(reply.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(reply.body).toContain(`pitcrew_ingress_throttled_total{tenant="${tenantId}"}`);
    expect((await get(`${env.listening!.metricsUrl}/api/v1/rules`)).status).toBe(404);
  });

  it('show the agent port\'s connections still in their TLS handshake, and none once they are done', async () => {
    const gauge = async (stage: string) => {
      const body = (await get(`${env.listening!.metricsUrl}/metrics`)).body;
      return Number(body.split('\n').find((line) => line.startsWith(`pitcrew_agent_tls_connections{stage="${stage}"} `))?.split(' ')[1]);
    };
    const { port, hostname } = new URL(env.listening!.httpsUrl);
    // A peer that opens a connection and says nothing holds a place in the gate.
    const silent = net.connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    await new Promise((resolve) => silent.once('connect', resolve));
    await expect.poll(() => gauge('handshaking')).toBe(1);
    expect(await gauge('waiting')).toBe(0);
    silent.destroy();
    await expect.poll(() => gauge('handshaking')).toBe(0);
  });

  it('time each agent\'s hello until its welcome, and count the agents welcomed while they stay connected', async () => {
    const sample = async (name: string) => {
      const body = (await get(`${env.listening!.metricsUrl}/metrics`)).body;
      return Number(body.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1]);
    };
    const hellosBefore = await sample('pitcrew_agent_hello_duration_seconds_count');
    const enrolled = await env.enrol('metrics-1');
    const agent = await connectRawAgent(env.listening!.httpsUrl, enrolled.token, 'metrics-1');
    // Connected but not yet welcomed: not counted.
    expect(await sample('pitcrew_agents_connected')).toBe(0);
    await agent.hello();
    expect(await sample('pitcrew_agent_hello_duration_seconds_count')).toBe(hellosBefore + 1);
    const seconds = await sample('pitcrew_agent_hello_duration_seconds_sum');
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(10);
    expect(await sample('pitcrew_agents_connected')).toBe(1);
    await agent.close();
    await expect.poll(() => sample('pitcrew_agents_connected')).toBe(0);
  });
});

describe('metrics with PITCREW_METRICS_TOKEN', () => {
  const token = 'prometheus-scrape-token-0123456789';
  let env: TestEnv;
  let tenantId: string;
  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true, metricsToken: token });
    tenantId = await throttleOnce(env);
  });
  afterAll(() => env.close());

  it('are served on both API ports and the metrics listener to a scraper that sends the token, and to nobody else', async () => {
    for (const base of [env.listening!.httpUrl, env.listening!.httpsUrl, env.listening!.metricsUrl]) {
      const ok = await get(`${base}/metrics`, { authorization: `Bearer ${token}` });
      expect(ok.status, base).toBe(200);
      expect(ok.body).toContain(`pitcrew_ingress_throttled_total{tenant="${tenantId}"}`);
      for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${token}x` }, { authorization: `Bearer ${env.tenant.token}` }, { authorization: `Basic ${token}` }]) {
        const refused = await get(`${base}/metrics`, headers);
        expect(refused.status, `${base} ${JSON.stringify(headers)}`).toBe(401);
        expect(refused.type).toMatch(/^application\/problem\+json/);
        expect(refused.challenge).toBe('Bearer realm="pitcrew metrics"');
        expect(JSON.parse(refused.body)).toMatchObject({ code: 'PITCREW_ERR_UNAUTHENTICATED', detail: expect.stringContaining('PITCREW_METRICS_TOKEN') });
        expect(refused.body).not.toContain(tenantId);
        expect(refused.body).not.toContain(token);
      }
    }
  });
});

describe('pitcrew server', () => {
  let server: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-metrics-'));
    server = await startServer({ PITCREW_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves metrics on PITCREW_METRICS_ADDR and not on its HTTP or HTTPS port, and says where', async () => {
    expect((await get(`${server.url}/metrics`)).status).toBe(404);
    expect((await get(`${server.httpsUrl}/metrics`)).status).toBe(404);
    const reply = await get(`${server.metricsUrl}/metrics`);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatch(/^pitcrew_process_cpu_seconds_total /m);
    expect(server.output()).toContain(`Prometheus metrics: ${server.metricsUrl}/metrics; not on the API ports (set PITCREW_METRICS_TOKEN to serve them there)`);
  });
});
