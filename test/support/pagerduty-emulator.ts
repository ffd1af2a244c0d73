import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An emulator of the PagerDuty REST API's GET /incidents and GET /log_entries, for the tests of
 * src/integrations/pagerduty/import.ts. Where each behaviour comes from:
 *
 * - PagerDuty/api-schema reference/REST/openapiv3.json: the parameters of both lists (since, until,
 *   statuses[], time_zone, sort_by, include[], is_overview, limit, offset), classic pagination
 *   {limit, offset, more, total}, "limit ... Maximum of 100", the Incident schema (id, type,
 *   summary, incident_number, title, created_at, status, incident_key, service reference, urgency,
 *   resolved_at, last_status_change_at...) and the response examples of both lists, the log entry
 *   types (trigger_log_entry, acknowledge_log_entry, resolve_log_entry...), the Accept header
 *   `application/vnd.pagerduty+json;version=2`, the security scheme `Authorization: Token token=<key>`.
 * - "Read-only API Keys: requests ... with methods other than GET will return ... 403" (the API's
 *   own introduction, as the generated clients reproduce it).
 * - A bad key is 401 with a body that is not JSON (PagerDuty/go-pagerduty issues #469 and #553:
 *   "HTTP response with status code 401 does not contain Content-Type: application/json").
 * - Not found: 404 {"error":{"message":"Not Found","code":2100}} (the schema's error example).
 *
 * The emulator's own choices, not checked against a source: since and until both inclusive;
 * without time_zone=UTC, times are rendered at the account's offset (-05:00); the 403 body.
 * Pages hold at most `maxPage` records whatever `limit` asks. Any other method or path is
 * recorded in `failures`.
 */

export interface EmulatedIncident {
  id: string;
  number: number;
  title: string;
  service: { id: string; summary: string };
  urgency: 'high' | 'low';
  created: number;
  resolved: number | null;
  acknowledged: number | null;
}

export interface PagerDutyRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  status: number;
}

export interface PagerDutyEmulator {
  url: string;
  keys: Set<string>;
  requests: PagerDutyRequest[];
  failures: string[];
  maxPage: number;
  incident(incident: { title: string; service: string; urgency?: 'high' | 'low'; created: number }): string;
  acknowledge(id: string, at: number): void;
  resolve(id: string, at: number): void;
  close(): Promise<void>;
}

interface LogEntry {
  id: string;
  type: string;
  incidentId: string;
  at: number;
  summary: string;
}

const ACCEPT = 'application/vnd.pagerduty+json;version=2';
const ACCOUNT_OFFSET_MINUTES = -5 * 60;

function render(ms: number, utc: boolean): string {
  if (utc) return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const local = new Date(ms + ACCOUNT_OFFSET_MINUTES * 60_000).toISOString().replace(/\.\d{3}Z$/, '');
  return `${local}-05:00`;
}

export async function startPagerDutyEmulator(): Promise<PagerDutyEmulator> {
  const incidents = new Map<string, EmulatedIncident>();
  const log: LogEntry[] = [];
  let sequence = 0;
  const base = () => emulator.url.replace('127.0.0.1', 'api.pagerduty.test');

  function reference(incident: EmulatedIncident) {
    return { id: incident.id, type: 'incident_reference', summary: `[#${incident.number}] ${incident.title}`, self: `${base()}/incidents/${incident.id}`, html_url: `https://acme.pagerduty.com/incidents/${incident.id}` };
  }

  function full(incident: EmulatedIncident, utc: boolean) {
    const status = incident.resolved !== null ? 'resolved' : incident.acknowledged !== null ? 'acknowledged' : 'triggered';
    const changed = incident.resolved ?? incident.acknowledged ?? incident.created;
    return {
      id: incident.id, type: 'incident', summary: `[#${incident.number}] ${incident.title}`, self: `${base()}/incidents/${incident.id}`, html_url: `https://acme.pagerduty.com/incidents/${incident.id}`,
      incident_number: incident.number, title: incident.title, created_at: render(incident.created, utc), updated_at: render(changed, utc), status, incident_key: `key-${incident.id}`,
      service: { id: incident.service.id, type: 'service_reference', summary: incident.service.summary, self: `${base()}/services/${incident.service.id}`, html_url: `https://acme.pagerduty.com/service-directory/${incident.service.id}` },
      assignments: [], assigned_via: 'escalation_policy', last_status_change_at: render(changed, utc), resolved_at: incident.resolved === null ? null : render(incident.resolved, utc),
      first_trigger_log_entry: { id: `R${incident.id}`, type: 'trigger_log_entry_reference', summary: 'Triggered through the API' },
      alert_counts: { all: 1, triggered: incident.resolved === null ? 1 : 0, resolved: incident.resolved === null ? 0 : 1 }, is_mergeable: true, incident_type: { name: 'incident_default' },
      escalation_policy: { id: 'PT20YPA', type: 'escalation_policy_reference', summary: 'Ops' }, teams: [], pending_actions: [], acknowledgements: [], alert_grouping: null,
      last_status_change_by: { id: incident.service.id, type: 'service_reference', summary: incident.service.summary }, priority: null, resolve_reason: null, incidents_responders: [], responder_requests: [], urgency: incident.urgency,
    };
  }

  function range(query: URLSearchParams): { since: number; until: number } | string {
    const since = query.get('since') === null ? Date.now() - 30 * 86_400_000 : Date.parse(query.get('since')!);
    const until = query.get('until') === null ? Date.now() : Date.parse(query.get('until')!);
    if (Number.isNaN(since) || Number.isNaN(until)) return 'Invalid \'since\' or \'until\' parameter values';
    if (until - since > 183 * 86_400_000) return 'The maximum range of since and until is 6 months';
    return { since, until };
  }

  function page<T>(items: T[], query: URLSearchParams, field: string, shape: (item: T) => unknown) {
    const limit = Math.min(Number(query.get('limit') ?? 25), 100, emulator.maxPage);
    const offset = Number(query.get('offset') ?? 0);
    const slice = items.slice(offset, offset + limit);
    return { [field]: slice.map(shape), limit, offset, more: offset + slice.length < items.length, total: query.get('total') === 'true' ? items.length : null };
  }

  function listIncidents(query: URLSearchParams): { status: number; body: unknown } {
    const window = range(query);
    if (typeof window === 'string') return { status: 400, body: { error: { message: 'Invalid Input Provided', code: 2001, errors: [window] } } };
    const statuses = query.getAll('statuses[]');
    const utc = query.get('time_zone') === 'UTC' || query.get('time_zone') === null;
    const sortBy = query.get('sort_by');
    if (sortBy !== null && sortBy !== 'created_at:asc' && sortBy !== 'created_at') emulator.failures.push(`incidents sort_by this emulator does not know: ${sortBy}`);
    const matching = [...incidents.values()]
      .filter((i) => i.created >= window.since && i.created <= window.until)
      .filter((i) => statuses.length === 0 || statuses.includes(full(i, true).status))
      .sort((a, b) => a.created - b.created || a.number - b.number);
    return { status: 200, body: page(matching, query, 'incidents', (i) => full(i, utc)) };
  }

  function listLogEntries(query: URLSearchParams): { status: number; body: unknown } {
    const window = range(query);
    if (typeof window === 'string') return { status: 400, body: { error: { message: 'Invalid Input Provided', code: 2001, errors: [window] } } };
    const utc = query.get('time_zone') === 'UTC';
    const expand = query.getAll('include[]').includes('incidents');
    // Newest first, as the API lists log entries.
    const matching = log.filter((e) => e.at >= window.since && e.at <= window.until).sort((a, b) => b.at - a.at || b.id.localeCompare(a.id));
    return {
      status: 200,
      body: page(matching, query, 'log_entries', (entry) => {
        const incident = incidents.get(entry.incidentId)!;
        return {
          id: entry.id, type: entry.type, summary: entry.summary, self: `${base()}/log_entries/${entry.id}?incident_id=${incident.id}`, html_url: `https://acme.pagerduty.com/incidents/${incident.id}/log_entries/${entry.id}`,
          created_at: render(entry.at, utc), agent: { id: incident.service.id, type: 'service_reference', summary: incident.service.summary }, channel: { type: 'api' },
          incident: expand ? full(incident, utc) : reference(incident), teams: [], contexts: [], event_details: { description: incident.title },
        };
      }),
    };
  }

  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://emulator');
      const record: PagerDutyRequest = { method: req.method ?? '', path: url.pathname, query: url.searchParams, status: 0 };
      emulator.requests.push(record);
      const send = (status: number, body: unknown) => {
        record.status = status;
        if (typeof body === 'string') res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
        else res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
      };
      const authorization = req.headers.authorization ?? '';
      const key = authorization.startsWith('Token token=') ? authorization.slice('Token token='.length) : undefined;
      if (key === undefined || !emulator.keys.has(key)) return send(401, '');
      if (req.headers.accept !== ACCEPT) emulator.failures.push(`${req.method} ${url.pathname} without Accept: ${ACCEPT}`);
      if (req.method !== 'GET') {
        emulator.failures.push(`${req.method} ${url.pathname}: a write with a read-only key`);
        return send(403, { error: { message: 'Access Denied', code: 2010, errors: ['This API key is read-only'] } });
      }
      const listed = url.pathname === '/incidents' ? listIncidents(url.searchParams) : url.pathname === '/log_entries' ? listLogEntries(url.searchParams) : undefined;
      if (listed) return send(listed.status, listed.body);
      emulator.failures.push(`GET ${url.pathname}: not one of the reads the import may make`);
      send(404, { error: { message: 'Not Found', code: 2100 } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const entry = (incidentId: string, type: string, at: number, summary: string) => {
    sequence += 1;
    log.push({ id: `Q${String(sequence).padStart(13, '0')}`, type, incidentId, at, summary });
  };

  const emulator: PagerDutyEmulator = {
    url: `http://127.0.0.1:${port}`,
    keys: new Set(),
    requests: [],
    failures: [],
    maxPage: 2,
    incident({ title, service, urgency = 'high', created }) {
      sequence += 1;
      const id = `P${String(sequence).padStart(6, '0')}X`;
      incidents.set(id, { id, number: 1000 + sequence, title, service: { id: `PS${service.length}${service.charCodeAt(0)}`, summary: service }, urgency, created, resolved: null, acknowledged: null });
      entry(id, 'trigger_log_entry', created, 'Triggered through the API');
      return id;
    },
    acknowledge(id, at) {
      incidents.get(id)!.acknowledged = at;
      entry(id, 'acknowledge_log_entry', at, 'Acknowledged by Ops');
    },
    resolve(id, at) {
      incidents.get(id)!.resolved = at;
      entry(id, 'resolve_log_entry', at, 'Resolved through the API');
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
