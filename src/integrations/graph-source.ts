import type { PolicyFetch } from '../egress/fetch.js';

/*
 * How a graph snapshot (issue 39, docs/graph-snapshots.md) reads a tool's graphs. Each tool that
 * has graphs gives a GraphSource in integrations/<tool>/graph.ts, listed in graph-sources.ts, as
 * its importer is in importers.ts. A source reads; it never writes to the tool, and every call goes
 * through `fetch` (the tenant's egress policy) and tool-api.ts's error wording (the tool, the call,
 * what it answered, secrets blotted out).
 */

/** The alert a capture is about: what the rule's event carried. */
export interface GraphAlert {
  alarmName: string;
  hostname: string | undefined;
  /** The alert's labels (Alertmanager labels, Monasca dimensions, Datadog tags as name: value). */
  labels: Record<string, string>;
  /** Alertmanager's generatorURL: only its expression is used, never its address. */
  generatorURL: string | undefined;
  /** Epoch ms: when the alert began (the tool's time where it gives one), marked on the graph. */
  startedAt: number;
  /** The tool's own body as it arrived, for what a source needs beyond the above (a monitor id, a metric name). */
  payload: Record<string, unknown>;
}

/** One capture: what to draw, over which window, with what. */
export interface GraphCapture {
  /** The integration's non-secret settings (its `config`): where the tool's graphs are read (prometheusUrl, grafanaUrl, ...). */
  config: Record<string, unknown>;
  /**
   * The read-only credential, opened: the integration's graph secret, else its import's secret or
   * stored credential (an AWS credential's secret for CloudWatch), else the integration's own
   * (Monasca's Keystone token). Undefined when there is none.
   */
  secret: unknown;
  /** The rule's graphs (queries or panel references) in the tool's own terms; empty: the alert's own metric. */
  graphs: readonly string[];
  alert: GraphAlert;
  /** Epoch ms, the window drawn. */
  from: number;
  to: number;
  /** The width in pixels the picture is for (an e-mail's width by default); tools that render images are asked for it. */
  width: number;
  height: number;
  fetch: PolicyFetch;
  signal: AbortSignal;
}

/** One series of numbers, as pulled from a tool that gives data (Prometheus, Monasca), drawn by pitcrew. */
export interface GraphSeries {
  /** The legend's text: the series' labels as the tool gives them, `{instance="web-1", job="node"}`. */
  name: string;
  labels: Record<string, string>;
  /** [epoch ms, value], in time order; NaN for a gap. */
  points: Array<[number, number]>;
}

/** What a source captured for one graph: numbers pitcrew renders, or an image the tool rendered, stored as it came. */
export type Graph =
  | { kind: 'series'; title: string; query: string; series: GraphSeries[]; threshold?: number; unit?: string }
  | { kind: 'image'; title: string; query: string; contentType: 'image/png' | 'image/svg+xml'; bytes: Uint8Array; width: number; height: number };

export interface GraphSource {
  /** The tool as people name it in messages: "Prometheus", "Grafana". */
  tool: string;
  /**
   * The graphs of one capture, one per requested graph (or the alert's own when none was asked).
   * A failure (tool unreachable, credential refused, query invalid, no data in the window) throws
   * an error whose message names the tool, the query and what the tool answered.
   */
  capture(request: GraphCapture): Promise<Graph[]>;
}
