import type { Graph, GraphCapture, GraphSource } from '../graph-source.js';
import { baseUrl, callImage, callJson, graphSettingError, toolRefused, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';

/*
 * A Grafana panel as Grafana renders it (issue 39, docs/graph-snapshots.md#grafana), read with a
 * service account token (`Authorization: Bearer glsa_…`, grafana.com/docs "Service accounts"; the
 * Viewer role is enough) at config.grafanaUrl, never at an address an alert names:
 *
 * - `GET /api/dashboards/uid/{uid}` (Grafana HTTP API "Get dashboard by uid": {dashboard:{uid,
 *   title, panels:[{id, title, type, panels?}]}, meta:{slug, url}}; 404 {"message":"Dashboard not
 *   found"}): the dashboard's slug for the render path, and that the panel is there (the render API
 *   answers a missing panel with a picture of the error, HTTP 200).
 * - `POST /api/ds/query` {queries:[the panel's targets with their datasource], from, to} (HTTP API
 *   "Data source query", pkg/api/ds_query.go: {results:{<refId>:{status, frames:[{schema, data:
 *   {values:[[times], [values]]}}], error?}}}, HTTP 400 when a query fails): that the panel's
 *   queries are valid and have data in the window, which the render API does not say (it draws
 *   "No data" or the query's error, HTTP 200). A read, though a POST. Skipped for a panel whose
 *   queries use dashboard variables (`$host`: the browser fills them in, not this API) or
 *   expressions, whose picture is stored as Grafana draws it.
 * - `GET /render/d-solo/{uid}/{slug}?orgId&panelId&from&to&width&height&tz` (grafana
 *   pkg/api/render.go RenderToPng: width, height, timeout, scale, tz; answers image/png, or 500
 *   {"message":"Rendering failed."} when no image renderer is set up or it fails).
 *
 * A graph is named `<dashboard uid>/<panel id>`, or by the panel's link as Grafana shows it (a
 * `/d/<uid>/<slug>?viewPanel=<id>` or `/d-solo/<uid>/<slug>?panelId=<id>` path or URL: only its
 * uid, panel and orgId are read). Without graphs, the alert's own panel: the panelURL Grafana's
 * webhook gives an alert of a panel's rule.
 */

const TOOL = 'Grafana';
const HINTS = { 401: 'Grafana refused the service account token: set the integration’s graph secret to a valid token (glsa_…)', 403: 'the service account cannot view this dashboard: give it the Viewer role on its folder' };
/** Grafana's renderer waits this long for the panel's queries (its own default is 60 s). */
const RENDER_TIMEOUT_S = 30;

interface PanelRef {
  uid: string;
  panelId: number;
  orgId: string | undefined;
  /** As the rule or the alert gave it, for messages. */
  query: string;
}

export class GrafanaGraphSource implements GraphSource {
  readonly tool = TOOL;

  async capture(request: GraphCapture): Promise<Graph[]> {
    const root = baseUrl(request.config.grafanaUrl);
    if (!root) throw graphSettingError(TOOL, 'config/grafanaUrl', 'grafanaUrl must be the http(s) address of Grafana (e.g. https://grafana.example.com) for its panels to be captured');
    const token = tokenOf(request.secret);
    const refs = request.graphs.length > 0 ? request.graphs.map(parsePanelRef) : [alertPanel(request.alert.payload)];
    const graphs: Graph[] = [];
    for (const ref of refs) graphs.push(await this.render(request, root, token, ref));
    return graphs;
  }

  private async render(request: GraphCapture, root: string, token: string, ref: PanelRef): Promise<Graph> {
    const call = (url: string): ToolCall => ({ tool: TOOL, url, headers: { authorization: `Bearer ${token}` }, hints: HINTS, secrets: [token] });
    const org: Record<string, string> = ref.orgId === undefined ? {} : { orgId: ref.orgId };
    const dashboardCall = call(`${root}/api/dashboards/uid/${encodeURIComponent(ref.uid)}${ref.orgId === undefined ? '' : `?orgId=${encodeURIComponent(ref.orgId)}`}`);
    const answer = await callJson(request, { ...dashboardCall, hints: { ...HINTS, 404: `no dashboard with uid ${ref.uid} (${ref.query}): check the rule’s graph` } });
    const dashboard = isRecord(answer) && isRecord(answer.dashboard) ? answer.dashboard : undefined;
    if (!dashboard) throw toolRefused(dashboardCall, 'an answer without a dashboard: is grafanaUrl Grafana’s address?');
    const panel = findPanel(dashboard.panels, ref.panelId);
    const dashboardTitle = typeof dashboard.title === 'string' ? dashboard.title : ref.uid;
    if (!panel) throw toolRefused(dashboardCall, `dashboard "${dashboardTitle}" has no panel ${ref.panelId} (${ref.query}): check the rule’s graph`);
    await checkData(request, call(`${root}/api/ds/query${ref.orgId === undefined ? '' : `?orgId=${encodeURIComponent(ref.orgId)}`}`), panel, ref);
    const slug = isRecord(answer) && isRecord(answer.meta) && typeof answer.meta.slug === 'string' && answer.meta.slug !== '' ? answer.meta.slug : 'dashboard';
    const params = new URLSearchParams({ ...org, panelId: String(ref.panelId), from: String(request.from), to: String(request.to), width: String(request.width), height: String(request.height), tz: 'UTC', timeout: String(RENDER_TIMEOUT_S) });
    const image = await callImage(request, call(`${root}/render/d-solo/${encodeURIComponent(ref.uid)}/${encodeURIComponent(slug)}?${params}`));
    const title = typeof panel.title === 'string' && panel.title !== '' ? `${dashboardTitle} / ${panel.title}` : dashboardTitle;
    return { kind: 'image', title, query: ref.query, contentType: 'image/png', bytes: image.bytes, width: request.width, height: request.height };
  }
}

/** The panel's queries, run over the window: a failure is the query invalid, frames without values no data. */
async function checkData(request: GraphCapture, call: ToolCall, panel: Record<string, unknown>, ref: PanelRef): Promise<void> {
  const queries = panelQueries(panel);
  if (queries === undefined) return;
  const body = JSON.stringify({ queries, from: String(request.from), to: String(request.to) });
  const answer = await callJson(request, { ...call, method: 'POST', headers: { ...call.headers, 'content-type': 'application/json' }, body, hints: { ...HINTS, 400: `a query of panel ${ref.query} failed over the window` } });
  const results = isRecord(answer) && isRecord(answer.results) ? Object.values(answer.results).filter(isRecord) : [];
  const hasValues = results.some((result) => (Array.isArray(result.frames) ? result.frames : []).some((frame) => {
    const values = isRecord(frame) && isRecord(frame.data) && Array.isArray(frame.data.values) ? frame.data.values : [];
    return values.some((column) => Array.isArray(column) && column.length > 0);
  }));
  if (!hasValues) throw toolRefused({ ...call, method: 'POST' }, `no data for panel ${ref.query} between ${new Date(request.from).toISOString()} and ${new Date(request.to).toISOString()}`);
}

/** The panel's visible targets, each with its datasource; undefined when Grafana's API cannot run them as they are (variables, expressions, no datasource). */
function panelQueries(panel: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const targets = (Array.isArray(panel.targets) ? panel.targets.filter(isRecord) : []).filter((t) => t.hide !== true);
  if (targets.length === 0 || JSON.stringify(targets).includes('$')) return undefined;
  const queries: Record<string, unknown>[] = [];
  for (const target of targets) {
    const datasource = isRecord(target.datasource) ? target.datasource : isRecord(panel.datasource) ? panel.datasource : undefined;
    const uid = datasource?.uid;
    if (typeof uid !== 'string' || uid === '' || uid.includes('$') || uid === '-- Mixed --' || datasource?.type === '__expr__') return undefined;
    queries.push({ ...target, datasource: { uid, type: datasource?.type }, intervalMs: 15_000, maxDataPoints: 600 });
  }
  return queries;
}

/** A panel of the dashboard by id, in a row's panels too (a collapsed row keeps its panels inside it). */
function findPanel(panels: unknown, id: number): Record<string, unknown> | undefined {
  for (const panel of Array.isArray(panels) ? panels : []) {
    if (!isRecord(panel)) continue;
    if (panel.id === id) return panel;
    const inner = findPanel(panel.panels, id);
    if (inner) return inner;
  }
  return undefined;
}

/** `<uid>/<panelId>`, or a panel's link (path or URL) with /d/ or /d-solo/ and viewPanel or panelId. */
export function parsePanelRef(graph: string): PanelRef {
  const text = graph.trim();
  const short = /^([A-Za-z0-9_-]{1,40})\/(\d+)$/.exec(text);
  if (short) return { uid: short[1]!, panelId: Number(short[2]), orgId: undefined, query: text };
  const url = URL.canParse(text) ? new URL(text) : URL.canParse(text, 'http://grafana') ? new URL(text, 'http://grafana') : undefined;
  const uid = url === undefined ? undefined : /\/d(?:-solo)?\/([A-Za-z0-9_-]{1,40})(?:\/|$)/.exec(url.pathname)?.[1];
  const panel = url?.searchParams.get('viewPanel') ?? url?.searchParams.get('panelId') ?? undefined;
  // Grafana 11 names a library or scene panel "panel-4" in viewPanel.
  const panelId = panel === undefined ? Number.NaN : Number(panel.replace(/^panel-/, ''));
  if (uid === undefined || !Number.isInteger(panelId)) {
    throw graphSettingError(TOOL, 'graphs', `"${text}" is not a Grafana panel: give <dashboard uid>/<panel id> (e.g. hosts/4) or the panel's link (/d/<uid>/<slug>?viewPanel=<id>)`);
  }
  return { uid, panelId, orgId: url?.searchParams.get('orgId') ?? undefined, query: text };
}

/** The alert's own panel: the panelURL of the alert (Grafana's webhook sets it for a rule linked to a panel). */
function alertPanel(payload: Record<string, unknown>): PanelRef {
  const alerts = Array.isArray(payload.alerts) ? payload.alerts.filter(isRecord) : [];
  const panelUrl = [payload, ...alerts].map((alert) => alert.panelURL).find((url): url is string => typeof url === 'string' && url !== '');
  if (panelUrl === undefined) {
    throw graphSettingError(TOOL, 'graphs', 'the alert names no panel (its rule is not linked to a dashboard panel): name the panel in the rule’s graphs, <dashboard uid>/<panel id>');
  }
  return parsePanelRef(panelUrl);
}

function tokenOf(secret: unknown): string {
  if (typeof secret === 'string' && secret.trim() !== '') return secret.trim();
  throw graphSettingError(TOOL, 'secret', 'Grafana panels are read with a service account token: set it as the integration’s graph secret');
}
