import type { Graph, GraphCapture, GraphSource } from '../graph-source.js';
import { callImage, callJson, graphSettingError, toolRefused, ToolImportError, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';
import { apiOf, datadogCalls, datadogKeys, type DatadogKeys } from './import.js';

/*
 * The monitor's graph as Datadog renders it (issue 39, docs/graph-snapshots.md#datadog), with the
 * keys the Datadog import holds (DD-API-KEY, DD-APPLICATION-KEY; the application key scoped to
 * monitors_read and timeseries_query), GETs only, at the site's API (import.ts apiOf):
 *
 * - The query: the rule's graphs (metric queries, `avg:system.cpu.user{host:web-1}`), else the
 *   monitor's: the webhook's alert_query ($ALERT_QUERY) or `GET /api/v1/monitor/{id}` ("Get a
 *   monitor's details", id from $ALERT_ID), whose metric monitor query
 *   `avg(last_5m):avg:system.cpu.user{*} by {host} > 90` gives the metric query before the
 *   comparison (Datadog draws the monitor's threshold itself only on its own pages); the alert's scope ($ALERT_SCOPE, `host:web-1`) narrows its `{*}`.
 * - `GET /api/v1/query?from&to&query` (seconds; "Query timeseries points": {status, series:[{metric,
 *   pointlist, scope}]}; 400 {errors} for a query it cannot parse): that the query is valid and has
 *   data in the window, which the snapshot API does not say (it renders an empty graph).
 * - `GET /api/v1/graph/snapshot?metric_query&start&end&title&width&height` ("Take graph snapshots":
 *   {graph_def, metric_query, snapshot_url}); the PNG at snapshot_url (Datadog's storage, no keys
 *   sent) is there "after some delay" (the API reference's note): asked again, a bounded number of
 *   times, while it answers 403 or 404.
 */

const TOOL = 'Datadog';
const HINTS = { 403: 'Datadog refused the keys: check the API key, and that the application key is of this organisation with the monitors_read and timeseries_query scopes', 429: 'Datadog’s rate limit: the next capture tries again' };
/** "avg(last_5m):avg:system.cpu.user{*} by {host} > 90": a metric monitor's query, before its comparison. */
const MONITOR_QUERY = /^\s*\w+\(\s*last_\w+\s*\)\s*:\s*(.+?)\s*(?:>=|<=|>|<|==)\s*-?\d+(?:\.\d+)?\s*$/;

export interface DatadogGraphOptions {
  /** How often, and how many times, the snapshot's image is asked for before the capture gives up. */
  pollMs?: number;
  attempts?: number;
}

interface Query {
  query: string;
  title: string;
}

export class DatadogGraphSource implements GraphSource {
  readonly tool = TOOL;
  private readonly pollMs: number;
  private readonly attempts: number;

  constructor(options: DatadogGraphOptions = {}) {
    this.pollMs = options.pollMs ?? 1000;
    this.attempts = options.attempts ?? 15;
  }

  async capture(request: GraphCapture): Promise<Graph[]> {
    const api = apiOf(request.config, (tool, field, message) => graphSettingError(tool, `config/${field}`, message));
    const keys = keysOf(request.secret);
    const call = datadogCalls(api, keys, HINTS);
    const queries = request.graphs.length > 0 ? request.graphs.map((query) => ({ query: query.trim(), title: query.trim() })) : [await monitorQuery(request, call)];
    const graphs: Graph[] = [];
    for (const query of queries) graphs.push(await this.snapshot(request, call, query));
    return graphs;
  }

  private async snapshot(request: GraphCapture, call: (path: string, query: Record<string, string | number>) => ToolCall, query: Query): Promise<Graph> {
    const from = Math.floor(request.from / 1000);
    const to = Math.ceil(request.to / 1000);
    const points = call('/api/v1/query', { from, to, query: query.query });
    const data = await callJson(request, { ...points, hints: { ...HINTS, 400: `Datadog cannot read the query ${query.query}: check the rule’s graph` } });
    if (!isRecord(data) || !Array.isArray(data.series)) throw toolRefused(points, `an answer without series for ${query.query}${isRecord(data) && typeof data.error === 'string' ? `: ${data.error}` : ''}`);
    if (!data.series.some((s) => isRecord(s) && Array.isArray(s.pointlist) && s.pointlist.length > 0)) {
      throw toolRefused(points, `no data for ${query.query} between ${new Date(request.from).toISOString()} and ${new Date(request.to).toISOString()}`);
    }
    const taking = call('/api/v1/graph/snapshot', { metric_query: query.query, start: from, end: to, title: query.title, width: request.width, height: request.height });
    const answer = await callJson(request, taking);
    const url = isRecord(answer) && typeof answer.snapshot_url === 'string' && URL.canParse(answer.snapshot_url) ? answer.snapshot_url : undefined;
    if (url === undefined) throw toolRefused(taking, `an answer without a snapshot_url for ${query.query}`);
    const image = await this.whenReady(request, { tool: TOOL, url });
    return { kind: 'image', title: query.title, query: query.query, contentType: 'image/png', bytes: image.bytes, width: request.width, height: request.height };
  }

  /** The snapshot's image, asked for again while Datadog has not stored it yet (403 or 404), at most `attempts` times. */
  private async whenReady(request: GraphCapture, call: ToolCall): Promise<{ bytes: Uint8Array }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await callImage(request, { ...call, hints: { 403: 'not stored yet', 404: 'not stored yet' } });
      } catch (error) {
        const pending = error instanceof ToolImportError && (error.toolStatus === 403 || error.toolStatus === 404);
        if (!pending) throw error;
        if (attempt >= this.attempts) throw toolRefused(call, `the snapshot was not ready after ${attempt} tries over ${(attempt * this.pollMs) / 1000} s: its storage still answered HTTP ${error.toolStatus}`, error.toolStatus);
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      request.signal.throwIfAborted();
    }
  }
}

/** The monitor's metric query: the webhook's alert_query, else the monitor's own; narrowed to the alert's scope. */
async function monitorQuery(request: GraphCapture, call: (path: string, query: Record<string, string | number>) => ToolCall): Promise<Query> {
  const payload = request.alert.payload;
  let monitorQuery = typeof payload.alert_query === 'string' && payload.alert_query.trim() !== '' ? payload.alert_query : undefined;
  let name = request.alert.alarmName;
  if (monitorQuery === undefined) {
    const id = typeof payload.alert_id === 'string' || typeof payload.alert_id === 'number' ? String(payload.alert_id).trim() : '';
    if (!/^\d+$/.test(id)) throw graphSettingError(TOOL, 'graphs', 'the alert names no monitor (add "alert_id": "$ALERT_ID" to the webhook payload) and the rule no graph: name a metric query in the rule’s graphs');
    const monitorCall = call(`/api/v1/monitor/${id}`, {});
    const monitor = await callJson(request, { ...monitorCall, hints: { ...HINTS, 404: `no monitor ${id} in this organisation` } });
    if (!isRecord(monitor) || typeof monitor.query !== 'string') throw toolRefused(monitorCall, 'an answer without the monitor’s query');
    monitorQuery = monitor.query;
    if (typeof monitor.name === 'string') name = monitor.name;
  }
  const parsed = MONITOR_QUERY.exec(monitorQuery);
  if (!parsed) throw graphSettingError(TOOL, 'graphs', `the monitor's query "${monitorQuery}" is not a metric monitor's: name the metric query to draw in the rule’s graphs`);
  const scope = typeof payload.alert_scope === 'string' ? payload.alert_scope : '';
  return { query: narrowed(parsed[1]!, scope), title: name };
}

/** The query's first scope `{...}` with the alert's scope tags added (`*` replaced): the group that alerted. */
export function narrowed(query: string, scope: string): string {
  const tags = scope.split(',').map((t) => t.trim()).filter((t) => t !== '' && t !== '*');
  if (tags.length === 0) return query;
  return query.replace(/\{([^}]*)\}/, (_, inner: string) => {
    const own = inner.split(',').map((t) => t.trim()).filter((t) => t !== '' && t !== '*');
    return `{${[...new Set([...own, ...tags])].join(',')}}`;
  });
}

function keysOf(secret: unknown): DatadogKeys {
  const keys = datadogKeys(secret);
  if (keys) return keys;
  throw graphSettingError(TOOL, 'secret', 'Datadog graphs are read with {"apiKey", "applicationKey"}: an application key scoped to monitors_read and timeseries_query');
}
