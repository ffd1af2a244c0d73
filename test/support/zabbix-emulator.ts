import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An emulator of the Zabbix JSON-RPC API's read side (apiinfo.version, problem.get, event.get), for
 * the tests of src/integrations/zabbix/import.ts. Where each behaviour comes from:
 *
 * - The endpoint: POST {frontend}/api_jsonrpc.php; a Content-Type other than application/json-rpc,
 *   application/json or application/jsonrequest is answered 412 (zabbix/zabbix ui/api_jsonrpc.php).
 *   Answers are HTTP 200 JSON-RPC 2.0: {jsonrpc, result, id} or {jsonrpc, error:{code, message, data}, id};
 *   numbers come as strings ("clock":"1700000000"), as Zabbix's PHP returns database rows.
 * - Authentication (Zabbix manual "API", 6.0/6.4/7.0/7.4): before 6.4 the token is the request's
 *   `auth` property; 6.4 added `Authorization: Bearer <token>` and deprecated `auth`; from 7.2 a
 *   request with `auth` is refused: -32600 "Invalid request." 'Invalid parameter "/": unexpected
 *   parameter "auth".' (the answer a 7.4 user quotes on the Zabbix forum, thread 506710). A missing or
 *   unknown token: -32602 "Invalid params." "Not authorised.". apiinfo.version must be called
 *   without credentials (manual, apiinfo.version: "must be called without the auth parameter").
 * - event.get (ui/include/classes/api/services/CEvent.php): source/object default to 0/0 (trigger
 *   events); value 1 problem, 0 recovery, both by default; eventids, time_from/time_till (clock,
 *   inclusive), eventid_from/eventid_till (inclusive), sortfield eventid|objectid|clock, sortorder,
 *   limit; output fields incl. r_eventid ("0" while the problem is open); selectHosts, the hosts of
 *   the trigger.
 * - problem.get (CProblem.php): the problem table, validated strictly (an unknown parameter, e.g.
 *   selectHosts, is -32602 'Invalid parameter "/": unexpected parameter "selectHosts".'); without
 *   `recent` only unresolved problems; with it also those resolved within the last `okPeriodSeconds`.
 * - An unknown method: -32601 "Method not found." 'Incorrect API "x".'.
 *
 * Any method but these three reads, and any call whose parameters this emulator does not know, is
 * recorded in `failures`: the tests assert it stays empty, so a write (event.acknowledge,
 * problem update, user.login...) fails the test.
 */

export interface ZabbixEvent {
  eventid: string;
  value: 0 | 1;
  clock: number;
  name: string;
  severity: number;
  objectid: string;
  hosts: Array<{ hostid: string; host: string; name: string }>;
  /** Problem events: the recovery event's id, "0" while open. */
  r_eventid: string;
}

export interface ZabbixCall {
  method: string;
  params: Record<string, unknown>;
  /** Where the credential came: the Authorization header, the `auth` property, or none. */
  credential: 'header' | 'auth' | 'none';
}

export interface ZabbixEmulator {
  /** The frontend's URL (the API is at url + '/api_jsonrpc.php'). */
  url: string;
  version: string;
  tokens: Set<string>;
  calls: ZabbixCall[];
  failures: string[];
  /** A problem on a host, at a unix time; its event id is returned. */
  problem(problem: { name: string; host: string; severity: number; clock: number; triggerid?: string }): string;
  /** The problem's recovery event at a unix time; its id is returned. */
  recover(problemId: string, clock: number): string;
  /** Forget an event (as the housekeeper would). */
  forget(eventid: string): void;
  /** Seconds a resolved problem stays in problem.get's `recent` (Administration → General: "Display OK triggers for"). */
  okPeriodSeconds: number;
  close(): Promise<void>;
}

const READS = new Set(['apiinfo.version', 'problem.get', 'event.get']);
const EVENT_PARAMS = new Set(['eventids', 'groupids', 'hostids', 'objectids', 'source', 'object', 'value', 'severities', 'time_from', 'time_till', 'eventid_from', 'eventid_till', 'problem_time_from', 'problem_time_till', 'acknowledged', 'suppressed', 'tags', 'evaltype', 'filter', 'search', 'output', 'selectHosts', 'selectTags', 'selectRelatedObject', 'select_alerts', 'select_acknowledges', 'selectSuppressionData', 'countOutput', 'preservekeys', 'sortfield', 'sortorder', 'limit', 'editable', 'nopermissions']);
const PROBLEM_PARAMS = new Set(['eventids', 'groupids', 'hostids', 'objectids', 'source', 'object', 'severities', 'eventid_from', 'eventid_till', 'time_from', 'time_till', 'acknowledged', 'action', 'action_userids', 'suppressed', 'symptom', 'recent', 'evaltype', 'tags', 'filter', 'search', 'searchByAny', 'startSearch', 'excludeSearch', 'searchWildcardsEnabled', 'output', 'countOutput', 'selectAcknowledges', 'selectSuppressionData', 'selectTags', 'sortfield', 'sortorder', 'limit', 'editable', 'preservekeys', 'nopermissions']);
const EVENT_FIELDS = ['eventid', 'source', 'object', 'objectid', 'clock', 'value', 'acknowledged', 'ns', 'name', 'severity', 'r_eventid', 'c_eventid', 'correlationid', 'userid', 'cause_eventid', 'opdata', 'suppressed', 'urls'];
const PROBLEM_FIELDS = ['eventid', 'source', 'object', 'objectid', 'clock', 'ns', 'r_eventid', 'r_clock', 'r_ns', 'correlationid', 'userid', 'name', 'acknowledged', 'severity', 'cause_eventid', 'opdata', 'suppressed', 'urls'];

class RpcError extends Error {
  constructor(readonly code: number, readonly rpcMessage: string, readonly data: string) {
    super(data);
  }
}

const invalidParams = (data: string) => new RpcError(-32602, 'Invalid params.', data);

function atLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

export async function startZabbixEmulator(options: { version?: string; tokens?: string[]; prefix?: string } = {}): Promise<ZabbixEmulator> {
  const events = new Map<string, ZabbixEvent>();
  let nextId = 1000;
  const prefix = options.prefix ?? '/zabbix';

  function authenticate(body: Record<string, unknown>, header: string | undefined, call: ZabbixCall): void {
    const bearer = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    const hasAuth = 'auth' in body && body.auth !== null;
    if (hasAuth && atLeast(emulator.version, 7, 2)) throw new RpcError(-32600, 'Invalid request.', 'Invalid parameter "/": unexpected parameter "auth".');
    if (call.method === 'apiinfo.version') {
      if (hasAuth || bearer !== undefined) throw invalidParams('The "apiinfo.version" method must be called without the "auth" parameter.');
      return;
    }
    // Before 6.4 the header is not read at all.
    const token = hasAuth ? body.auth : atLeast(emulator.version, 6, 4) ? bearer : undefined;
    call.credential = hasAuth ? 'auth' : bearer !== undefined && atLeast(emulator.version, 6, 4) ? 'header' : 'none';
    if (typeof token !== 'string' || !emulator.tokens.has(token)) throw invalidParams('Not authorised.');
  }

  function pick(row: Record<string, unknown>, output: unknown, fields: string[]): Record<string, unknown> {
    const wanted = output === undefined || output === 'extend' ? fields : Array.isArray(output) ? output.map(String) : [];
    for (const field of wanted) if (!fields.includes(field)) throw invalidParams(`Invalid parameter "/output/1": value must be one of "${fields.join('", "')}".`);
    const out: Record<string, unknown> = {};
    for (const field of wanted) if (field in row) out[field] = row[field];
    return out;
  }

  function ids(value: unknown): string[] | undefined {
    if (value === undefined || value === null) return undefined;
    return (Array.isArray(value) ? value : [value]).map(String);
  }

  function sortAndLimit<T extends { eventid: string; clock: number; objectid: string }>(rows: T[], params: Record<string, unknown>): T[] {
    const fields = params.sortfield === undefined ? [] : Array.isArray(params.sortfield) ? params.sortfield.map(String) : [String(params.sortfield)];
    const orders = Array.isArray(params.sortorder) ? params.sortorder.map(String) : params.sortorder === undefined ? [] : [String(params.sortorder)];
    for (const field of fields) if (!['eventid', 'objectid', 'clock'].includes(field)) throw invalidParams(`Sorting by field "${field}" not allowed.`);
    const key = (row: T, field: string): bigint => BigInt(field === 'clock' ? row.clock : field === 'objectid' ? row.objectid : row.eventid);
    const sorted = [...rows].sort((a, b) => {
      for (const [i, field] of fields.entries()) {
        const d = key(a, field) - key(b, field);
        if (d !== 0n) return (d < 0n ? -1 : 1) * ((orders[i] ?? orders[0] ?? 'ASC') === 'DESC' ? -1 : 1);
      }
      return 0;
    });
    const limit = params.limit === undefined || params.limit === null ? undefined : Number(params.limit);
    return limit === undefined ? sorted : sorted.slice(0, limit);
  }

  function eventRow(event: ZabbixEvent): Record<string, unknown> {
    return {
      eventid: event.eventid, source: '0', object: '0', objectid: event.objectid, clock: String(event.clock), value: String(event.value), acknowledged: '0', ns: '0',
      name: event.name, severity: String(event.severity), r_eventid: event.value === 1 ? event.r_eventid : '0', c_eventid: '0', correlationid: '0', userid: '0', cause_eventid: '0', opdata: '', suppressed: '0', urls: [],
    };
  }

  function triggerSource(params: Record<string, unknown>): void {
    if (Number(params.source ?? 0) !== 0 || Number(params.object ?? 0) !== 0) throw invalidParams('This emulator holds trigger events only (source 0, object 0).');
  }

  function eventGet(params: Record<string, unknown>): unknown {
    for (const name of Object.keys(params)) if (!EVENT_PARAMS.has(name)) emulator.failures.push(`event.get with a parameter this emulator does not know: ${name}`);
    triggerSource(params);
    const values = params.value === undefined ? [0, 1] : (Array.isArray(params.value) ? params.value : [params.value]).map(Number);
    const wanted = ids(params.eventids);
    let rows = [...events.values()].filter((e) => values.includes(e.value) && (!wanted || wanted.includes(e.eventid)));
    const num = (name: string) => (params[name] === undefined || params[name] === null ? undefined : BigInt(String(params[name])));
    const timeFrom = num('time_from'), timeTill = num('time_till'), idFrom = num('eventid_from'), idTill = num('eventid_till');
    rows = rows.filter((e) => (timeFrom === undefined || BigInt(e.clock) >= timeFrom) && (timeTill === undefined || BigInt(e.clock) <= timeTill) && (idFrom === undefined || BigInt(e.eventid) >= idFrom) && (idTill === undefined || BigInt(e.eventid) <= idTill));
    return sortAndLimit(rows, params).map((event) => {
      const out = pick(eventRow(event), params.output, EVENT_FIELDS);
      if (params.selectHosts !== undefined) {
        const hostFields = params.selectHosts === 'extend' ? ['hostid', 'host', 'name'] : Array.isArray(params.selectHosts) ? params.selectHosts.map(String) : [];
        out.hosts = event.hosts.map((h) => Object.fromEntries(hostFields.filter((f) => f in h).map((f) => [f, h[f as keyof typeof h]])));
      }
      return out;
    });
  }

  function problemGet(params: Record<string, unknown>): unknown {
    for (const name of Object.keys(params)) if (!PROBLEM_PARAMS.has(name)) throw invalidParams(`Invalid parameter "/": unexpected parameter "${name}".`);
    triggerSource(params);
    const okFrom = Math.floor(Date.now() / 1000) - emulator.okPeriodSeconds;
    const wanted = ids(params.eventids);
    let rows = [...events.values()]
      .filter((e) => e.value === 1 && (!wanted || wanted.includes(e.eventid)))
      .filter((e) => {
        if (e.r_eventid === '0') return true;
        const recovery = events.get(e.r_eventid);
        return params.recent === true && recovery !== undefined && recovery.clock > okFrom;
      });
    const num = (name: string) => (params[name] === undefined || params[name] === null ? undefined : BigInt(String(params[name])));
    const timeFrom = num('time_from'), timeTill = num('time_till'), idFrom = num('eventid_from'), idTill = num('eventid_till');
    rows = rows.filter((e) => (timeFrom === undefined || BigInt(e.clock) >= timeFrom) && (timeTill === undefined || BigInt(e.clock) <= timeTill) && (idFrom === undefined || BigInt(e.eventid) >= idFrom) && (idTill === undefined || BigInt(e.eventid) <= idTill));
    if (params.sortfield !== undefined && [params.sortfield].flat().some((f) => f !== 'eventid')) throw invalidParams('Invalid parameter "/sortfield/1": value must be "eventid".');
    return sortAndLimit(rows, params).map((e) => {
      const recovery = e.r_eventid === '0' ? undefined : events.get(e.r_eventid);
      const row = { ...eventRow(e), r_eventid: e.r_eventid, r_clock: recovery ? String(recovery.clock) : '0', r_ns: '0' };
      return pick(row, params.output, PROBLEM_FIELDS);
    });
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (req.method !== 'POST' || req.url !== `${prefix}/api_jsonrpc.php`) {
        emulator.failures.push(`${req.method} ${req.url}: not the JSON-RPC endpoint`);
        res.writeHead(404).end();
        return;
      }
      if (!['application/json-rpc', 'application/json', 'application/jsonrequest'].includes(contentType)) {
        res.writeHead(412, 'Precondition Failed').end();
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error.', data: 'Invalid JSON. An error occurred on the server while parsing the JSON text.' }, id: null }));
        return;
      }
      const method = String(body.method);
      const params = typeof body.params === 'object' && body.params !== null ? (body.params as Record<string, unknown>) : {};
      const call: ZabbixCall = { method, params, credential: 'none' };
      emulator.calls.push(call);
      const answer = (payload: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', ...payload, id: body.id }));
      try {
        if (!READS.has(method)) {
          emulator.failures.push(`a call that is not one of the reads the import may make: ${method}`);
          if (!/^[a-z]+\.[a-zA-Z]+$/.test(method) || !['get', 'create', 'update', 'delete', 'acknowledge', 'login', 'logout', 'execute'].includes(method.split('.')[1]!)) throw new RpcError(-32601, 'Method not found.', `Incorrect API "${method.split('.')[0]}".`);
        }
        authenticate(body, req.headers.authorization, call);
        if (method === 'apiinfo.version') return answer({ result: emulator.version });
        if (method === 'event.get') return answer({ result: eventGet(params) });
        if (method === 'problem.get') return answer({ result: problemGet(params) });
        throw new RpcError(-32500, 'Application error.', 'No permissions to call this method.');
      } catch (error) {
        if (!(error instanceof RpcError)) throw error;
        answer({ error: { code: error.code, message: error.rpcMessage, data: error.data } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const emulator: ZabbixEmulator = {
    url: `http://127.0.0.1:${port}${prefix}`,
    version: options.version ?? '7.0.5',
    tokens: new Set(options.tokens ?? []),
    calls: [],
    failures: [],
    okPeriodSeconds: 300,
    problem({ name, host, severity, clock, triggerid }) {
      const eventid = String((nextId += 1));
      events.set(eventid, { eventid, value: 1, clock, name, severity, objectid: triggerid ?? String(20000 + nextId), hosts: [{ hostid: String(10000 + host.length), host, name: `${host} (visible)` }], r_eventid: '0' });
      return eventid;
    },
    recover(problemId, clock) {
      const problem = events.get(problemId);
      if (!problem || problem.value !== 1) throw new Error(`zabbix emulator: no problem event ${problemId}`);
      const eventid = String((nextId += 1));
      events.set(eventid, { ...problem, eventid, value: 0, clock, r_eventid: '0' });
      problem.r_eventid = eventid;
      return eventid;
    },
    forget(eventid) {
      events.delete(eventid);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
