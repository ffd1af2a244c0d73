import { PitcrewError } from '../../errors/catalogue.js';
import type { Graph, GraphCapture, GraphSeries, GraphSource } from '../graph-source.js';
import { toolRefused } from '../tool-api.js';
import { alertSeries, drawnQuery, expressionOf, MissingLabelError, withLabels } from './promql.js';
import { authOf, matrix, prometheus, urlRoot, type Series } from './prometheus-api.js';

/**
 * The graphs of an alertmanager integration's alert (docs/graph-snapshots.md, "Prometheus"): the
 * alert's own expression (generatorURL's `g0.expr`) or the rule's queries with the alert's labels
 * put in (`{{ $labels.NAME }}`), read as numbers from `GET {prometheusUrl}/api/v1/query_range`
 * (never generatorURL's address: an alert body does not choose where pitcrew connects).
 */
export class PrometheusGraphSource implements GraphSource {
  readonly tool = TOOL;

  async capture(request: GraphCapture): Promise<Graph[]> {
    const base = urlRoot(request.config.prometheusUrl);
    if (!base) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${TOOL} graph: the integration has no prometheusUrl; set config.prometheusUrl to where pitcrew reads Prometheus (http://prometheus:9090)`);
    const graphs = [];
    for (const wanted of wantedQueries(request)) graphs.push(await readGraph(request, base, wanted));
    return graphs;
  }
}

const TOOL = 'Prometheus';
/** Steps a graph is drawn with: about one per 2-3 pixels at e-mail width, far under Prometheus's 11,000 points per series. */
const STEPS = 300;

interface Wanted {
  /** As the rule or the alert gave it. */
  expression: string;
  ownAlert: boolean;
}

function wantedQueries(request: GraphCapture): Wanted[] {
  const { alert } = request;
  if (request.graphs.length > 0) {
    return request.graphs.map((query) => {
      try {
        return { expression: withLabels(query, alert.labels), ownAlert: false };
      } catch (error) {
        if (error instanceof MissingLabelError) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${TOOL} graph: ${error.message} (labels: ${Object.keys(alert.labels).join(', ') || 'none'})`);
        throw error;
      }
    });
  }
  const expression = expressionOf(alert.generatorURL);
  if (!expression) {
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `${TOOL} graph: the alert names no expression (its generatorURL has no g0.expr) and the action names no graphs; give the action graphs: ["<PromQL>"]`);
  }
  return [{ expression, ownAlert: true }];
}

async function readGraph(request: GraphCapture, base: string, wanted: Wanted): Promise<Graph> {
  const { query, threshold } = drawnQuery(wanted.expression);
  const stepSeconds = Math.max(1, Math.ceil((request.to - request.from) / 1000 / STEPS));
  const params = new URLSearchParams({ query, start: String(request.from / 1000), end: String(request.to / 1000), step: String(stepSeconds) });
  const call = { ...prometheus(`${base}/api/v1/query_range?${params}`, authOf(request.secret)), operation: `query_range of ${query}` };
  const read = await matrix(request, call);
  const shown = wanted.ownAlert ? alertSeries(read, request.alert.labels) : read;
  if (shown.length === 0 || shown.every((one) => one.values.length === 0)) {
    throw toolRefused(call, `no data between ${iso(request.from)} and ${iso(request.to)}: the query matched no series in the window`);
  }
  return {
    kind: 'series',
    title: wanted.ownAlert ? `${request.alert.alarmName}: ${query}` : query,
    query,
    series: shown.map((one) => toGraphSeries(one, stepSeconds * 1000)),
    ...(threshold === undefined ? {} : { threshold }),
  };
}

/** A series as drawn: a NaN where Prometheus skipped a step (no sample), so the line breaks there. */
function toGraphSeries(series: Series, stepMs: number): GraphSeries {
  const points: Array<[number, number]> = [];
  let last: number | undefined;
  for (const [at, text] of series.values) {
    if (last !== undefined && at - last > stepMs * 1.5) points.push([last + stepMs, Number.NaN]);
    const value = Number(text);
    points.push([at, Number.isFinite(value) ? value : Number.NaN]);
    last = at;
  }
  return { name: seriesName(series.metric), labels: series.metric, points };
}

/** Prometheus's own notation: `node_load1{instance="web-1", job="node"}`. */
export function seriesName(metric: Record<string, string>): string {
  const { __name__: name = '', ...labels } = metric;
  const pairs = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  return pairs.length === 0 && name ? name : `${name}{${pairs.join(', ')}}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
