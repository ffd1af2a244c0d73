import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { solidPng } from './png.js';

/**
 * An emulator of the two Datadog API reads the importer makes, for the tests of
 * src/integrations/datadog/import.ts. Where each behaviour comes from:
 *
 * - GET /api/v1/monitor (docs.datadoghq.com/api/latest/monitors "Get all monitor details"; the
 *   datadog-api-client-typescript MonitorsApi.listMonitors parameters group_states, page, page_size
 *   and its cassette "Get all monitors returns OK response with pagination": a JSON array per page,
 *   page numbered from 0, monitors {id, org_id, type, name, message, tags, query, options, multi,
 *   created, modified, overall_state, overall_state_modified, creator, ...}; with group_states
 *   each also has state.groups {name: {name, status, last_triggered_ts, last_nodata_ts,
 *   last_resolved_ts, last_notified_ts}} (model MonitorStateGroup, timestamps in seconds).
 *   A bad group_states is 400 {"errors":["Invalid group_state filters."]} (the cassette "Get all
 *   monitors returns Bad Request response").
 * - GET /api/v2/events (EventsApi.listEvents: filter[query], filter[from], filter[to] in ms,
 *   sort "timestamp" | "-timestamp" (default newest first), page[cursor], page[limit]; the cassette
 *   "Get a list of events returns OK response with pagination": {data:[{attributes:{attributes:{...},
 *   message, tags, timestamp}, type:"event", id}], meta:{page:{after}}, links:{next}}, a page with
 *   events always carries `after`, and the page after the last is {"data":[]}). Monitor events carry
 *   monitor_id, monitor_groups and monitor{id, name, groups, ...} (models EventAttributes, MonitorType).
 * - Keys (docs.datadoghq.com/account_management/api-app-keys): DD-API-KEY and DD-APPLICATION-KEY
 *   headers; an application key may be scoped (monitors_read for the monitors list, events_read for
 *   events); an unknown key, a wrong one or a missing scope is 403 {"errors":["Forbidden"]}.
 *
 * - The graph capture's reads (src/integrations/datadog/graph.ts): GET /api/v1/monitor/{id} ("Get a
 *   monitor's details", monitors_read; 404 {"errors":["Monitor not found"]}); GET /api/v1/query
 *   ("Query timeseries points": from, to in seconds, query; timeseries_query; {status:"ok",
 *   res_type:"time_series", series:[{metric, display_name, pointlist:[[ms, value]], scope, expression,
 *   tag_set, aggr, start, end, interval, length, unit}], from_date, to_date, query, group_by};
 *   a query it cannot parse 400 {"errors":["Error parsing query: ..."]}); GET /api/v1/graph/snapshot
 *   ("Take graph snapshots": metric_query, start, end required in seconds, title, width, height;
 *   {graph_def, metric_query, snapshot_url}), the image at snapshot_url on Datadog's storage (no keys),
 *   which, as the reference's note says, is there only after some delay: it answers 403 AccessDenied
 *   (the storage's XML) `snapshotMisses` times before the PNG (the emulator's own model of the delay).
 *   The query grammar the emulator parses is the simple metric query `agg:metric{tags} by {tags}`.
 *
 * Pages hold at most `maxPage` items whatever page_size / page[limit] asks, so tests cross pages.
 * Any other method or path, and any filter[query] but source:alert, is recorded in `failures`.
 */

export interface MonitorGroupState {
  status: 'Alert' | 'Warn' | 'No Data' | 'OK';
  last_triggered_ts?: number;
  last_resolved_ts?: number;
  last_nodata_ts?: number;
}

export interface EmulatedMonitor {
  id: number;
  name: string;
  overall_state: string;
  overall_state_modified: string;
  groups: Record<string, MonitorGroupState>;
}

export interface DatadogRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  /** Whether the request carried a DD-API-KEY or DD-APPLICATION-KEY header. */
  keys: boolean;
}

/** A metric's series: its tags and its points ([ms, value]). */
export interface EmulatedSeries {
  metric: string;
  tags: string[];
  points: Array<[number, number]>;
}

export interface DatadogEmulator {
  url: string;
  apiKeys: Set<string>;
  /** Application keys and their scopes (null: unscoped, everything the user may do). */
  applicationKeys: Map<string, string[] | null>;
  monitors: EmulatedMonitor[];
  requests: DatadogRequest[];
  failures: string[];
  maxPage: number;
  series: EmulatedSeries[];
  /** How many times a snapshot's image is asked for before it is stored. */
  snapshotMisses: number;
  /** A monitor alert event: the transition of a group at a time (ms). */
  alert(event: { monitor: EmulatedMonitor; group: string[]; transition: 'Triggered' | 'Re-Triggered' | 'Recovered' | 'Warn' | 'No Data' | 'Renotify'; at: number; priority?: string }): void;
  /** An event that is not a monitor's (posted through the API by an integration). */
  otherEvent(event: { title: string; at: number }): void;
  close(): Promise<void>;
}

const GROUP_STATES = new Set(['all', 'alert', 'warn', 'no data']);
const STATUS_OF: Record<string, string> = { Triggered: 'error', 'Re-Triggered': 'error', Recovered: 'success', Warn: 'warning', 'No Data': 'warning', Renotify: 'error' };

interface StoredEvent {
  id: string;
  timestamp: number;
  source: string;
  body: Record<string, unknown>;
}

export async function startDatadogEmulator(): Promise<DatadogEmulator> {
  const events: StoredEvent[] = [];
  let sequence = 0;

  const forbidden = { status: 403, body: { errors: ['Forbidden'] } };

  /** `scope` null: any valid pair of keys (the snapshot API names no scope of its own). */
  function authorized(headers: http.IncomingHttpHeaders, scope: string | null): boolean {
    const apiKey = headers['dd-api-key'];
    const appKey = headers['dd-application-key'];
    if (typeof apiKey !== 'string' || !emulator.apiKeys.has(apiKey)) return false;
    if (typeof appKey !== 'string' || !emulator.applicationKeys.has(appKey)) return false;
    const scopes = emulator.applicationKeys.get(appKey);
    return scopes === null || scopes === undefined || scope === null ? true : scopes.includes(scope);
  }

  function monitorBody(monitor: EmulatedMonitor, withState: boolean): Record<string, unknown> {
    const body: Record<string, unknown> = {
      id: monitor.id, org_id: 321813, type: 'query alert', name: monitor.name, message: `${monitor.name} @webhook-pitcrew`, tags: ['team:ops'],
      query: 'avg(last_5m):avg:system.cpu.user{*} by {host} > 90', options: { notify_no_data: false, thresholds: { critical: 90 } }, multi: Object.keys(monitor.groups).length > 0,
      created_at: 1620047024000, created: '2021-05-03T13:03:44.905085+00:00', modified: '2021-05-03T13:03:44.905085+00:00', deleted: null, restricted_roles: null, priority: null,
      overall_state_modified: monitor.overall_state_modified, overall_state: monitor.overall_state, creator: { name: null, handle: 'ops@example.com', email: 'ops@example.com', id: 1445416 }, matching_downtimes: [],
    };
    if (withState) body.state = { groups: Object.fromEntries(Object.entries(monitor.groups).map(([name, group]) => [name, { name, last_notified_ts: group.last_triggered_ts ?? 0, last_nodata_ts: 0, last_resolved_ts: 0, last_triggered_ts: 0, ...group }])) };
    return body;
  }

  function listMonitors(query: Record<string, string>): { status: number; body: unknown } {
    if (query.group_states !== undefined && !query.group_states.split(',').every((s) => GROUP_STATES.has(s.trim()))) return { status: 400, body: { errors: ['Invalid group_state filters.'] } };
    const withState = query.group_states !== undefined;
    const all = [...emulator.monitors].sort((a, b) => a.id - b.id).map((m) => monitorBody(m, withState));
    if (query.page === undefined) return { status: 200, body: all };
    const size = Math.min(Number(query.page_size ?? 100), emulator.maxPage);
    const page = Number(query.page);
    return { status: 200, body: all.slice(page * size, page * size + size) };
  }

  function timeOf(value: string | undefined, fallback: number): number {
    if (value === undefined) return fallback;
    if (/^\d+$/.test(value)) return Number(value);
    const parsed = Date.parse(value);
    if (Number.isNaN(parsed)) throw new Error(`filter time ${value}`);
    return parsed;
  }

  function listEvents(query: Record<string, string>, base: string): { status: number; body: unknown } {
    const filter = query['filter[query]'];
    if (filter !== undefined && filter !== 'source:alert') emulator.failures.push(`events filter[query] this emulator does not know: ${filter}`);
    let from: number, to: number;
    try {
      from = timeOf(query['filter[from]'], Date.now() - 15 * 60_000);
      to = timeOf(query['filter[to]'], Date.now());
    } catch (error) {
      return { status: 400, body: { errors: [`Invalid ${(error as Error).message}`] } };
    }
    const ascending = query.sort === 'timestamp';
    const matching = events
      .filter((e) => (filter === undefined || e.source === 'alert') && e.timestamp >= from && e.timestamp <= to)
      .sort((a, b) => (ascending ? a.timestamp - b.timestamp || a.id.localeCompare(b.id) : b.timestamp - a.timestamp || b.id.localeCompare(a.id)));
    let start = 0;
    if (query['page[cursor]'] !== undefined) {
      let after: unknown;
      try {
        after = (JSON.parse(Buffer.from(query['page[cursor]'], 'base64url').toString('utf8')) as { after?: unknown }).after;
      } catch {
        after = undefined;
      }
      const index = matching.findIndex((e) => e.id === after);
      if (typeof after !== 'string') return { status: 400, body: { errors: ['Invalid page[cursor]'] } };
      start = index + 1;
    }
    const limit = Math.min(Number(query['page[limit]'] ?? 10), emulator.maxPage);
    const data = matching.slice(start, start + limit);
    if (data.length === 0) return { status: 200, body: { data: [] } };
    const after = Buffer.from(JSON.stringify({ after: data[data.length - 1]!.id })).toString('base64url');
    const next = new URLSearchParams({ ...query, 'page[cursor]': after });
    return { status: 200, body: { meta: { page: { after } }, data: data.map((e) => e.body), links: { next: `${base}/api/v2/events?${next.toString()}` } } };
  }

  const snapshots = new Map<string, { width: number; height: number; misses: number }>();
  const QUERY = /^(avg|sum|min|max):([A-Za-z][\w.]*)\{([^}]*)\}(?:\s+by\s+\{([^}]*)\})?$/;

  function getMonitor(id: number): { status: number; body: unknown } {
    const monitor = emulator.monitors.find((m) => m.id === id);
    return monitor ? { status: 200, body: monitorBody(monitor, false) } : { status: 404, body: { errors: ['Monitor not found'] } };
  }

  function queryPoints(query: Record<string, string>): { status: number; body: unknown } {
    for (const name of ['from', 'to', 'query']) if (query[name] === undefined) return { status: 400, body: { errors: [`Missing required argument: ${name}`] } };
    const parsed = QUERY.exec(query.query!.trim());
    if (!parsed) return { status: 400, body: { errors: [`Error parsing query: unable to parse ${query.query}: Rule 'scope_expr' didn't match`] } };
    const [, aggr, metric, scope, by] = parsed as unknown as [string, string, string, string, string | undefined];
    const filter = scope.split(',').map((t) => t.trim()).filter((t) => t !== '' && t !== '*');
    const from = Number(query.from) * 1000;
    const to = Number(query.to) * 1000;
    const series = emulator.series
      .filter((s) => s.metric === metric && filter.every((t) => s.tags.includes(t)))
      .map((s) => ({ ...s, points: s.points.filter(([at]) => at >= from && at <= to) }))
      .filter((s) => s.points.length > 0)
      .map((s) => {
        const groups = (by ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
        const tagSet = s.tags.filter((t) => groups.includes(t.split(':')[0]!));
        return { metric, display_name: metric, aggr, scope: [...filter, ...tagSet].join(',') || '*', tag_set: tagSet, expression: `${aggr}:${metric}{${[...filter, ...tagSet].join(',') || '*'}}`, unit: null, pointlist: s.points, start: s.points[0]![0], end: s.points[s.points.length - 1]![0], interval: 60, length: s.points.length };
      });
    return { status: 200, body: { status: 'ok', res_type: 'time_series', series, from_date: from, to_date: to, query: query.query, message: '', group_by: by ? by.split(',') : [] } };
  }

  function takeSnapshot(query: Record<string, string>): { status: number; body: unknown } {
    for (const name of ['start', 'end']) if (query[name] === undefined || !/^\d+$/.test(query[name])) return { status: 400, body: { errors: [`Missing required argument: ${name}`] } };
    if (query.metric_query === undefined && query.graph_def === undefined) return { status: 400, body: { errors: ['Either metric_query or graph_def is required'] } };
    const id = Buffer.from(String(snapshots.size + 1).padStart(16, '0')).toString('hex').slice(0, 24);
    snapshots.set(id, { width: Number(query.width ?? 600), height: Number(query.height ?? 300), misses: 0 });
    const day = new Date().toISOString().slice(0, 10);
    return { status: 200, body: { graph_def: JSON.stringify({ requests: [{ q: query.metric_query }] }), metric_query: query.metric_query, snapshot_url: `${emulator.url}/snapshot/view/dd-snapshots-prod/org_321813/${day}/${id}.png` } };
  }

  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://emulator');
      const query = Object.fromEntries(url.searchParams);
      const record: DatadogRequest = { method: req.method ?? '', path: url.pathname, query, status: 0, keys: req.headers['dd-api-key'] !== undefined || req.headers['dd-application-key'] !== undefined };
      emulator.requests.push(record);
      const send = ({ status, body }: { status: number; body: unknown }) => {
        record.status = status;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.method === 'GET' && url.pathname === '/api/v1/monitor') return send(authorized(req.headers, 'monitors_read') ? listMonitors(query) : forbidden);
      if (req.method === 'GET' && url.pathname === '/api/v2/events') return send(authorized(req.headers, 'events_read') ? listEvents(query, emulator.url) : forbidden);
      const monitor = /^\/api\/v1\/monitor\/(\d+)$/.exec(url.pathname);
      if (req.method === 'GET' && monitor) return send(authorized(req.headers, 'monitors_read') ? getMonitor(Number(monitor[1])) : forbidden);
      if (req.method === 'GET' && url.pathname === '/api/v1/query') return send(authorized(req.headers, 'timeseries_query') ? queryPoints(query) : forbidden);
      if (req.method === 'GET' && url.pathname === '/api/v1/graph/snapshot') return send(authorized(req.headers, null) ? takeSnapshot(query) : forbidden);
      const image = /^\/snapshot\/view\/dd-snapshots-prod\/org_321813\/[\d-]+\/([0-9a-f]+)\.png$/.exec(url.pathname);
      if (req.method === 'GET' && image) {
        const snapshot = snapshots.get(image[1]!);
        if (snapshot && snapshot.misses >= emulator.snapshotMisses) {
          record.status = 200;
          return void res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(snapshot.width, snapshot.height, [0x63, 0x2c, 0xa6]));
        }
        if (snapshot) snapshot.misses += 1;
        record.status = 403;
        return void res.writeHead(403, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>8R3Q0ZJ1</RequestId></Error>`);
      }
      emulator.failures.push(`${req.method} ${url.pathname}: not one of the reads the import may make`);
      send({ status: 404, body: { errors: ['Not found'] } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const emulator: DatadogEmulator = {
    url: `http://127.0.0.1:${port}`,
    apiKeys: new Set(),
    applicationKeys: new Map(),
    monitors: [],
    requests: [],
    failures: [],
    maxPage: 2,
    series: [],
    snapshotMisses: 2,
    alert({ monitor, group, transition, at, priority }) {
      sequence += 1;
      const scope = group.length === 0 ? '' : ` on {${group.join(',')}}`;
      const title = `${priority ? `[${priority}] ` : ''}[${transition}${scope}] ${monitor.name}`;
      const host = group.find((t) => t.startsWith('host:'))?.slice(5);
      const id = `AgAAAY${String(sequence).padStart(6, '0')}`;
      events.push({
        id,
        timestamp: at,
        source: 'alert',
        body: {
          attributes: {
            attributes: {
              aggregation_key: `${monitor.id}`, evt: { id: String(6567977849972254562n + BigInt(sequence)), source_id: 36, type: 'monitor_alert' }, hostname: host,
              monitor: { id: monitor.id, name: monitor.name, groups: group, group_status: 0, type: 'query alert', query: 'avg(last_5m):avg:system.cpu.user{*} by {host} > 90', tags: ['team:ops'] },
              monitor_groups: group, monitor_id: monitor.id, priority: 'normal', service: 'undefined', status: STATUS_OF[transition], timestamp: at, title,
            },
            message: `%%%\n${monitor.name}\n%%%`, tags: ['source:alert', 'monitor', ...group], timestamp: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          },
          type: 'event',
          id,
        },
      });
    },
    otherEvent({ title, at }) {
      sequence += 1;
      const id = `AgAAAY${String(sequence).padStart(6, '0')}`;
      events.push({ id, timestamp: at, source: 'my_apps', body: { attributes: { attributes: { status: 'info', title, timestamp: at, hostname: 'do ani', priority: 'normal', evt: { source_id: 100, type: 'api', id: String(sequence) } }, message: title, tags: ['source:my_apps'], timestamp: new Date(at).toISOString() }, type: 'event', id } });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
