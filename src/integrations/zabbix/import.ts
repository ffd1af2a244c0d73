import type { AlarmObservation, Importer, ImportPage, ImportRequest } from '../observation.js';
import { baseUrl, callJson, importSecretError, importSettingError, readCursor, toolRefused, windowEnd, writeCursor, type ToolCall } from '../tool-api.js';
import { isRecord } from '../values.js';

/*
 * Zabbix problems and their recoveries, read with an API token (Zabbix 5.4+: Users → API tokens),
 * through the JSON-RPC API at {zabbixUrl}/api_jsonrpc.php. Only read methods are sent:
 * apiinfo.version, problem.get and event.get (READ_METHODS below).
 *
 * - Authentication: Zabbix 6.4 added the `Authorization: Bearer <token>` header and deprecated the
 *   request's `auth` property; 7.2 refuses `auth` ("unexpected parameter"). So the version is read
 *   first (apiinfo.version, which must be called without credentials) and the token goes in the
 *   header from 6.4 on, in `auth` before. (Zabbix manual, "API" → "Authentication", 6.4 and 7.x.)
 * - event.get (zabbix/zabbix ui/include/classes/api/services/CEvent.php): source 0 / object 0 are
 *   trigger events; value 1 a problem, whose `r_eventid` is its recovery event ("0" while open);
 *   eventid_from and time_from are inclusive; selectHosts gives the hosts of the trigger.
 * - problem.get (CProblem.php): the problems open now (those resolved long ago are not there); it
 *   has no selectHosts, so the hosts of those problems are read with event.get.
 *
 * The import keeps, in its cursor, the last problem event read and the problems still open. Each run
 * first looks again at the open ones (resolved since? at the recovery event's clock), then reads the
 * problem events after the last one, in id order. A first import also reads, with problem.get, the
 * problems open now that began before the look-back.
 *
 * Key: the problem event's id, as {EVENT.ID} in the webhook (observation.ts). Host: the technical
 * name of the trigger's first host ({HOST.HOST}, as parse.ts). Severity: Zabbix's default names
 * for 0-5 (a renamed severity shows its default name here, its new one in a webhook).
 */

const TOOL = 'Zabbix';
/** The only methods this importer sends: reads. */
const READ_METHODS = new Set(['apiinfo.version', 'problem.get', 'event.get']);
const SEVERITIES = ['Not classified', 'Information', 'Warning', 'Average', 'High', 'Disaster'];
const EVENT_OUTPUT = ['eventid', 'clock', 'name', 'severity', 'r_eventid'];
/** Trigger events (source 0, object 0). */
const TRIGGER_EVENTS = { source: 0, object: 0 };

export interface ZabbixImportOptions {
  /** Problems read per call (event.get / problem.get `limit`); the page size of the import. */
  pageSize?: number;
}

type Phase = 'open' | 'events' | 'recheck';

interface ZabbixCursor {
  phase: Phase;
  /** The look-back's start (unix seconds): problems before it come only from problem.get. */
  from: number;
  /** Phase open: the next problem.get eventid_from. */
  openFrom: string;
  /** The last problem event read (an id; "0" before any). */
  last: string;
  /** Problem events read while open, to look at again. */
  open: string[];
  /** Phase recheck: how many of `open` were looked at this run. */
  checked: number;
}

function isCursor(state: Record<string, unknown>): state is Record<string, unknown> & ZabbixCursor {
  return (
    (state.phase === 'open' || state.phase === 'events' || state.phase === 'recheck') &&
    typeof state.from === 'number' &&
    typeof state.openFrom === 'string' &&
    typeof state.last === 'string' &&
    Array.isArray(state.open) &&
    state.open.every((id) => typeof id === 'string') &&
    typeof state.checked === 'number'
  );
}

interface ZabbixEvent {
  eventid: string;
  clock: number;
  name: string;
  severity: number;
  rEventId: string;
  host: string | null;
}

export class ZabbixImporter implements Importer {
  private readonly pageSize: number;

  constructor(options: ZabbixImportOptions = {}) {
    this.pageSize = options.pageSize ?? 500;
  }

  async importPage(request: ImportRequest): Promise<ImportPage> {
    const api = new ZabbixApi(request);
    await api.negotiate();
    const state: ZabbixCursor = readCursor(TOOL, request.cursor, isCursor) ?? {
      phase: 'open',
      from: Math.floor(request.since / 1000),
      openFrom: '0',
      last: '0',
      open: [],
      checked: 0,
    };
    const settled = Math.floor(windowEnd(0, request.now) / 1000);

    if (state.phase === 'open') {
      const ids = await api.openBefore(state.from, state.openFrom, this.pageSize);
      const events = await api.events(ids);
      const observations = events.map((event) => observe(event, 'firing', event.clock));
      const full = ids.length === this.pageSize;
      const next: ZabbixCursor = full
        ? { ...state, openFrom: increment(ids[ids.length - 1]!), open: [...state.open, ...events.map((e) => e.eventid)] }
        : { ...state, phase: 'events', open: [...state.open, ...events.map((e) => e.eventid)] };
      return { observations, cursor: writeCursor(next), more: true };
    }

    if (state.phase === 'recheck') {
      const chunk = state.open.slice(state.checked, state.checked + this.pageSize);
      const events = await api.events(chunk);
      const recovered = await api.clocks(events.map((e) => e.rEventId).filter((id) => id !== '0'));
      const observations: AlarmObservation[] = [];
      const resolved = new Set<string>();
      for (const event of events) {
        if (event.rEventId === '0') continue;
        observations.push(observe(event, 'resolved', recovered.get(event.rEventId) ?? null));
        resolved.add(event.eventid);
      }
      // A problem event gone from Zabbix (housekeeping) is not looked for again.
      const found = new Set(events.map((e) => e.eventid));
      const stillOpen = chunk.filter((id) => found.has(id) && !resolved.has(id));
      const open = [...state.open.slice(0, state.checked), ...stillOpen, ...state.open.slice(state.checked + chunk.length)];
      const checked = state.checked + stillOpen.length;
      const done = checked >= open.length;
      const next: ZabbixCursor = done ? { ...state, phase: 'events', open, checked: 0 } : { ...state, open, checked };
      return { observations, cursor: writeCursor(next), more: true };
    }

    // phase events: problem events after the last read, in id order, up to those settled.
    const events = await api.problemsAfter(state.last, state.from, this.pageSize);
    const page = [];
    for (const event of events) {
      if (event.clock > settled) break;
      page.push(event);
    }
    const recovered = await api.clocks(page.map((e) => e.rEventId).filter((id) => id !== '0'));
    const observations: AlarmObservation[] = [];
    const open = [...state.open];
    for (const event of page) {
      observations.push(observe(event, 'firing', event.clock));
      if (event.rEventId === '0') open.push(event.eventid);
      else observations.push(observe(event, 'resolved', recovered.get(event.rEventId) ?? null));
    }
    const last = page.length > 0 ? page[page.length - 1]!.eventid : state.last;
    const more = events.length === this.pageSize && page.length === events.length;
    // The run ends here; the next one starts by looking again at the open problems.
    const next: ZabbixCursor = more ? { ...state, last, open } : { ...state, phase: open.length > 0 ? 'recheck' : 'events', last, open, checked: 0 };
    return { observations, cursor: writeCursor(next), more };
  }
}

function observe(event: ZabbixEvent, state: 'firing' | 'resolved', clock: number | null): AlarmObservation {
  return {
    incidentKey: event.eventid,
    alarmName: event.name,
    hostname: event.host,
    severity: SEVERITIES[event.severity] ?? String(event.severity),
    state,
    at: clock === null ? null : clock * 1000,
  };
}

/** The next id after one (event ids are decimal, up to 2^63: compared as numbers they would round). */
function increment(id: string): string {
  return (BigInt(id) + 1n).toString();
}

/** The JSON-RPC endpoint, with the token where this Zabbix version takes it. */
class ZabbixApi {
  private readonly url: string;
  private readonly token: string;
  private header = true;
  private id = 0;

  constructor(private readonly request: ImportRequest) {
    const root = baseUrl(request.config.zabbixUrl);
    if (!root) throw importSettingError(TOOL, 'zabbixUrl', 'zabbixUrl must be the http(s) URL of the Zabbix frontend, e.g. https://zabbix.example.com/zabbix');
    this.url = root.endsWith('/api_jsonrpc.php') ? root : `${root}/api_jsonrpc.php`;
    if (typeof request.secret !== 'string' || request.secret.trim() === '') throw importSecretError(TOOL, 'a Zabbix API token (a string)');
    this.token = request.secret.trim();
  }

  /** The version decides where the token goes: the Authorization header from 6.4, the `auth` property before. */
  async negotiate(): Promise<void> {
    const { result: version } = await this.rpc('apiinfo.version', {}, false);
    const [major = 0, minor = 0] = String(version).split('.').map(Number);
    this.header = major > 6 || (major === 6 && minor >= 4);
  }

  /** Problem event ids open now that began at or before `before` (unix s), from `eventidFrom` on. */
  async openBefore(from: number, eventidFrom: string, limit: number): Promise<string[]> {
    const problems = await this.list('problem.get', { ...TRIGGER_EVENTS, output: ['eventid'], time_till: from - 1, eventid_from: eventidFrom, sortfield: ['eventid'], sortorder: 'ASC', limit });
    return problems.map((p) => String(p.eventid));
  }

  /** Problem events after `last`, from the look-back on, in id order. */
  async problemsAfter(last: string, from: number, limit: number): Promise<ZabbixEvent[]> {
    const events = await this.list('event.get', { ...TRIGGER_EVENTS, value: 1, output: EVENT_OUTPUT, selectHosts: ['host', 'name'], time_from: from, eventid_from: increment(last), sortfield: ['eventid'], sortorder: 'ASC', limit });
    return events.map(readEvent);
  }

  /** These problem events, with their hosts. */
  async events(eventids: string[]): Promise<ZabbixEvent[]> {
    if (eventids.length === 0) return [];
    const events = await this.list('event.get', { ...TRIGGER_EVENTS, value: 1, eventids, output: EVENT_OUTPUT, selectHosts: ['host', 'name'], sortfield: ['eventid'], sortorder: 'ASC' });
    return events.map(readEvent);
  }

  /** The clock of each of these (recovery) events. */
  async clocks(eventids: string[]): Promise<Map<string, number>> {
    if (eventids.length === 0) return new Map();
    const events = await this.list('event.get', { ...TRIGGER_EVENTS, eventids, output: ['eventid', 'clock'] });
    return new Map(events.map((e) => [String(e.eventid), Number(e.clock)]));
  }

  /** A read whose result is a list of objects. */
  private async list(method: string, params: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
    const { call, result } = await this.rpc(method, params);
    if (!Array.isArray(result)) throw toolRefused(call, 'a result that is not a list');
    return result.filter(isRecord);
  }

  private async rpc(method: string, params: Record<string, unknown>, authenticated = true): Promise<{ call: ToolCall; result: unknown }> {
    if (!READ_METHODS.has(method)) throw new Error(`zabbix import: ${method} is not a read method`);
    this.id += 1;
    const headers: Record<string, string> = { 'content-type': 'application/json-rpc', accept: 'application/json' };
    const body: Record<string, unknown> = { jsonrpc: '2.0', method, params, id: this.id };
    if (authenticated && this.header) headers.authorization = `Bearer ${this.token}`;
    else if (authenticated) body.auth = this.token;
    const call: ToolCall = { tool: TOOL, url: this.url, method: 'POST', operation: method, headers, body: JSON.stringify(body), secrets: [this.token] };
    const answer = await callJson(this.request, call);
    if (!isRecord(answer)) throw toolRefused(call, 'an answer that is not a JSON-RPC response');
    if (isRecord(answer.error)) {
      const { code, message, data } = answer.error;
      throw toolRefused(call, `${typeof data === 'string' && data !== '' ? data : String(message)} (JSON-RPC ${String(code)} ${String(message)})${hint(data)}`);
    }
    if (!('result' in answer)) throw toolRefused(call, 'a JSON-RPC response without a result');
    return { call, result: answer.result };
  }
}

function hint(data: unknown): string {
  return typeof data === 'string' && /not authori[sz]ed|session terminated/i.test(data)
    ? ': check the API token (Users → API tokens: not expired, enabled, of a user that may read the hosts)'
    : '';
}

function readEvent(event: Record<string, unknown>): ZabbixEvent {
  const hosts = Array.isArray(event.hosts) ? event.hosts.filter(isRecord) : [];
  const first = hosts[0];
  const host = first && typeof first.host === 'string' && first.host !== '' ? first.host : first && typeof first.name === 'string' && first.name !== '' ? first.name : null;
  return {
    eventid: String(event.eventid),
    clock: Number(event.clock),
    name: typeof event.name === 'string' ? event.name : '',
    severity: Number(event.severity),
    rEventId: event.r_eventid === undefined || event.r_eventid === null ? '0' : String(event.r_eventid),
    host,
  };
}
