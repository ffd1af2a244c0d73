import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An emulator of Keystone (token issue, v2.0 and v3) and of the Monasca API's read side (alarm
 * definitions, notification methods), for tests of src/integrations/monasca/keystone.ts. It follows
 * the API references:
 *
 * - Identity API v2.0 "Authenticate" (https://docs.openstack.org/api-ref/identity/v2/):
 *   POST /v2.0/tokens {auth:{tenantName, passwordCredentials:{username, password}}}
 *   -> 200 {access:{token:{id, expires, issued_at, tenant:{id, name}}, serviceCatalog, user}}; 401 otherwise.
 * - Identity API v3 "Password authentication with scoped authorization"
 *   (https://docs.openstack.org/api-ref/identity/v3/): POST /v3/auth/tokens
 *   {auth:{identity:{methods:["password"], password:{user:{name, domain:{name}, password}}},
 *   scope:{project:{name, domain:{name}}}}} -> 201, X-Subject-Token header, {token:{expires_at, ...}}; 401 otherwise.
 * - Monasca API (openstack/monasca-api docs/monasca-api-spec.md): GET /v2.0/alarm-definitions and
 *   GET /v2.0/notification-methods with X-Auth-Token -> 200 {links:[{rel:"self"},{rel:"next"}], elements}
 *   paged by offset (the last id of the page) and limit; 401 without a valid token.
 *
 * - Monasca API, alarms (same spec, "List Alarms", "List Alarms State History"; paging as the API's
 *   code does it, monasca_api/v2/reference/helpers.py `paginate_alarming` and `paginate`):
 *   GET /v2.0/alarms -> {links, elements:[{id, links, alarm_definition:{id, name, severity, links},
 *   metrics:[{name, dimensions}], state, lifecycle_state, link, state_updated_timestamp,
 *   updated_timestamp, created_timestamp}]}, paged by an integer offset (the index) in the next link;
 *   GET /v2.0/alarms/state-history?start_time&end_time&offset&limit -> {links, elements:[{id (the
 *   transition's time in ms, as a string), alarm_id, metrics, old_state, new_state, reason,
 *   reason_data, timestamp, sub_alarms}]}, oldest first, of the project's existing alarms only
 *   (the API lists the alarms first), `offset` a time in ms (`time > offset`,
 *   influxdb/metrics_repository.py `_build_offset_clause`), the next link's offset the last element's id.
 *
 * - Monasca API, measurements (same spec, "List measurements"; monasca_api/v2/reference/metrics.py
 *   MetricsMeasurements.on_get and monasca-common's metric validation): GET /v2.0/metrics/measurements
 *   ?name&dimensions=k:v,k:v&start_time&end_time&group_by&offset&limit -> {links, elements:[{id, name,
 *   dimensions, columns:["timestamp","value","value_meta"], measurements:[[ISO ms time, value, {}]]}]}:
 *   name and start_time required, else 422 {"title":"Unprocessable Entity","description":...}; a name
 *   or dimension with a character Monasca refuses (> < = { } ( ) , ' " \ ; &) 422 "Invalid characters
 *   in metric name ..."; without group_by, a name and dimensions matching more than one metric 409
 *   "Found multiple metrics matching metric name and dimensions ..."; a metric without measurements in
 *   the window has no element. The offset's form (`<element>_<time>`) is the emulator's own.
 *
 * Tokens are per project: the Monasca endpoints show the definitions and methods of the token's project.
 * Any other call (a write, an unknown path) is answered 404 and kept in `unexpected`, which a
 * test of a read-only client asserts empty.
 */
export interface EmulatedUser {
  username: string;
  password: string;
  /** The user's domain name (v3). Default "Default". */
  domain?: string;
  /** The projects (tenants) the user may scope a token to. */
  projects: string[];
}

export interface EmulatedNotificationMethod {
  id: string;
  name: string;
  type: string;
  address: string;
  period: number;
}

export interface EmulatedAlarmDefinition {
  id: string;
  name: string;
  description?: string;
  expression: string;
  severity: 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';
  actions_enabled?: boolean;
  alarm_actions: string[];
  ok_actions: string[];
  undetermined_actions: string[];
}

export interface EmulatedAlarm {
  id: string;
  alarm_definition: { id: string; name: string; severity: 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL' };
  metrics: { name: string; dimensions: Record<string, string> }[];
  state: 'OK' | 'ALARM' | 'UNDETERMINED';
  lifecycle_state: string | null;
  link: string | null;
  state_updated_timestamp: string;
  updated_timestamp: string;
  created_timestamp: string;
}

export interface EmulatedTransition {
  alarm_id: string;
  metrics: { id: null; name: string; dimensions: Record<string, string> }[];
  old_state: string;
  new_state: string;
  reason: string;
  reason_data: string;
  /** ISO 8601 with milliseconds, as the API writes it. */
  timestamp: string;
  sub_alarms: unknown[];
}

export interface KeystoneMonasca {
  url: string;
  /** Every request the emulator answered: method, path, and the X-Auth-Token it carried. */
  requests: { method: string; path: string; token: string | undefined }[];
  /** What the Monasca API holds per project. */
  projects: Map<string, EmulatedProject>;
  /** Calls the emulated API does not take (writes, unknown paths): a read-only client makes none. */
  unexpected: string[];
  /** When set, a Monasca read waits for what it returns before being answered (a test holds a page). */
  gate: ((method: string, path: string, query: URLSearchParams) => Promise<void> | undefined) | undefined;
  /** Forget every token issued so far (as a token expiry or revocation would). */
  revokeTokens(): void;
  /** Page size when the caller gives no limit (the API's server-wide default). */
  pageSize: number;
  /** Measurements a page holds when the caller gives no limit. */
  measurementsPage: number;
  /** The most a page holds whatever the caller asks (the API caps `limit` at PAGE_LIMIT, 10,000; tests lower it to see pages). */
  maxLimit: number;
  close(): Promise<void>;
}

export interface EmulatedProject {
  methods: EmulatedNotificationMethod[];
  definitions: EmulatedAlarmDefinition[];
  alarms: EmulatedAlarm[];
  /** The state transitions, in the order they happened. */
  history: EmulatedTransition[];
  /** Metrics and their measurements ([ms, value], in time order). */
  measurements: { name: string; dimensions: Record<string, string>; points: Array<[number, number]> }[];
}

/** An alarm on a host, as Monasca's threshold engine makes it from a definition (state UNDETERMINED until data comes). */
export function emulatedAlarm(id: string, definition: { id: string; name: string; severity: EmulatedAlarm['alarm_definition']['severity'] }, hostname: string, at: number): EmulatedAlarm {
  const iso = new Date(at).toISOString();
  return {
    id, alarm_definition: definition, metrics: [{ name: 'cpu.system_perc', dimensions: { hostname, service: 'monitoring' } }],
    state: 'UNDETERMINED', lifecycle_state: 'OPEN', link: null, state_updated_timestamp: iso, updated_timestamp: iso, created_timestamp: iso,
  };
}

/** A state change of an alarm, recorded in its history as Monasca's persister does. */
export function transition(project: EmulatedProject, alarmId: string, newState: EmulatedAlarm['state'], at: number): void {
  const alarm = project.alarms.find((a) => a.id === alarmId);
  if (!alarm) throw new Error(`no alarm ${alarmId}`);
  const iso = new Date(at).toISOString();
  project.history.push({
    alarm_id: alarmId, metrics: alarm.metrics.map((m) => ({ id: null, ...m })), old_state: alarm.state, new_state: newState,
    reason: newState === 'ALARM' ? 'Thresholds were exceeded for the sub-alarms: avg(cpu.system_perc) > 90.0 with the values: [97.5]' : 'The alarm threshold(s) have not been exceeded',
    reason_data: '{}', timestamp: iso, sub_alarms: [],
  });
  alarm.state = newState;
  alarm.state_updated_timestamp = iso;
  alarm.updated_timestamp = iso;
}

/** The token requests' bodies, as far as the emulator reads them. */
interface AuthBody {
  auth?: {
    tenantName?: string;
    passwordCredentials?: { username?: string; password?: string };
    identity?: { methods?: unknown; password?: { user?: { name?: string; password?: string; domain?: { name?: string } } } };
    scope?: { project?: { name?: string; domain?: { name?: string } } };
  };
}

const UNAUTHORIZED_KEYSTONE = { error: { message: 'The request you have made requires authentication.', code: 401, title: 'Unauthorized' } };
const UNAUTHORIZED_MONASCA = { title: 'Unauthorized', description: 'Authentication required' };

export async function startKeystoneMonasca(users: EmulatedUser[]): Promise<KeystoneMonasca> {
  const tokens = new Map<string, string>(); // token -> project
  const requests: KeystoneMonasca['requests'] = [];
  const projects: KeystoneMonasca['projects'] = new Map();
  for (const user of users) for (const project of user.projects) if (!projects.has(project)) projects.set(project, { methods: [], definitions: [], alarms: [], history: [], measurements: [] });
  const unexpected: string[] = [];
  let base = '';

  function issue(project: string): string {
    const token = randomBytes(16).toString('hex');
    tokens.set(token, project);
    return token;
  }

  function findUser(username: unknown, password: unknown, domain: unknown, project: unknown): EmulatedUser | undefined {
    return users.find((u) => u.username === username && u.password === password && (u.domain ?? 'Default') === domain && u.projects.includes(project as string));
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      const token = typeof req.headers['x-auth-token'] === 'string' ? req.headers['x-auth-token'] : undefined;
      requests.push({ method: req.method ?? '', path: url.pathname, token });
      const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      let body: AuthBody = {};
      if (chunks.length > 0) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reply(400, { error: { message: 'Malformed request body', code: 400, title: 'Bad Request' } });
        }
      }

      if (req.method === 'POST' && url.pathname === '/v2.0/tokens') {
        const auth = body.auth ?? {};
        const user = findUser(auth.passwordCredentials?.username, auth.passwordCredentials?.password, 'Default', auth.tenantName);
        if (!user) return reply(401, UNAUTHORIZED_KEYSTONE);
        const id = issue(auth.tenantName!);
        return reply(200, {
          access: {
            token: { issued_at: new Date().toISOString(), expires: new Date(Date.now() + 3600_000).toISOString(), id, tenant: { id: `t-${auth.tenantName}`, name: auth.tenantName!, enabled: true }, audit_ids: [randomUUID()] },
            serviceCatalog: [{ type: 'monitoring', name: 'monasca', endpoints: [{ publicURL: base, region: 'RegionOne' }] }],
            user: { username: user.username, id: `u-${user.username}`, name: user.username, roles: [{ name: 'monasca-user' }] },
            metadata: { is_admin: 0, roles: [] },
          },
        });
      }

      if (req.method === 'POST' && url.pathname === '/v3/auth/tokens') {
        const auth = body.auth ?? {};
        const identity = auth.identity ?? {};
        const methods: unknown = identity.methods;
        const passwordUser = identity.password?.user;
        const project = auth.scope?.project;
        if (!Array.isArray(methods) || !methods.includes('password') || !passwordUser || !project) {
          return reply(400, { error: { message: 'Expecting to find identity.methods ["password"], identity.password.user and scope.project', code: 400, title: 'Bad Request' } });
        }
        const user = findUser(passwordUser.name, passwordUser.password, passwordUser.domain?.name, project.name);
        if (!user || (project.domain?.name ?? '') !== (user.domain ?? 'Default')) return reply(401, UNAUTHORIZED_KEYSTONE);
        const id = issue(project.name!);
        return reply(
          201,
          {
            token: {
              methods: ['password'],
              expires_at: new Date(Date.now() + 3600_000).toISOString(),
              issued_at: new Date().toISOString(),
              user: { id: `u-${user.username}`, name: user.username, domain: { id: 'default', name: user.domain ?? 'Default' } },
              project: { id: `t-${project.name}`, name: project.name, domain: { id: 'default', name: project.domain?.name } },
              roles: [{ id: 'r-monasca-user', name: 'monasca-user' }],
              catalog: [{ type: 'monitoring', name: 'monasca', endpoints: [{ interface: 'public', region: 'RegionOne', url: base }] }],
            },
          },
          { 'x-subject-token': id },
        );
      }

      if (req.method === 'GET' && (url.pathname === '/v2.0/alarm-definitions' || url.pathname === '/v2.0/notification-methods')) {
        const project = token === undefined ? undefined : tokens.get(token);
        if (project === undefined) return reply(401, UNAUTHORIZED_MONASCA);
        const held = projects.get(project)!;
        const all: { id: string }[] = url.pathname === '/v2.0/alarm-definitions' ? held.definitions : held.methods;
        const limit = Number(url.searchParams.get('limit') ?? emulator.pageSize);
        const offset = url.searchParams.get('offset');
        const sorted = [...all].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const start = offset === null ? 0 : sorted.findIndex((item) => item.id > offset);
        const page = start < 0 ? [] : sorted.slice(start, start + limit);
        // The API names itself by the host it was configured with, not by the one the client used.
        const self = `http://monasca.internal:8070${url.pathname}`;
        const links: { rel: string; href: string }[] = [{ rel: 'self', href: self }];
        if (start >= 0 && start + limit < sorted.length) links.push({ rel: 'next', href: `${self}?offset=${encodeURIComponent(page[page.length - 1]!.id)}` });
        const elements = page.map((item) => ({ ...item, links: [{ rel: 'self', href: `${self}/${item.id}` }] }));
        return reply(200, { links, elements });
      }

      if (req.method === 'GET' && (url.pathname === '/v2.0/alarms' || url.pathname === '/v2.0/alarms/state-history')) {
        const project = token === undefined ? undefined : tokens.get(token);
        if (project === undefined) return reply(401, UNAUTHORIZED_MONASCA);
        const held = projects.get(project)!;
        const answer = () => (url.pathname === '/v2.0/alarms' ? listAlarms(held, url) : listHistory(held, url));
        const gate = emulator.gate?.(req.method, url.pathname, url.searchParams);
        if (gate) return void gate.then(() => reply(200, answer()), () => res.destroy());
        return reply(200, answer());
      }

      if (req.method === 'GET' && url.pathname === '/v2.0/metrics/measurements') {
        const project = token === undefined ? undefined : tokens.get(token);
        if (project === undefined) return reply(401, UNAUTHORIZED_MONASCA);
        const answer = listMeasurements(projects.get(project)!, url);
        return reply(answer.status, answer.body);
      }

      unexpected.push(`${req.method} ${url.pathname}${url.search}`);
      // A path no route serves is 404 whatever the method, as Keystone's and Monasca's routers answer
      // (a token request sent below the root, identity_url/identity/v2.0/tokens, is one).
      reply(404, { title: 'Not Found', description: `No route for ${req.method} ${url.pathname}` });
    });
  });

  /** GET /v2.0/metrics/measurements: the metrics the name and dimensions match, their measurements in the window. */
  function listMeasurements(held: EmulatedProject, url: URL): { status: number; body: unknown } {
    const unprocessable = (description: string) => ({ status: 422, body: { title: 'Unprocessable Entity', description } });
    const refused = /[><={}(),'"\\;&]/;
    const name = url.searchParams.get('name');
    if (name === null || name === '') return unprocessable('Missing name');
    if (refused.test(name)) return unprocessable(`Invalid characters in metric name ${name}`);
    const start = Date.parse(url.searchParams.get('start_time') ?? '');
    if (Number.isNaN(start)) return unprocessable('Missing start time');
    const end = url.searchParams.has('end_time') ? Date.parse(url.searchParams.get('end_time')!) : Infinity;
    const wanted: Record<string, string> = {};
    for (const pair of (url.searchParams.get('dimensions') ?? '').split(',').filter((p) => p !== '')) {
      const [key, ...rest] = pair.split(':');
      const value = rest.join(':');
      if (refused.test(key!) || refused.test(value)) return unprocessable(`Invalid characters in dimension ${pair}`);
      wanted[key!] = value;
    }
    const matching = held.measurements.filter((m) => m.name === name && Object.entries(wanted).every(([k, v]) => m.dimensions[k] === v));
    if (url.searchParams.get('group_by') !== '*' && matching.length > 1) {
      return { status: 409, body: { title: 'Conflict', description: "Found multiple metrics matching metric name and dimensions. Please refine your search criteria using a unique metric name or additional dimensions. Alternatively, you may specify 'merge_metrics=True' as a query parameter to combine all metrics matching search criteria into a single series." } };
    }
    const limit = Math.min(emulator.maxLimit, Number(url.searchParams.get('limit') ?? emulator.measurementsPage));
    const [afterMetric, afterTime] = (url.searchParams.get('offset') ?? '-1_0').split('_').map(Number) as [number, number];
    const elements: Record<string, unknown>[] = [];
    let left = limit;
    let last: string | undefined;
    for (const [index, metric] of matching.entries()) {
      if (index < afterMetric || left === 0) continue;
      const points = metric.points.filter(([at]) => at >= start && at <= end && (index > afterMetric || at > afterTime));
      if (points.length === 0) continue;
      const page = points.slice(0, left);
      left -= page.length;
      if (page.length < points.length || (left === 0 && matching.slice(index + 1).some((m) => m.points.some(([at]) => at >= start && at <= end)))) last = `${index}_${page[page.length - 1]![0]}`;
      elements.push({ id: new Date(page[page.length - 1]![0]).toISOString(), name: metric.name, dimensions: metric.dimensions, columns: ['timestamp', 'value', 'value_meta'], measurements: page.map(([at, value]) => [new Date(at).toISOString(), value, {}]) });
    }
    const self = 'http://monasca.internal:8070/v2.0/metrics/measurements';
    const links: { rel: string; href: string }[] = [{ rel: 'self', href: `${self}${url.search}` }];
    if (last !== undefined) {
      const rest = new URLSearchParams(url.searchParams);
      rest.set('offset', last);
      links.push({ rel: 'next', href: `${self}?${rest}` });
    }
    return { status: 200, body: { links, elements } };
  }

  /** GET /v2.0/alarms: sorted by alarm id (the API's default sort_by), an integer offset. */
  function listAlarms(held: EmulatedProject, url: URL) {
    const limit = Math.min(emulator.maxLimit, Number(url.searchParams.get('limit') ?? emulator.pageSize));
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const sorted = [...held.alarms].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const page = sorted.slice(offset, offset + limit);
    const self = 'http://monasca.internal:8070/v2.0/alarms';
    const links: { rel: string; href: string }[] = [{ rel: 'self', href: `${self}${url.search}` }];
    if (offset + limit < sorted.length) links.push({ rel: 'next', href: `${self}?offset=${offset + limit}&limit=${limit}` });
    const elements = page.map((alarm) => ({
      ...alarm,
      links: [{ rel: 'self', href: `${self}/${alarm.id}` }, { rel: 'state-history', href: `${self}/${alarm.id}/state-history` }],
      alarm_definition: { ...alarm.alarm_definition, links: [{ rel: 'self', href: `http://monasca.internal:8070/v2.0/alarm-definitions/${alarm.alarm_definition.id}` }] },
    }));
    return { links, elements };
  }

  /** GET /v2.0/alarms/state-history: the transitions of existing alarms, oldest first, paged by time (ms) offset. */
  function listHistory(held: EmulatedProject, url: URL) {
    const limit = Math.min(emulator.maxLimit, Number(url.searchParams.get('limit') ?? emulator.pageSize));
    const time = (name: string) => (url.searchParams.has(name) ? Date.parse(url.searchParams.get(name)!) : undefined);
    const start = time('start_time');
    const end = time('end_time');
    const offset = url.searchParams.get('offset');
    const existing = new Set(held.alarms.map((a) => a.id));
    const matching = held.history
      .map((t) => ({ ...t, id: String(Date.parse(t.timestamp)) }))
      .filter((t) => existing.has(t.alarm_id))
      .filter((t) => (start === undefined || Number(t.id) >= start) && (end === undefined || Number(t.id) <= end) && (offset === null || Number(t.id) > Number(offset)))
      .sort((a, b) => Number(a.id) - Number(b.id));
    const page = matching.slice(0, limit);
    const self = 'http://monasca.internal:8070/v2.0/alarms/state-history';
    const links: { rel: string; href: string }[] = [{ rel: 'self', href: `${self}${url.search}` }];
    if (matching.length > limit) {
      const rest = new URLSearchParams(url.searchParams);
      rest.set('offset', page[page.length - 1]!.id);
      links.push({ rel: 'next', href: `${self}?${rest}` });
    }
    return { links, elements: page };
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const emulator: KeystoneMonasca = {
    url: base,
    requests,
    projects,
    unexpected,
    gate: undefined,
    pageSize: 2,
    measurementsPage: 10_000,
    maxLimit: 10_000,
    revokeTokens: () => tokens.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return emulator;
}
