import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GrafanaGraphSource, parsePanelRef } from '../src/integrations/grafana/graph.js';
import { startTestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { captureOf, failureOf } from './support/graph-capture.js';
import { startGrafanaEmulator, type GrafanaEmulator } from './support/grafana-emulator.js';
import { pngSize } from './support/png.js';

/*
 * Grafana's graph source (src/integrations/grafana/graph.ts) against the emulator of Grafana's
 * dashboard and render APIs (test/support/grafana-emulator.ts: pkg/api/render.go, "Get dashboard
 * by uid", service account tokens), over HTTP through the service's egress-checked fetch.
 */

const TOKEN = 'glsa_Emulat0rServiceAccountT0ken000_1a2b3c4d';
let grafana: GrafanaEmulator;

beforeEach(async () => {
  grafana = await startGrafanaEmulator();
  grafana.tokens.add(TOKEN);
  const prom = { type: 'prometheus', uid: 'prom' };
  grafana.dashboards.set('hosts', {
    title: 'Hosts', slug: 'hosts',
    panels: [
      { id: 2, title: 'CPU' },
      { id: 9, title: 'Disks', panels: [{ id: 4, title: 'Disk busy', targets: [{ refId: 'A', expr: 'node_disk_io_time_seconds_total{device="sda"}', datasource: prom }] }] },
      { id: 5, title: 'Quiet', targets: [{ refId: 'A', expr: 'node_never_scraped', datasource: prom }] },
      { id: 6, title: 'Broken', targets: [{ refId: 'A', expr: 'rate(node_cpu[5m]', datasource: prom }] },
      { id: 7, title: 'Templated', targets: [{ refId: 'A', expr: 'node_load1{instance="$host"}', datasource: prom }] },
    ],
  });
  const minutes = (value: number) => Array.from({ length: 120 }, (_, i) => [Date.now() - 7_200_000 + i * 60_000, value] as [number, number]);
  grafana.series.set('node_load1', minutes(1.5));
  grafana.series.set('node_disk_io_time_seconds_total{device="sda"}', minutes(0.4));
});

afterEach(async () => {
  // A capture only reads: every request a GET or the data source query, none the emulator does not serve.
  expect(grafana.failures).toEqual([]);
  expect(grafana.requests.every((r) => r.method === 'GET' || (r.method === 'POST' && r.path === '/api/ds/query'))).toBe(true);
  await grafana.close();
});

const source = new GrafanaGraphSource();
const config = () => ({ grafanaUrl: grafana.url });

describe('Grafana graph source', () => {
  it('renders the named panel over the window at the width asked, and stores the PNG as Grafana drew it', async () => {
    const request = captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/4'] });
    const [graph, ...rest] = await source.capture(request);
    expect(rest).toEqual([]);
    expect(graph).toMatchObject({ kind: 'image', title: 'Hosts / Disk busy', query: 'hosts/4', contentType: 'image/png', width: 600, height: 300 });
    expect(pngSize((graph as { bytes: Uint8Array }).bytes)).toEqual({ width: 600, height: 300 });
    const render = grafana.requests.find((r) => r.path.startsWith('/render/'))!;
    expect(render.path).toBe('/render/d-solo/hosts/hosts');
    expect(render.query).toMatchObject({ panelId: '4', from: String(request.from), to: String(request.to), width: '600', height: '300', tz: 'UTC' });
    expect(grafana.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(grafana.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['GET /api/dashboards/uid/hosts 200', 'POST /api/ds/query 200', 'GET /render/d-solo/hosts/hosts 200']);
    expect(request.sent.urls).toHaveLength(3);
  });

  it('without graphs, captures the alert’s own panel from its panelURL, connecting only to grafanaUrl', async () => {
    const payload = { alerts: [{ panelURL: 'https://grafana.elsewhere.example/d/hosts/hosts?orgId=1&viewPanel=2' }] };
    const request = captureOf({ config: config(), secret: TOKEN, alert: { payload } });
    const [graph] = await source.capture(request);
    expect(graph).toMatchObject({ title: 'Hosts / CPU', query: payload.alerts[0]!.panelURL });
    expect(request.sent.urls.every((u) => u.startsWith(grafana.url))).toBe(true);
    expect(grafana.requests.find((r) => r.path.startsWith('/render/'))!.query).toMatchObject({ orgId: '1', panelId: '2' });
  });

  it('a refused token is Grafana’s answer in words, without the token', async () => {
    const error = await failureOf(source.capture(captureOf({ config: config(), secret: 'glsa_NotTheToken0000000000000000_00000000', graphs: ['hosts/2'] })));
    expect(error.code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect(error.message).toMatch(/^Grafana refused GET http:\/\/127\.0\.0\.1:\d+\/api\/dashboards\/uid\/hosts: HTTP 401: Invalid API key; Grafana refused the service account token/);
    expect(error.message).not.toContain('NotTheToken');
  });

  it('a dashboard or panel that is not there names the graph and what Grafana answered; nothing is rendered', async () => {
    const noDashboard = await failureOf(source.capture(captureOf({ config: config(), secret: TOKEN, graphs: ['gone/2'] })));
    expect(noDashboard.message).toMatch(/^Grafana refused GET http:\/\/127\.0\.0\.1:\d+\/api\/dashboards\/uid\/gone: HTTP 404: Dashboard not found; no dashboard with uid gone \(gone\/2\)/);
    const noPanel = await failureOf(source.capture(captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/77'] })));
    expect(noPanel.message).toMatch(/dashboard "Hosts" has no panel 77 \(hosts\/77\)/);
    expect(grafana.requests.some((r) => r.path.startsWith('/render/'))).toBe(false);
    expect(() => parsePanelRef('CPU panel')).toThrow(/"CPU panel" is not a Grafana panel/);
  });

  it('a panel whose query fails is the query invalid, one without data in the window no data; neither is rendered', async () => {
    const broken = await failureOf(source.capture(captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/6'] })));
    expect(broken.message).toMatch(/^Grafana refused POST http:\/\/127\.0\.0\.1:\d+\/api\/ds\/query: HTTP 400: bad_data: 1:17: parse error: unexpected character in rate\(node_cpu\[5m\]; a query of panel hosts\/6 failed over the window$/);
    const request = captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/5'] });
    const quiet = await failureOf(source.capture(request));
    expect(quiet.message).toBe(`Grafana refused POST ${grafana.url}/api/ds/query: no data for panel hosts/5 between ${new Date(request.from).toISOString()} and ${new Date(request.to).toISOString()}`);
    expect(grafana.requests.some((r) => r.path.startsWith('/render/'))).toBe(false);
    // A panel with dashboard variables cannot be queried as it is: Grafana's picture is stored as it comes.
    const [templated] = await source.capture(captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/7'] }));
    expect(templated).toMatchObject({ kind: 'image', title: 'Hosts / Templated' });
  });

  it('rendering that fails (no image renderer) and an unreachable Grafana are failures that name the tool', async () => {
    grafana.renderFails = true;
    const failed = await failureOf(source.capture(captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/2'] })));
    expect(failed.message).toMatch(/^Grafana refused GET http:\/\/127\.0\.0\.1:\d+\/render\/d-solo\/hosts\/hosts: HTTP 500: Rendering failed\./);
    const closed = await startGrafanaEmulator();
    const address = closed.url;
    await closed.close();
    const unreachable = await failureOf(source.capture(captureOf({ config: { grafanaUrl: address }, secret: TOKEN, graphs: ['hosts/2'] })));
    expect(unreachable.code).toBe('PITCREW_ERR_TOOL_UNAVAILABLE');
    expect(unreachable.message).toMatch(/^Grafana did not answer GET http:\/\/127\.0\.0\.1:\d+\/api\/dashboards\/uid\/hosts: /);
  });

  it('the egress policy applies: a Grafana on a refused network is never reached', async () => {
    // The production policy: no private network allowed, so the emulator on loopback is refused.
    const { policyFetch } = await import('../src/egress/fetch.js');
    const { EgressPolicy } = await import('../src/egress/policy.js');
    const error = await failureOf(source.capture(captureOf({ config: config(), secret: TOKEN, graphs: ['hosts/2'], fetch: policyFetch(new EgressPolicy([])) })));
    expect(error.code).toBe('PITCREW_ERR_TOOL_UNAVAILABLE');
    expect(error.message).toMatch(/^Grafana did not answer GET http:\/\/127\.0\.0\.1:\d+\/api\/dashboards\/uid\/hosts: .*private, loopback or link-local/);
    expect(grafana.requests).toEqual([]);
  });
});

describe.each(testDialects())('Grafana graph secret through the API on %s', (dialect) => {
  it('is set write-only on the integration, sent as Authorization: Bearer by a capture, replaced and removed; its shape checked per tool', { timeout: 120_000 }, async () => {
    const env = await startTestEnv(dialect);
    try {
      const made = await env.api('POST', '/api/v1/integrations', { name: 'grafana', type: 'grafana', config: config(), graphSecret: TOKEN });
      expect(made.statusCode, made.body).toBe(201);
      expect(made.json()).toMatchObject({ hasSecret: false, hasGraphSecret: true });
      const id = made.json().id as string;
      for (const read of [made, await env.api('GET', `/api/v1/integrations/${id}`), await env.api('GET', '/api/v1/integrations')]) expect(read.body).not.toContain(TOKEN);
      const sealed = await env.store.db.selectFrom('integrations').select('graph_secret').where('id', '=', id).executeTakeFirstOrThrow();
      expect(sealed.graph_secret).not.toContain(TOKEN);

      const preview = await env.api('POST', '/api/v1/snapshots/preview', { integrationId: id, graphs: ['hosts/4'] });
      expect(preview.statusCode, preview.body).toBe(200);
      expect(preview.json().images).toMatchObject([{ title: 'Hosts / Disk busy', contentType: 'image/png' }]);
      expect(grafana.requests.map((r) => r.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);

      const wrong = 'glsa_ReplacedButWrong000000000000_00000000';
      expect((await env.api('PATCH', `/api/v1/integrations/${id}`, { graphSecret: wrong })).json()).toMatchObject({ hasGraphSecret: true });
      const refused = await env.api('POST', '/api/v1/snapshots/preview', { integrationId: id, graphs: ['hosts/4'] });
      expect(refused.statusCode).toBe(502);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json().detail).toMatch(/HTTP 401: Invalid API key; Grafana refused the service account token/);
      expect(refused.body).not.toContain(wrong);
      expect(grafana.requests.at(-1)!.authorization).toBe(`Bearer ${wrong}`);

      expect((await env.api('PATCH', `/api/v1/integrations/${id}`, { graphSecret: null })).json()).toMatchObject({ hasGraphSecret: false });
      const without = await env.api('POST', '/api/v1/snapshots/preview', { integrationId: id, graphs: ['hosts/4'] });
      expect(without.statusCode).toBe(400);
      expect(without.json().detail).toContain('set it as the integration’s graph secret');

      const notAToken = await env.api('PATCH', `/api/v1/integrations/${id}`, { graphSecret: { username: 'admin', password: 'admin' } });
      expect(notAToken.statusCode).toBe(400);
      expect(notAToken.json()).toMatchObject({ code: 'PITCREW_ERR_VALIDATION', detail: expect.stringContaining('service account token') });
      const prometheus = await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager', config: { prometheusUrl: 'http://127.0.0.1:9' }, graphSecret: { username: 'pitcrew', password: 'proxy-password' } });
      expect(prometheus.statusCode, prometheus.body).toBe(201);
      expect(prometheus.body).not.toContain('proxy-password');
      const monasca = await env.api('POST', '/api/v1/integrations', { name: 'monasca', type: 'monasca', graphSecret: 'a-token' });
      expect(monasca.statusCode).toBe(400);
      expect(monasca.json().detail).toContain("monasca graphs are read with the import's credential");
    } finally {
      await env.close();
    }
  });
});
