import type { Graph, GraphCapture, GraphSeries, GraphSource } from '../graph-source.js';
import { callJson, graphSettingError, toolRefused, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';
import { KeystoneTokens } from './tokens.js';

/*
 * The alarm's metrics as numbers, drawn by pitcrew (issue 39, docs/graph-snapshots.md#monasca):
 * `GET {monascaUrl}/v2.0/metrics/measurements?name&dimensions&start_time&end_time&group_by=*`
 * with the Keystone token in X-Auth-Token (openstack/monasca-api docs/monasca-api-spec.md "List
 * measurements": {links, elements:[{id, name, dimensions, columns:["timestamp","value",
 * "value_meta"], measurements:[[ISO time, value, {meta}]]}]}, paged by the `next` link's offset;
 * dimensions as `key:value,key:value`; group_by=* gives one element per metric the name and
 * dimensions match, instead of the API's 409 when they match more than one).
 *
 * The token: the integration's kept token, or one issued from a Keystone login (tokens.ts, as the
 * import gets it). A graph is a metric as an alarm expression names it, `cpu.system_perc` or
 * `cpu.system_perc{hostname=web-1,service=monitoring}`; without graphs, the alarm's own metrics
 * (the webhook's `metrics: [{name, dimensions}]`, one graph per metric). Reads only.
 */

const TOOL = 'Monasca';
const HINTS = { 401: 'Monasca refused the token: keep a new one on the integration, or check the graph secret’s Keystone login', 403: 'the Keystone user lacks the monasca-user role in the project' };
/** A loop guard on the measurements' pages, not a quota: each page holds up to the API's limit (10,000). */
const MAX_PAGES = 20;
/** Monasca's own metric name and dimension grammar (monasca-common validation): what a graph may name. */
const METRIC = /^\s*([^{}\s]+)\s*(?:\{([^}]*)\})?\s*$/;

interface Metric {
  name: string;
  dimensions: Record<string, string>;
  query: string;
}

export class MonascaGraphSource implements GraphSource {
  readonly tool = TOOL;
  private readonly tokens = new KeystoneTokens('graph');

  async capture(request: GraphCapture): Promise<Graph[]> {
    const root = monascaRoot(request.config.monascaUrl);
    const metrics = request.graphs.length > 0 ? request.graphs.map(parseMetric) : alarmMetrics(request.alert.payload);
    return this.tokens.withToken({ secret: request.secret, fetch: request.fetch, now: Date.now() }, async (token) => {
      const graphs: Graph[] = [];
      for (const metric of metrics) graphs.push({ kind: 'series', title: metric.query, query: metric.query, series: await measurements(request, root, token, metric) });
      return graphs;
    });
  }
}

async function measurements(request: GraphCapture, root: string, token: string, metric: Metric): Promise<GraphSeries[]> {
  const params = new URLSearchParams({ name: metric.name, start_time: new Date(request.from).toISOString(), end_time: new Date(request.to).toISOString(), group_by: '*' });
  const dimensions = Object.entries(metric.dimensions).map(([key, value]) => `${key}:${value}`).join(',');
  if (dimensions !== '') params.set('dimensions', dimensions);
  const series = new Map<string, GraphSeries>();
  let offset: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    if (offset !== undefined) params.set('offset', offset);
    const call: ToolCall = { tool: TOOL, url: `${root}/v2.0/metrics/measurements?${params}`, headers: { 'x-auth-token': token }, hints: { ...HINTS, 422: `Monasca cannot read the metric ${metric.query}: check the rule’s graph` }, secrets: [token] };
    const answer = await callJson(request, call);
    if (!isRecord(answer) || !Array.isArray(answer.elements)) throw toolRefused(call, 'an answer without an elements list: is monascaUrl the Monasca API (port 8070 by default)?');
    for (const element of answer.elements.filter(isRecord)) addElement(series, element);
    const next = nextOffset(answer.links);
    if (next === undefined || next === offset || answer.elements.length === 0) {
      const found = [...series.values()].filter((s) => s.points.length > 0);
      if (found.length === 0) throw toolRefused(call, `no measurements of ${metric.query} between ${new Date(request.from).toISOString()} and ${new Date(request.to).toISOString()}`);
      return found;
    }
    offset = next;
  }
  throw toolRefused({ tool: TOOL, url: `${root}/v2.0/metrics/measurements` }, `a next page after ${MAX_PAGES} pages of measurements of ${metric.query}: its paging links loop`);
}

/** One element's measurements, added to its metric's series (a metric's measurements may run over pages). */
function addElement(series: Map<string, GraphSeries>, element: Record<string, unknown>): void {
  const name = typeof element.name === 'string' ? element.name : '';
  const labels: Record<string, string> = {};
  if (isRecord(element.dimensions)) for (const [key, value] of Object.entries(element.dimensions)) if (typeof value === 'string') labels[key] = value;
  const columns = Array.isArray(element.columns) ? element.columns : ['timestamp', 'value'];
  const at = columns.indexOf('timestamp');
  const val = columns.indexOf('value');
  const legend = `${name}{${Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}="${v}"`).join(', ')}}`;
  const entry = series.get(legend) ?? { name: legend, labels, points: [] };
  for (const row of Array.isArray(element.measurements) ? element.measurements : []) {
    if (!Array.isArray(row)) continue;
    const time = typeof row[at] === 'string' ? Date.parse(row[at]) : Number.NaN;
    if (Number.isNaN(time)) continue;
    entry.points.push([time, typeof row[val] === 'number' ? row[val] : Number.NaN]);
  }
  entry.points.sort((a, b) => a[0] - b[0]);
  series.set(legend, entry);
}

/** `name` or `name{key=value,key=value}` (an alarm expression's notation; `key:value` too). */
export function parseMetric(graph: string): Metric {
  const match = METRIC.exec(graph);
  const dimensions: Record<string, string> = {};
  for (const pair of (match?.[2] ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const split = /^([^=:]+)[=:](.*)$/.exec(pair);
    if (!split) throw graphSettingError(TOOL, 'graphs', `"${graph}" is not a Monasca metric: dimensions are key=value pairs, e.g. cpu.system_perc{hostname=web-1}`);
    dimensions[split[1]!.trim()] = split[2]!.trim();
  }
  if (!match) throw graphSettingError(TOOL, 'graphs', `"${graph}" is not a Monasca metric: give its name and dimensions, e.g. cpu.system_perc{hostname=web-1}`);
  return { name: match[1]!, dimensions, query: graph.trim() };
}

/** The webhook's metrics, one per distinct name and dimensions. */
function alarmMetrics(payload: Record<string, unknown>): Metric[] {
  const metrics = new Map<string, Metric>();
  for (const metric of Array.isArray(payload.metrics) ? payload.metrics.filter(isRecord) : []) {
    if (typeof metric.name !== 'string' || metric.name === '') continue;
    const dimensions: Record<string, string> = {};
    if (isRecord(metric.dimensions)) for (const [key, value] of Object.entries(metric.dimensions)) if (typeof value === 'string') dimensions[key] = value;
    const pairs = Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
    const query = pairs.length > 0 ? `${metric.name}{${pairs.join(',')}}` : metric.name;
    metrics.set(query, { name: metric.name, dimensions, query });
  }
  if (metrics.size === 0) throw graphSettingError(TOOL, 'graphs', 'the alarm names no metric (its webhook has no metrics): name one in the rule’s graphs, e.g. cpu.system_perc{hostname=web-1}');
  return [...metrics.values()];
}

/** The offset of a `next` link: only the offset, the link names the host the API believes it has. */
function nextOffset(links: unknown): string | undefined {
  for (const link of Array.isArray(links) ? links : []) {
    if (isRecord(link) && link.rel === 'next' && typeof link.href === 'string' && URL.canParse(link.href)) return new URL(link.href).searchParams.get('offset') ?? undefined;
  }
  return undefined;
}

function monascaRoot(value: unknown): string {
  if (typeof value !== 'string' || !URL.canParse(value)) throw graphSettingError(TOOL, 'config/monascaUrl', 'monascaUrl must be the Monasca API’s address (e.g. http://monasca:8070) for its measurements to be read');
  const url = new URL(value);
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v2\.0$/, '')}`;
}
