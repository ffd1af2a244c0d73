import type { AlarmObservation, Importer, ImportPage, ImportRequest } from '../observation.js';
import { baseUrl, callJson, importSecretError, importSettingError, isoMs, readCursor, toolRefused, windowEnd, writeCursor, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';

/*
 * PagerDuty incidents and their resolutions, read with a read-only REST API key (PagerDuty: Integrations
 * → API Access Keys → "Read-only API Key"), GETs only, with `Authorization: Token token=<key>` and
 * `Accept: application/vnd.pagerduty+json;version=2` (PagerDuty/api-schema reference/REST/openapiv3.json:
 * securitySchemes.api_key, parameter header_Accept).
 *
 * - GET /incidents?since&until&statuses[]=triggered|acknowledged|resolved&time_zone=UTC&sort_by=created_at:asc
 *   &limit&offset -> {incidents, limit, offset, more}: the incidents created in the window, each a
 *   firing at its created_at. (since/until: "Maximum range is 6 months"; limit at most 100.)
 * - GET /log_entries?since&until&time_zone=UTC&is_overview=true&include[]=incidents&limit&offset ->
 *   {log_entries, ...more}: each resolve_log_entry in the window is a resolution at its created_at,
 *   whenever its incident was created; include[]=incidents gives the incident's title and service.
 * Windows are [from, to): an entry exactly on a boundary is read once, whichever way PagerDuty's
 * since/until include it; a window spans at most 7 days, so a look-back of 30 days is a few windows
 * (and offset paging stays far from PagerDuty's 10,000-record ceiling for most accounts).
 *
 * Key: the incident id (observation.ts), as in the webhook's event.data.id. Name: the incident's
 * title; severity: its urgency (as parse.ts). Host: PagerDuty names none; as the webhook parser, the
 * integration's config.hostField (a dot path into the incident, e.g. "service.summary") says where
 * it is, else there is none.
 */

const TOOL = 'PagerDuty';
const MAX_WINDOW_MS = 7 * 86_400_000;
const HINTS = {
  401: 'check the REST API key (PagerDuty → Integrations → API Access Keys; a read-only key is enough)',
  403: 'the key may not read incidents or log entries: use a general access REST API key, read-only',
  429: 'PagerDuty\'s rate limit: the import tries again at its next run',
};

export interface PagerDutyImportOptions {
  /** Records per page (`limit`, at most 100). */
  pageSize?: number;
}

interface PagerDutyCursor {
  phase: 'incidents' | 'log';
  from: number;
  to: number | null;
  offset: number;
}

function isCursor(state: Record<string, unknown>): state is Record<string, unknown> & PagerDutyCursor {
  return (state.phase === 'incidents' || state.phase === 'log') && typeof state.from === 'number' && (state.to === null || typeof state.to === 'number') && typeof state.offset === 'number';
}

export class PagerDutyImporter implements Importer {
  private readonly pageSize: number;

  constructor(options: PagerDutyImportOptions = {}) {
    this.pageSize = Math.min(options.pageSize ?? 100, 100);
  }

  async importPage(request: ImportRequest): Promise<ImportPage> {
    const api = request.config.apiUrl === undefined ? 'https://api.pagerduty.com' : baseUrl(request.config.apiUrl);
    if (!api) throw importSettingError(TOOL, 'apiUrl', 'apiUrl must be the http(s) URL of the PagerDuty REST API: https://api.pagerduty.com, or https://api.eu.pagerduty.com for an EU account');
    if (typeof request.secret !== 'string' || request.secret.trim() === '') throw importSecretError(TOOL, 'a PagerDuty REST API key (a string)');
    const key = request.secret.trim();
    const state: PagerDutyCursor = readCursor(TOOL, request.cursor, isCursor) ?? { phase: 'incidents', from: request.since, to: null, offset: 0 };
    const to = state.to ?? Math.min(windowEnd(state.from, request.now), state.from + MAX_WINDOW_MS);
    const get = async (path: string, query: Array<[string, string]>, field: string) => {
      const call: ToolCall = {
        tool: TOOL,
        url: `${api}${path}?${new URLSearchParams(query).toString()}`,
        headers: { authorization: `Token token=${key}`, accept: 'application/vnd.pagerduty+json;version=2', 'content-type': 'application/json' },
        hints: HINTS,
        secrets: [key],
      };
      const answer = await callJson(request, call);
      if (!isRecord(answer) || !Array.isArray(answer[field])) throw toolRefused(call, `an answer without ${field}`);
      return { list: (answer[field] as unknown[]).filter(isRecord), more: answer.more === true };
    };
    const window: Array<[string, string]> = [['since', new Date(state.from).toISOString()], ['until', new Date(to).toISOString()], ['time_zone', 'UTC'], ['limit', String(this.pageSize)], ['offset', String(state.offset)]];
    const inWindow = (ms: number | null): ms is number => ms !== null && ms >= state.from && ms < to;
    const hostField = request.config.hostField;

    if (state.phase === 'incidents') {
      const answer = await get('/incidents', [...window, ['statuses[]', 'triggered'], ['statuses[]', 'acknowledged'], ['statuses[]', 'resolved'], ['sort_by', 'created_at:asc']], 'incidents');
      const incidents = answer.list;
      const observations: AlarmObservation[] = [];
      for (const incident of incidents) {
        const created = isoMs(incident.created_at);
        if (inWindow(created)) observations.push(observe(incident, 'firing', created, hostField));
      }
      const next: PagerDutyCursor = answer.more && incidents.length > 0 ? { ...state, to, offset: state.offset + incidents.length } : { ...state, to, phase: 'log', offset: 0 };
      return { observations, cursor: writeCursor(next), more: true };
    }

    const answer = await get('/log_entries', [...window, ['is_overview', 'true'], ['include[]', 'incidents']], 'log_entries');
    const entries = answer.list;
    const observations: AlarmObservation[] = [];
    for (const entry of entries) {
      const at = isoMs(entry.created_at);
      if (entry.type !== 'resolve_log_entry' || !inWindow(at) || !isRecord(entry.incident)) continue;
      observations.push(observe(entry.incident, 'resolved', at, hostField));
    }
    if (answer.more && entries.length > 0) return { observations, cursor: writeCursor({ ...state, to, offset: state.offset + entries.length }), more: true };
    // The window is read; the next starts where it ended, now if it has settled.
    const next: PagerDutyCursor = { phase: 'incidents', from: to, to: null, offset: 0 };
    return { observations, cursor: writeCursor(next), more: windowEnd(to, request.now) > to };
  }
}

function observe(incident: Record<string, unknown>, state: 'firing' | 'resolved', at: number, hostField: unknown): AlarmObservation {
  return {
    incidentKey: String(incident.id),
    alarmName: text(incident.title) ?? text(incident.summary) ?? `incident ${String(incident.id)}`,
    hostname: hostOf(incident, hostField) ?? null,
    severity: text(incident.urgency) ?? null,
    state,
    at,
  };
}

/** config.hostField, a dot path into the incident, as pagerduty/parse.ts reads it from the webhook's event.data. */
function hostOf(incident: Record<string, unknown>, hostField: unknown): string | undefined {
  if (typeof hostField !== 'string' || hostField.trim() === '') return undefined;
  let value: unknown = incident;
  for (const step of hostField.trim().split('.')) {
    if (!isRecord(value) || !Object.hasOwn(value, step)) return undefined;
    value = value[step];
  }
  return text(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
