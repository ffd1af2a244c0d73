import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { solidPng } from './png.js';

/**
 * An emulator of the two Grafana HTTP API reads a panel capture makes (src/integrations/grafana/graph.ts).
 * Where each behaviour comes from:
 *
 * - Authentication: a service account token in `Authorization: Bearer` (grafana.com/docs "Service
 *   accounts", "Use a service account token"); a token Grafana does not know is 401
 *   {"message":"Invalid API key","messageId":"api-key.invalid","statusCode":401,"traceID":""}
 *   (pkg/services/authn/clients/api_key.go errAPIKeyInvalid, rendered by pkg/api/response's errutil
 *   error JSON); no credential at all is 401 {"message":"Unauthorized"}.
 * - GET /api/dashboards/uid/{uid} (HTTP API "Get dashboard by uid"): 200 {dashboard:{id, uid,
 *   title, panels:[{id, type, title, gridPos, targets}], ...}, meta:{slug, url, folderTitle, ...}};
 *   unknown uid 404 {"message":"Dashboard not found","status":"not-found"} (pkg/services/dashboards
 *   ErrDashboardNotFound).
 * - POST /api/ds/query (HTTP API "Data source query"; pkg/api/ds_query.go): {queries:[{refId,
 *   datasource:{uid, type}, expr, intervalMs, maxDataPoints}], from, to (ms as text)} -> {results:
 *   {<refId>:{status:200, frames:[{schema:{refId, fields:[{name:"Time", type:"time"}, {name:"Value",
 *   type:"number", labels}]}, data:{values:[[ms...], [values...]]}}]}}}; a series without points in
 *   the window has no frame; a query that fails makes the answer HTTP 400 (toJsonStreamingResponse's
 *   statusWhenError) with {status:400, error:"bad_data: …", errorSource:"downstream", frames:[]} for
 *   its refId. The query language is the emulator's own narrow PromQL: a metric name and {labels}.
 * - GET /render/d-solo/{uid}/{slug}?panelId&from&to&width&height&tz&timeout (pkg/api/render.go
 *   RenderToPng): a PNG of width x height, `Content-Type: image/png`; a width that is not an
 *   integer 400 {"message":"Render parameters error"}; rendering that fails (no renderer set up)
 *   500 {"message":"Rendering failed."} (`renderFails`).
 *
 * Every request is recorded; any other method or path is 404 and recorded in `failures` (a graph
 * capture only reads: POST /api/ds/query runs queries, it changes nothing).
 */

export interface GrafanaPanel {
  id: number;
  title: string;
  /** Its queries (default one: node_load1) and datasource (default the prometheus `prom`). */
  targets?: Array<Record<string, unknown>>;
  datasource?: { uid: string; type: string };
  /** A row's panels (a collapsed row holds them). */
  panels?: GrafanaPanel[];
}

export interface GrafanaRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  status: number;
}

export interface GrafanaEmulator {
  url: string;
  tokens: Set<string>;
  dashboards: Map<string, { title: string; slug: string; panels: GrafanaPanel[] }>;
  requests: GrafanaRequest[];
  failures: string[];
  /** What each query (expr) answers over time: its points ([ms, value]). */
  series: Map<string, Array<[number, number]>>;
  /** The renderer fails (Grafana without the image renderer answers so). */
  renderFails: boolean;
  close(): Promise<void>;
}

export async function startGrafanaEmulator(): Promise<GrafanaEmulator> {
  function query(raw: string): { status: number; body: unknown } {
    let body: { queries?: Array<Record<string, unknown>>; from?: string; to?: string };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      return { status: 400, body: { message: 'bad request data' } };
    }
    if (!Array.isArray(body.queries) || body.queries.length === 0) return { status: 400, body: { message: 'No queries found' } };
    const from = Number(body.from);
    const to = Number(body.to);
    if (!Number.isFinite(from) || !Number.isFinite(to)) emulator.failures.push('ds/query without from and to');
    let failed = false;
    const results: Record<string, unknown> = {};
    for (const q of body.queries) {
      const refId = String(q.refId ?? 'A');
      const ds = q.datasource as { uid?: string } | undefined;
      if (ds?.uid !== 'prom') emulator.failures.push(`ds/query of an unknown datasource ${JSON.stringify(ds)}`);
      const expr = String(q.expr ?? '');
      if (!/^[a-zA-Z_:][\w:]*(\{[^}]*\})?$/.test(expr)) {
        failed = true;
        results[refId] = { status: 400, error: `bad_data: 1:${expr.length}: parse error: unexpected character in ${expr}`, errorSource: 'downstream', frames: [] };
        continue;
      }
      const points = (emulator.series.get(expr) ?? []).filter(([at]) => at >= from && at <= to);
      results[refId] = {
        status: 200,
        frames: points.length === 0 ? [] : [{ schema: { refId, meta: { type: 'timeseries-multi', typeVersion: [0, 1] }, fields: [{ name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' } }, { name: 'Value', type: 'number', typeInfo: { frame: 'float64' }, labels: { __name__: expr.replace(/\{.*$/, '') } }] }, data: { values: [points.map(([at]) => at), points.map(([, v]) => v)] } }],
      };
    }
    return { status: failed ? 400 : 200, body: { results } };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://grafana');
      const record: GrafanaRequest = { method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), authorization: req.headers.authorization, status: 0 };
      emulator.requests.push(record);
      const json = (status: number, body: unknown) => {
        record.status = status;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const auth = req.headers.authorization;
      if (auth === undefined) return json(401, { message: 'Unauthorized' });
      const token = /^Bearer (.+)$/.exec(auth)?.[1];
      if (token === undefined || !emulator.tokens.has(token)) return json(401, { message: 'Invalid API key', messageId: 'api-key.invalid', statusCode: 401, traceID: '' });

      const byUid = /^\/api\/dashboards\/uid\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && byUid) {
        const uid = decodeURIComponent(byUid[1]!);
        const dashboard = emulator.dashboards.get(uid);
        if (!dashboard) return json(404, { message: 'Dashboard not found', status: 'not-found' });
        return json(200, {
          dashboard: { id: 7, uid, title: dashboard.title, tags: [], timezone: 'browser', schemaVersion: 39, version: 3, panels: dashboard.panels.map((p, i) => ({ type: 'timeseries', gridPos: { h: 8, w: 12, x: 0, y: i * 8 }, datasource: { type: 'prometheus', uid: 'prom' }, targets: [{ refId: 'A', expr: 'node_load1', datasource: { type: 'prometheus', uid: 'prom' } }], ...p })) },
          meta: { type: 'db', canSave: false, canEdit: false, slug: dashboard.slug, url: `/d/${uid}/${dashboard.slug}`, folderTitle: 'General', provisioned: false },
        });
      }
      if (req.method === 'POST' && url.pathname === '/api/ds/query') {
        const answer = query(Buffer.concat(chunks).toString('utf8'));
        return json(answer.status, answer.body);
      }
      const render = /^\/render\/d-solo\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && render) {
        const width = url.searchParams.get('width') ?? '800';
        const height = url.searchParams.get('height') ?? '400';
        if (!/^\d+$/.test(width) || !/^\d+$/.test(height)) return json(400, { message: 'Render parameters error' });
        if (emulator.renderFails) return json(500, { message: 'Rendering failed.' });
        for (const name of ['panelId', 'from', 'to']) if (!url.searchParams.has(name)) emulator.failures.push(`render without ${name}`);
        record.status = 200;
        return void res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'private' }).end(solidPng(Number(width), Number(height)));
      }
      emulator.failures.push(`${req.method} ${url.pathname}: not one of the reads a panel capture makes`);
      json(404, { message: 'Not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const emulator: GrafanaEmulator = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens: new Set(),
    dashboards: new Map(),
    requests: [],
    failures: [],
    series: new Map(),
    renderFails: false,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
