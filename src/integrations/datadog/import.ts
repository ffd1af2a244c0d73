import { DATADOG_SITE, SITE_MESSAGE } from './import-needs.js';
import type { AlarmObservation, Importer, ImportPage, ImportRequest } from '../observation.js';
import { baseUrl, callJson, importSecretError, importSettingError, readCursor, toolRefused, windowEnd, writeCursor, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';

/*
 * Datadog monitors and their alert events, read with an API key and an application key whose scopes
 * are monitors_read and events_read (docs.datadoghq.com/account_management/api-app-keys, "Scopes").
 * Only GETs are sent, with the keys in the DD-API-KEY and DD-APPLICATION-KEY headers, to the site's
 * API (https://api.<site>: datadoghq.com, datadoghq.eu, us3.datadoghq.com, ...).
 *
 * - History: GET /api/v2/events?filter[query]=source:alert&filter[from]&filter[to] (ms)&sort=timestamp
 *   &page[limit]&page[cursor] ("Get a list of events", docs.datadoghq.com/api/latest/events; the
 *   response shape {data:[{id, type, attributes:{timestamp, tags, message, attributes:{monitor_id,
 *   monitor_groups, monitor, title, status, hostname, timestamp}}}], meta:{page:{after}}} as the
 *   datadog-api-client-typescript cassettes record it, and EventAttributes/MonitorType models).
 *   The transition is read from the title's head as the webhook parser reads $EVENT_TITLE
 *   ("[Triggered on {host:web-1}] ..."), else from the event's status (error/warning: firing, success: resolved).
 * - Open now: GET /api/v1/monitor?group_states=all&page&page_size ("Get all monitor details"):
 *   each monitor's state.groups {name: {status, last_triggered_ts, last_nodata_ts}}. A first import
 *   takes from it the groups alerting since before the look-back, which no event in it shows.
 *
 * Key: `<monitor id>:<group>` (observation.ts), the group being the monitor group's tags joined by
 * ',' in sorted order (a monitor's state names a group "env:prod,host:web-1"; an event lists its
 * tags in monitor_groups; the webhook has them in $ALERT_SCOPE), `*` for a monitor without groups.
 * Host: the group's host: tag, else the event's hostname, else a single host: tag of the event.
 */

const TOOL = 'Datadog';
/** "[P1] [Re-Triggered on {host:web-1}] CPU high": the transition in brackets, as datadog/parse.ts reads it. */
const TITLE_HEAD = /^\s*(?:\[P\d\]\s*)?\[(?:Re-)?(Triggered|Recovered|Warn|No Data|Renotify)([^\]]*)\]\s*/i;
const FIRING_STATUSES: Record<string, string> = { Alert: 'alert', Warn: 'warn', 'No Data': 'no data' };
const HINTS = { 403: 'check the API key, and that the application key is of this organisation and has the monitors_read and events_read scopes', 429: 'Datadog\'s rate limit: the import tries again at its next run' };

export interface DatadogImportOptions {
  /** Events per page (page[limit], at most 1000) and monitors per page (page_size). */
  pageSize?: number;
}

interface DatadogCursor {
  phase: 'events' | 'monitors';
  /** The window read: [from, to) in epoch ms; `to` null until a run fixes it. */
  from: number;
  to: number | null;
  /** Phase events: page[cursor] of the next page. */
  page: string | null;
  /** Phase monitors (first import only): the next page number. */
  monitorPage: number;
  first: boolean;
}

function isCursor(state: Record<string, unknown>): state is Record<string, unknown> & DatadogCursor {
  return (
    (state.phase === 'events' || state.phase === 'monitors') &&
    typeof state.from === 'number' &&
    (state.to === null || typeof state.to === 'number') &&
    (state.page === null || typeof state.page === 'string') &&
    typeof state.monitorPage === 'number' &&
    typeof state.first === 'boolean'
  );
}

export interface DatadogKeys {
  apiKey: string;
  applicationKey: string;
}

export class DatadogImporter implements Importer {
  private readonly pageSize: number;

  constructor(options: DatadogImportOptions = {}) {
    this.pageSize = Math.min(options.pageSize ?? 500, 1000);
  }

  async importPage(request: ImportRequest): Promise<ImportPage> {
    const api = apiOf(request.config);
    const keys = keysOf(request.secret);
    const state: DatadogCursor = readCursor(TOOL, request.cursor, isCursor) ?? { phase: 'events', from: request.since, to: null, page: null, monitorPage: 0, first: true };
    const to = state.to ?? windowEnd(state.from, request.now);
    const call = datadogCalls(api, keys, HINTS);

    if (state.phase === 'events') {
      const query: Record<string, string | number> = { 'filter[query]': 'source:alert', 'filter[from]': state.from, 'filter[to]': to, sort: 'timestamp', 'page[limit]': this.pageSize };
      if (state.page !== null) query['page[cursor]'] = state.page;
      const events = call('/api/v2/events', query);
      const answer = await callJson(request, events);
      if (!isRecord(answer) || !Array.isArray(answer.data)) throw toolRefused(events, 'an answer without a data list');
      const observations = answer.data.filter(isRecord).flatMap((event) => observeEvent(event, state.from, to));
      const after = isRecord(answer.meta) && isRecord(answer.meta.page) && typeof answer.meta.page.after === 'string' ? answer.meta.page.after : null;
      if (answer.data.length > 0 && after !== null) return { observations, cursor: writeCursor({ ...state, to, page: after }), more: true };
      if (state.first) return { observations, cursor: writeCursor({ ...state, to, page: null, phase: 'monitors', monitorPage: 0 }), more: true };
      return { observations, cursor: writeCursor(nextWindow(to)), more: false };
    }

    // Phase monitors (first import): groups alerting since before the look-back.
    const monitors = call('/api/v1/monitor', { group_states: 'all', page: state.monitorPage, page_size: this.pageSize });
    const answer = await callJson(request, monitors);
    if (!Array.isArray(answer)) throw toolRefused(monitors, 'an answer that is not a list of monitors');
    const observations = answer.filter(isRecord).flatMap((monitor) => alertingBefore(monitor, state.from));
    // Until an empty page: Datadog may answer fewer than page_size asks (it caps it), so a short page is not the end.
    if (answer.length > 0) return { observations, cursor: writeCursor({ ...state, to, monitorPage: state.monitorPage + 1 }), more: true };
    return { observations, cursor: writeCursor(nextWindow(to)), more: false };
  }
}

function nextWindow(from: number): DatadogCursor {
  return { phase: 'events', from, to: null, page: null, monitorPage: 0, first: false };
}

/** The observations of one event of the list: one per monitor group it is about; none for other events. */
function observeEvent(event: Record<string, unknown>, from: number, to: number): AlarmObservation[] {
  const outer = isRecord(event.attributes) ? event.attributes : {};
  const inner = isRecord(outer.attributes) ? outer.attributes : {};
  const monitor = isRecord(inner.monitor) ? inner.monitor : {};
  const monitorId = text(inner.monitor_id) ?? text(monitor.id);
  if (monitorId === undefined) return [];
  const at = typeof inner.timestamp === 'number' ? inner.timestamp : Date.parse(String(outer.timestamp));
  // The window is [from, to): an event on the boundary belongs to one window only, whatever Datadog's filter includes.
  if (Number.isNaN(at) || at < from || at >= to) return [];
  const title = text(inner.title) ?? text(outer.title);
  const head = title === undefined ? null : TITLE_HEAD.exec(title);
  let phase = head ? head[1]!.toLowerCase() : undefined;
  if (phase === undefined) {
    const status = text(inner.status);
    phase = status === 'error' ? 'triggered' : status === 'warning' ? 'warn' : status === 'success' ? 'recovered' : undefined;
  }
  if (phase === undefined || phase === 'renotify') return [];
  const tags = Array.isArray(inner.monitor_groups) ? inner.monitor_groups.filter((t): t is string => typeof t === 'string' && t !== '') : [];
  const groupTags = tags.flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  const eventTags = Array.isArray(outer.tags) ? outer.tags.filter((t): t is string => typeof t === 'string') : [];
  const name = title === undefined ? text(monitor.name) ?? `monitor ${monitorId}` : title.replace(TITLE_HEAD, '').trim() || title;
  return [{
    incidentKey: `${monitorId}:${groupName(groupTags)}`,
    alarmName: name,
    hostname: hostTag(groupTags) ?? text(inner.hostname) ?? hostTag(eventTags) ?? null,
    severity: phase === 'triggered' ? 'alert' : phase,
    state: phase === 'recovered' ? 'resolved' : 'firing',
    at,
  }];
}

/** A monitor's groups in an alerting status since before `from`: open before the look-back. */
function alertingBefore(monitor: Record<string, unknown>, from: number): AlarmObservation[] {
  const id = text(monitor.id);
  const name = text(monitor.name);
  if (id === undefined || name === undefined) return [];
  const groups = isRecord(monitor.state) && isRecord(monitor.state.groups) ? Object.entries(monitor.state.groups).filter(([, g]) => isRecord(g)) as Array<[string, Record<string, unknown>]> : [];
  const out: AlarmObservation[] = [];
  if (groups.length === 0) {
    // A monitor without groups: its overall state.
    const severity = FIRING_STATUSES[String(monitor.overall_state)];
    const since = typeof monitor.overall_state_modified === 'string' ? Date.parse(monitor.overall_state_modified) : NaN;
    if (severity && !Number.isNaN(since) && since < from) out.push({ incidentKey: `${id}:*`, alarmName: name, hostname: null, severity, state: 'firing', at: since });
    return out;
  }
  for (const [groupKey, group] of groups) {
    const status = String(group.status);
    const severity = FIRING_STATUSES[status];
    if (!severity) continue;
    const seconds = status === 'No Data' ? group.last_nodata_ts ?? group.last_triggered_ts : group.last_triggered_ts;
    if (typeof seconds !== 'number' || seconds * 1000 >= from) continue;
    const tags = (text(group.name) ?? groupKey).split(',').map((t) => t.trim()).filter((t) => t !== '' && t !== '*');
    out.push({ incidentKey: `${id}:${groupName(tags)}`, alarmName: name, hostname: hostTag(tags) ?? null, severity, state: 'firing', at: seconds * 1000 });
  }
  return out;
}

/** The group as the key names it: its tags sorted, joined by ','; `*` when the monitor has no groups. */
export function groupName(tags: string[]): string {
  const unique = [...new Set(tags.map((t) => t.trim()).filter((t) => t !== '' && t !== '*'))].sort();
  return unique.length === 0 ? '*' : unique.join(',');
}

function hostTag(tags: string[]): string | undefined {
  const hosts = [...new Set(tags.filter((t) => t.startsWith('host:')).map((t) => t.slice(5)))];
  return hosts.length === 1 && hosts[0] !== '' ? hosts[0] : undefined;
}

/** The API's address: config.apiUrl, else the site's; `settingError` says which setting is wrong (the import's or a graph's words). */
export function apiOf(config: Record<string, unknown>, settingError: (tool: string, field: string, message: string) => Error = importSettingError): string {
  if (config.apiUrl !== undefined) {
    const url = baseUrl(config.apiUrl);
    if (!url) throw settingError(TOOL, 'apiUrl', 'apiUrl must be the http(s) URL of the Datadog API, e.g. https://api.datadoghq.eu');
    return url;
  }
  const site = config.site ?? 'datadoghq.com';
  if (typeof site !== 'string' || !DATADOG_SITE.test(site.trim().toLowerCase())) throw settingError(TOOL, 'site', SITE_MESSAGE);
  return `https://api.${site.trim().toLowerCase()}`;
}

function keysOf(secret: unknown): DatadogKeys {
  const keys = datadogKeys(secret);
  if (keys) return keys;
  throw importSecretError(TOOL, '{"apiKey", "applicationKey"}: an API key and an application key scoped to monitors_read and events_read');
}

/** The two keys Datadog reads with, from a secret `{apiKey, applicationKey}`; undefined when it is not one. Imports and graphs hold the same. */
export function datadogKeys(secret: unknown): DatadogKeys | undefined {
  if (isRecord(secret) && typeof secret.apiKey === 'string' && secret.apiKey !== '' && typeof secret.applicationKey === 'string' && secret.applicationKey !== '') {
    return { apiKey: secret.apiKey, applicationKey: secret.applicationKey };
  }
  return undefined;
}

/** The calls of one read of Datadog's API at `api`: the keys in Datadog's headers, blotted out of every message. */
export function datadogCalls(api: string, keys: DatadogKeys, hints: ToolCall['hints']): (path: string, query: Record<string, string | number>) => ToolCall {
  return (path, query) => ({
    tool: TOOL,
    url: `${api}${path}?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`,
    headers: { 'dd-api-key': keys.apiKey, 'dd-application-key': keys.applicationKey },
    hints,
    secrets: [keys.apiKey, keys.applicationKey],
  });
}

function text(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
