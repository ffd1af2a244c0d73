import type { FieldError } from '../../errors/catalogue.js';
import type { ImportNeeds } from '../import-needs.js';
import type { AlarmObservation, ImportPage, ImportRequest, Importer } from '../observation.js';
import { callJson, readCursor, toolRefused, writeCursor, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';
import { hostFromAddress, readHostLabel } from './alert.js';
import { alertLabels, labelSetFingerprint } from './fingerprint.js';
import { authOf, matrix, prometheus, textLabels, urlRoot, type Auth } from './prometheus-api.js';

/**
 * The import of an `alertmanager` integration (docs/incidents-import.md), from up to two places:
 *
 * - Prometheus (config.prometheusUrl), the history: `ALERTS{alertstate="firing"}` over a range,
 *   `GET /api/v1/query_range` (Prometheus HTTP API, "Range queries": {status, data:{resultType:
 *   "matrix", result:[{metric, values:[[seconds, "value"]]}]}}), PAGE_POINTS steps a page from the
 *   look-back (or the cursor) to now. Each firing span of a series becomes a firing observation
 *   and, once it ends, a resolved one. Their times come from the raw samples around the span's
 *   ends (`GET /api/v1/query` of a range selector, whose matrix keeps each sample's timestamp): it
 *   fired at its first sample (the evaluation Prometheus sends Alertmanager as startsAt, FiredAt)
 *   and resolved one evaluation after its last (ResolvedAt, Alertmanager's endsAt); so an imported
 *   span and the same alert's notifications are one incident. A span firing since before the
 *   look-back opens when `ALERTS_FOR_STATE` says it became active. The key is Alertmanager's
 *   fingerprint of the series' labels less `__name__` and `alertstate` (fingerprint.ts).
 * - Alertmanager (config.alertmanagerUrl), what is open now: `GET /api/v2/alerts` (Alertmanager's
 *   OpenAPI v2, api/v2/openapi.yaml `getAlerts`: [{labels, annotations, startsAt, endsAt,
 *   updatedAt, fingerprint, status:{state, silencedBy, inhibitedBy}, receivers, generatorURL}]),
 *   silenced and inhibited ones included. Its page names every open key (`openKeys`): an open
 *   incident of the integration that Alertmanager no longer has resolves.
 *
 * The cursor remembers where Prometheus was read to and which alerts were open at that point
 * (a span across pages is one incident, not a new firing on every page), and which Alertmanager
 * alerts were already taken (an alert still open is not taken again at every import).
 */
export class AlertmanagerImporter implements Importer {
  async importPage(request: ImportRequest): Promise<ImportPage> {
    const config = readConfig(request.config);
    const cursor = readCursor(TOOL, request.cursor, isCursor) ?? {};
    const headers = authOf(request.secret);
    if (config.prometheusUrl) {
      const from = cursor.promAt === undefined ? alignUp(request.since, config.stepMs) : cursor.promAt + config.stepMs;
      const end = alignDown(request.now, config.stepMs);
      if (from <= end) {
        const to = Math.min(end, from + (PAGE_POINTS - 1) * config.stepMs);
        const open = { ...cursor.promOpen };
        const observations = await readPrometheus(request, config, headers, from, to, open, cursor.promAt === undefined);
        return { observations, cursor: writeCursor({ ...cursor, promAt: to, promOpen: open }), more: to < end || config.alertmanagerUrl !== undefined };
      }
    }
    if (!config.alertmanagerUrl) return { observations: [], cursor: writeCursor(cursor), more: false };
    const { observations, open } = await readAlertmanager(request, config, headers, cursor);
    return { observations, openKeys: Object.keys(open), cursor: writeCursor({ ...cursor, amOpen: open }), more: false };
  }
}

/** Steps per query_range page: under Prometheus's 11,000 points per series (a day at 10 s, a week at the default minute). */
const PAGE_POINTS = 10_000;
const DEFAULT_STEP_SECONDS = 60;

interface Config {
  alertmanagerUrl: string | undefined;
  prometheusUrl: string | undefined;
  hostLabel: string;
  stepMs: number;
}

/** An open alarm as the cursor keeps it: enough to say it resolved on a later page. */
type OpenAlarm = [alarmName: string, hostname: string | null, severity: string | null];

interface Cursor {
  /** Prometheus: the last step read (epoch ms). */
  promAt?: number;
  /** Prometheus: the series firing at promAt, by key. */
  promOpen?: Record<string, OpenAlarm>;
  /** Alertmanager: the alerts taken, open at the last read: key → startsAt (epoch ms). */
  amOpen?: Record<string, number>;
}

async function readPrometheus(request: ImportRequest, config: Config, headers: Auth, from: number, to: number, open: Record<string, OpenAlarm>, firstImport: boolean): Promise<AlarmObservation[]> {
  const step = config.stepMs;
  const range = `${config.prometheusUrl}/api/v1/query_range?${new URLSearchParams({ query: FIRING, start: seconds(from), end: seconds(to), step: seconds(step) })}`;
  const firing = await matrix(request, prometheus(range, headers));

  // The spans on the step grid: where each starts (its first step; a span open at the last page
  // continues), and where it ends (its last step, and the first step without it).
  interface Span { key: string; alarm: OpenAlarm; start: number | undefined; last: number; ended: boolean }
  const spans: Span[] = [];
  const seen = new Set<string>();
  for (const series of firing) {
    const labels = alertLabels(series.metric);
    const key = labelSetFingerprint(labels);
    seen.add(key);
    const alarm: OpenAlarm = [labels.alertname || '(no alertname)', hostOf(labels, config.hostLabel), labels.severity || null];
    let span: Span | undefined = open[key] ? { key, alarm, start: undefined, last: from - step, ended: false } : undefined;
    for (const [t] of series.values) {
      if (span && t - span.last <= step) {
        span.last = t;
        continue;
      }
      if (span) spans.push({ ...span, ended: true });
      span = { key, alarm, start: t, last: t, ended: false };
    }
    if (span) spans.push({ ...span, ended: span.last < to });
  }
  // Open at the last page and absent from this one: it ended after the last page's last step.
  for (const [key, alarm] of Object.entries(open)) if (!seen.has(key)) spans.push({ key, alarm, start: undefined, last: from - step, ended: true });

  // The exact times: the raw samples around each start and end (a range selector at that step), so
  // that a span opens at the evaluation it fired at and resolves one evaluation after its last:
  // Alertmanager's startsAt and endsAt for the same alert.
  const samples = await rawSamples(request, config, headers, new Set(spans.flatMap((span) => [...(span.start === undefined ? [] : [span.start]), ...(span.ended ? [span.last] : [])])));
  const activeAt = firstImport ? await activeSince(request, config, headers, from) : new Map<string, number>();
  const observations: AlarmObservation[] = [];
  for (const span of spans) {
    const [alarmName, hostname, severity] = span.alarm;
    const observe = (state: 'firing' | 'resolved', at: number) => observations.push({ incidentKey: span.key, alarmName, hostname, severity, state, at });
    if (span.start !== undefined) {
      const before = span.start === from && firstImport ? activeAt.get(span.key) : undefined;
      const first = samples.get(span.start)?.get(span.key)?.find((t) => t > span.start! - step);
      // Firing since before the look-back: since when Prometheus says (ALERTS_FOR_STATE, to the second).
      observe('firing', before !== undefined && before < from ? before : first ?? span.start);
    }
    if (span.ended) {
      const times = (samples.get(span.last)?.get(span.key) ?? []).filter((t) => t <= span.last);
      const last = times[times.length - 1];
      const interval = times.length >= 2 ? last! - times[times.length - 2]! : undefined;
      const firstWithout = span.last + step;
      observe('resolved', last !== undefined && interval !== undefined && last + interval <= firstWithout ? last + interval : firstWithout);
      delete open[span.key];
    } else {
      open[span.key] = span.alarm;
    }
  }
  // The tool's order of time, so an incident sees its firing before its resolve across series.
  return observations.sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
}

const FIRING = 'ALERTS{alertstate="firing"}';
/** The tool named in the messages of a cursor it cannot read. */
const TOOL = 'Alertmanager';

/**
 * The raw samples (epoch ms) of every firing alert in the two steps up to each time asked: one
 * instant query of a range selector per distinct time, `GET /api/v1/query` (its matrix keeps each
 * sample's own timestamp, where query_range gives the step's).
 */
async function rawSamples(request: ImportRequest, config: Config, headers: Auth, times: Set<number>): Promise<Map<number, Map<string, number[]>>> {
  const out = new Map<number, Map<string, number[]>>();
  for (const time of [...times].sort((a, b) => a - b)) {
    const url = `${config.prometheusUrl}/api/v1/query?${new URLSearchParams({ query: `${FIRING}[${(2 * config.stepMs) / 1000}s]`, time: seconds(time) })}`;
    const bySeries = new Map<string, number[]>();
    for (const series of await matrix(request, prometheus(url, headers))) {
      bySeries.set(labelSetFingerprint(alertLabels(series.metric)), series.values.map(([t]) => t));
    }
    out.set(time, bySeries);
  }
  return out;
}

/** When each alert firing at `time` became active (`ALERTS_FOR_STATE`'s value, seconds): for spans older than the look-back. */
async function activeSince(request: ImportRequest, config: Config, headers: Auth, time: number): Promise<Map<string, number>> {
  const url = `${config.prometheusUrl}/api/v1/query?${new URLSearchParams({ query: 'ALERTS_FOR_STATE', time: seconds(time) })}`;
  const answer = await callJson(request, prometheus(url, headers));
  const data = isRecord(answer) && isRecord(answer.data) && Array.isArray(answer.data.result) ? answer.data.result : [];
  const out = new Map<string, number>();
  for (const item of data) {
    if (!isRecord(item) || !isRecord(item.metric) || !Array.isArray(item.value)) continue;
    out.set(labelSetFingerprint(alertLabels(textLabels(item.metric))), Math.round(Number(item.value[1]) * 1000));
  }
  return out;
}

async function readAlertmanager(request: ImportRequest, config: Config, headers: Auth, cursor: Cursor): Promise<{ observations: AlarmObservation[]; open: Record<string, number> }> {
  const url = `${config.alertmanagerUrl}/api/v2/alerts?${new URLSearchParams({ active: 'true', silenced: 'true', inhibited: 'true', unprocessed: 'true' })}`;
  const call: ToolCall = { tool: 'Alertmanager', url, ...headers };
  const answer = await callJson(request, call);
  if (!Array.isArray(answer)) throw toolRefused(call, "an answer that is not a list of alerts: is alertmanagerUrl Alertmanager's address (port 9093 by default)?");
  const observations: AlarmObservation[] = [];
  const open: Record<string, number> = {};
  const taken = cursor.amOpen ?? {};
  for (const alert of answer) {
    if (!isRecord(alert) || typeof alert.fingerprint !== 'string' || !isRecord(alert.labels)) continue;
    const startsAt = typeof alert.startsAt === 'string' ? Date.parse(alert.startsAt) : Number.NaN;
    const endsAt = typeof alert.endsAt === 'string' ? Date.parse(alert.endsAt) : Number.NaN;
    // Resolved but not yet forgotten by Alertmanager: not open.
    if (!Number.isNaN(endsAt) && endsAt <= request.now) continue;
    const key = alert.fingerprint;
    const at = Number.isNaN(startsAt) ? null : startsAt;
    open[key] = at ?? 0;
    // Taken already: at an earlier import, or as a span Prometheus showed still open.
    if (taken[key] === open[key] || cursor.promOpen?.[key]) continue;
    const labels = textLabels(alert.labels);
    observations.push({ incidentKey: key, alarmName: labels.alertname || '(no alertname)', hostname: hostOf(labels, config.hostLabel), severity: labels.severity || null, state: 'firing', at });
  }
  return { observations, open };
}

function hostOf(labels: Record<string, string>, hostLabel: string): string | null {
  const value = labels[hostLabel];
  return value === undefined || value === '' ? null : hostFromAddress(value);
}

function readConfig(config: Record<string, unknown>): Config {
  const hostLabel = readHostLabel(config, '/config');
  const step = typeof config.prometheusStepSeconds === 'number' ? config.prometheusStepSeconds : DEFAULT_STEP_SECONDS;
  return {
    alertmanagerUrl: urlRoot(config.alertmanagerUrl),
    prometheusUrl: urlRoot(config.prometheusUrl),
    hostLabel: typeof hostLabel === 'string' ? hostLabel : 'instance',
    stepMs: step * 1000,
  };
}

function isCursor(state: Record<string, unknown>): state is Record<string, unknown> & Cursor {
  return (state.promAt === undefined || typeof state.promAt === 'number') && (state.promOpen === undefined || isRecord(state.promOpen)) && (state.amOpen === undefined || isRecord(state.amOpen));
}

const alignUp = (ms: number, step: number) => Math.ceil(ms / step) * step;
const alignDown = (ms: number, step: number) => Math.floor(ms / step) * step;
const seconds = (ms: number) => String(ms / 1000);

/** The settings of an alertmanager integration an import reads (checked with the rest of its config, alert.ts). */
export function checkImportConfig(config: Record<string, unknown>, at: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of ['alertmanagerUrl', 'prometheusUrl'] as const) {
    const value = config[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !/^https?:\/\/[^/]/.test(value) || !URL.canParse(value)) {
      errors.push({ path: `${at}/${name}`, message: `${name} must be the http or https address of ${name === 'alertmanagerUrl' ? 'Alertmanager, e.g. http://alertmanager:9093' : 'Prometheus, e.g. http://prometheus:9090'}` });
    }
  }
  const step = config.prometheusStepSeconds;
  if (step !== undefined && (typeof step !== 'number' || !Number.isInteger(step) || step < 1 || step > 3600)) {
    errors.push({ path: `${at}/prometheusStepSeconds`, message: 'prometheusStepSeconds must be a whole number of seconds from 1 to 3600 (the step of its range queries: a span shorter than a step may be missed; default 60)' });
  }
  return errors;
}

export const alertmanagerImportNeeds: ImportNeeds = {
  tool: 'Alertmanager',
  secretShape: 'none, a bearer token (a string), or {"username", "password"} for a proxy in front of Alertmanager and Prometheus',
  credentialProviders: [],
  integrationSecret: false,
  secretErrors(secret, at) {
    if (typeof secret === 'string') return [];
    if (isRecord(secret) && typeof secret.username === 'string' && typeof secret.password === 'string' && Object.keys(secret).length === 2) return [];
    return [{ path: at, message: 'an Alertmanager or Prometheus import takes no secret, a bearer token (a string), or {username, password} for basic authentication at a proxy in front of them' }];
  },
  settingsErrors({ config }) {
    if (urlRoot(config.alertmanagerUrl) || urlRoot(config.prometheusUrl)) return [];
    return [{
      path: '/body/config/alertmanagerUrl',
      message: "an import reads what is open from Alertmanager's GET /api/v2/alerts at config.alertmanagerUrl and the history from Prometheus's ALERTS at config.prometheusUrl: set one or both in the integration's config",
    }];
  },
};
