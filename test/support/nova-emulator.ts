import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An emulator of OpenStack Keystone v3 (token issue with an application credential) and of the
 * Nova compute API v2.1 (servers: show, list, start, stop, reboot, delete), for tests of
 * pitcrew's OpenStack cloud actions and of its "test credential" call. Both listen on one port:
 * Keystone under /v3, Nova under /v2.1. Every Nova call is checked against the tokens this
 * Keystone issued, as keystonemiddleware's auth_token does in front of Nova. Where each behaviour
 * comes from (openstack/keystone 30ef2ff, openstack/keystonemiddleware 39ae6ca, openstack/nova 00a0304):
 *
 * Keystone
 * - POST /v3/auth/tokens {auth:{identity:{methods:["application_credential"],
 *   application_credential:{id, secret}}}} -> 201, token in X-Subject-Token, body
 *   {token:{application_credential:{id, name, restricted}, audit_ids, catalog, expires_at,
 *   is_domain, issued_at, methods, project:{domain, id, name}, roles, user}}: api-ref
 *   https://docs.openstack.org/api-ref/identity/v3/ "Authenticating with an Application
 *   Credential", sample api-ref/source/v3/samples/admin/auth-application-credential-response.json.
 *   The token is always scoped to the credential's project (keystone/auth/core.py
 *   _set_scope_from_app_cred).
 * - A wrong secret -> 401 {error:{code:401, title:"Unauthorized", message:"The request you have made
 *   requires authentication."}} with WWW-Authenticate: Keystone uri="…"
 *   (keystone/application_credential/backends/sql.py authenticate raises AssertionError ->
 *   auth/plugins/application_credential.py raises exception.Unauthorized, whose message_format is
 *   that sentence; server/flask/application.py _handle_keystone_exception renders the body and
 *   the header).
 * - An unknown credential id -> 404 {error:{code:404, title:"Not Found", message:"Could not find
 *   Application Credential: <id>."}}: NOT 401. keystone/auth/core.py _lookup_app_cred (and
 *   auth/plugins/core.py AppCredInfo) call get_application_credential(id) before any secret check,
 *   and its ApplicationCredentialNotFound (exception.py, a NotFound) is not caught on that path.
 * - A request that also names a scope -> 401 "Error authenticating with application credential:
 *   Application credentials cannot request a scope." (auth/core.py
 *   _validate_and_normalize_scope_data, exception.ApplicationCredentialAuthError).
 * - Removing a credential makes its tokens invalid (token/provider.py _is_valid_token looks the
 *   credential up).
 * - GET /v3 -> the version document v3.14 (keystone/api/discovery.py).
 *
 * keystonemiddleware auth_token, in front of Nova
 * - No X-Auth-Token, or one Keystone did not issue, or an expired one -> 401
 *   {error:{code:401, title:"Unauthorized", message:"The request you have made requires
 *   authentication."}}, WWW-Authenticate: Keystone uri="…"
 *   (keystonemiddleware/auth_token/__init__.py AuthProtocol.process_request; delay_auth_decision
 *   is off in Nova's etc/nova/api-paste.ini, where authtoken comes before routing, so any path
 *   under /v2.1/ needs a token).
 *
 * Nova
 * - POST /v2.1/servers/{id}/action {"os-start": null} / {"os-stop": null} / {"reboot": {"type":
 *   "SOFT"|"HARD"}} -> 202, no body; DELETE /v2.1/servers/{id} -> 204
 *   (nova/api/openstack/compute/servers.py _start, _stop, _reboot, delete; api-ref
 *   servers-actions.inc; request schemas in compute/schemas/servers.py: reboot.type is one of
 *   HARD/Hard/hard/SOFT/Soft/soft, os-start/os-stop take any value).
 * - Faults {<name>:{code, message}} with name itemNotFound (404), conflictingRequest (409),
 *   badRequest (400) (nova/api/openstack/wsgi.py Fault).
 * - Unknown server, or a server of another project -> 404 "Instance <id> could not be found."
 *   (exception.InstanceNotFound; db/main/api.py _build_instance_get queries with
 *   project_only=True, so another project's server is simply not found).
 * - Wrong state -> 409 "Cannot '<action>' instance <id> while it is in <attr> <state>"
 *   (api/openstack/common.py raise_http_conflict_for_instance_invalid_state). The action named is
 *   'start', 'stop', 'reboot' (servers.py passes these, not 'os-start'/'os-stop'). State rules from
 *   compute/api.py: start needs vm_state stopped and task_state None; stop needs vm_state
 *   active|error and task_state None; soft reboot needs vm_state active and task_state None; hard
 *   reboot needs vm_state active|stopped|… and task_state in ALLOW_REBOOT; delete is allowed in any
 *   state and is a no-op when already deleting. vm_state is checked before task_state.
 * - Transitions: start sets task_state powering-on, stop powering-off, soft reboot rebooting,
 *   hard reboot rebooting_hard, delete deleting (compute/api.py; values from objects/fields.py).
 *   status is derived from (vm_state, task_state) by api/openstack/common.py _STATE_MAP: active ->
 *   ACTIVE, active+rebooting -> REBOOT, active+rebooting_hard -> HARD_REBOOT, stopped -> SHUTOFF
 *   (also while rebooting_hard or powering-on); powering-off and deleting do not change it.
 *   OS-EXT-STS:power_state 1 running, 4 shutdown (compute/power_state.py).
 * - GET /v2.1/servers(?limit, marker) -> {servers:[{id, links, name}], servers_links?:[{rel:"next"}]};
 *   a page holds min(limit, max_limit) servers, max_limit being osapi_max_limit (1000 by default;
 *   api/openstack/common.py get_limit_and_marker); /servers/detail shows each as GET /servers/{id},
 *   its `metadata` included;
 *   an unknown marker -> 400 "marker [<m>] not found" (servers.py, doc/api_samples/servers/
 *   servers-list-resp.json). GET /v2.1/servers/{id} -> {server:{…}} shaped as
 *   doc/api_samples/servers/server-get-resp.json. Once deleted a server is 404.
 * - A project id in the URL (/v2.1/{project_id}/servers…) that is not the token's -> 400
 *   "Malformed request URL: URL's project_id '…' doesn't match Context's project_id '…'" (wsgi.py).
 * - Responses carry OpenStack-API-Version: compute 2.1 and X-OpenStack-Nova-API-Version: 2.1
 *   (wsgi.py API_VERSION_REQUEST_HEADER), or the microversion the client asked for.
 *
 * The emulator's own choices (no real cloud is timed like this): a state change settles after
 * `transitionPolls` GETs of that server (show, or the detail list) made with a valid token of its
 * project: with N, the first N such GETs still show the transitional state and the next one the
 * settled state; 0 settles at once. The catalog lists the compute service with an `internal`
 * endpoint (an unreachable *.invalid host) before the `public` one, as kolla-style clouds
 * register both, so a client must pick the public interface.
 */

export type NovaVmState = 'active' | 'stopped' | 'deleted';
export type NovaTaskState = 'powering-on' | 'powering-off' | 'rebooting' | 'rebooting_hard' | 'deleting' | null;

export interface EmulatedServer {
  id: string;
  projectId: string;
  name: string;
  /** The status Nova would show now: ACTIVE, SHUTOFF, REBOOT, HARD_REBOOT, or DELETED once gone. */
  status: string;
  vmState: NovaVmState;
  taskState: NovaTaskState;
  /** How many reboot actions it has accepted. */
  reboots: number;
  deleted: boolean;
}

export interface NovaRequest {
  method: string;
  path: string;
  /** The action's key for POST …/action (os-start, os-stop, reboot, …); null otherwise. */
  action: string | null;
  /** The X-Auth-Token the request carried; null when none. */
  token: string | null;
  /** Keystone: the credential checked out. Nova: the token was valid (issued, unexpired, credential still there). */
  authorized: boolean;
  status: number;
}

export interface NovaEmulator {
  /** http://127.0.0.1:PORT/v3, what a credential's authUrl holds. */
  authUrl: string;
  /** The catalog's public compute endpoint, http://127.0.0.1:PORT/v2.1. */
  computeUrl: string;
  /**
   * Accept this application credential; its tokens are scoped to `project` (domain Default).
   * region: the catalog's region (default RegionOne). projectInUrl: the compute endpoint ends in
   * /v2.1/{project id}, as older deployments register it.
   */
  addApplicationCredential(id: string, secret: string, project: { id: string; name?: string }, options?: { region?: string; name?: string; projectInUrl?: boolean }): void;
  /** Forget a credential: it can no longer authenticate and its tokens stop working. */
  removeApplicationCredential(id: string): void;
  addServer(server: { id: string; projectId: string; name?: string; status: 'ACTIVE' | 'SHUTOFF'; metadata?: Record<string, string> }): void;
  /** The server as held now (a copy; reading it is not a poll); undefined if never added. */
  server(id: string): EmulatedServer | undefined;
  /** Every request, in order of arrival. */
  requests: NovaRequest[];
  /** The tokens issued so far (newest last). */
  tokens(): { token: string; credentialId: string; projectId: string; expiresAt: Date }[];
  /** GETs of a server a state change stays transitional for (see above). Default 1. */
  transitionPolls: number;
  /** Nova's max_limit (osapi_max_limit, 1000 by default): the most servers a list page holds, whatever limit asks. */
  maxLimit: number;
  /** Expire every token issued so far: Nova refuses them (401) and a client must authenticate again. */
  expireTokens(): void;
  close(): Promise<void>;
}

interface Credential {
  id: string;
  name: string;
  secret: string;
  projectId: string;
  projectName: string;
  region: string;
  projectInUrl: boolean;
  userId: string;
}

interface Token {
  token: string;
  credentialId: string;
  projectId: string;
  expiresAt: Date;
}

interface HeldServer {
  id: string;
  projectId: string;
  name: string;
  userId: string;
  vmState: NovaVmState;
  taskState: NovaTaskState;
  pollsLeft: number;
  metadata: Record<string, string>;
  reboots: number;
  created: string;
  updated: string;
}

const TOKEN_LIFETIME_MS = 3600_000;
const REQUIRES_AUTH = 'The request you have made requires authentication.';
const MAX_BODY = 1 << 20;
/** nova/api/openstack/api_version_request.py */
const MIN_MICROVERSION = '2.1';
const MAX_MICROVERSION = '2.104';

/** Keystone renders times with microseconds: "2018-01-15T22:14:05.000000Z". */
const keystoneTime = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const novaTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** common.py _STATE_MAP, for the states the emulator uses. */
function statusOf(vm: NovaVmState, task: NovaTaskState): string {
  if (vm === 'deleted') return 'DELETED';
  if (vm === 'stopped') return 'SHUTOFF';
  if (task === 'rebooting') return 'REBOOT';
  if (task === 'rebooting_hard') return 'HARD_REBOOT';
  return 'ACTIVE';
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

class Fault extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

const novaFault = (status: 400 | 404 | 409, message: string) => {
  const name = status === 400 ? 'badRequest' : status === 404 ? 'itemNotFound' : 'conflictingRequest';
  return new Fault(status, { [name]: { code: status, message } });
};

export async function startNovaEmulator(): Promise<NovaEmulator> {
  const credentials = new Map<string, Credential>();
  const tokens = new Map<string, Token>();
  const servers = new Map<string, HeldServer>();
  const requests: NovaRequest[] = [];
  let base = '';

  const unauthorized = (message = REQUIRES_AUTH) => new Fault(401, { error: { code: 401, title: 'Unauthorized', message } }, { 'www-authenticate': `Keystone uri="${base}"` });

  function computeEndpoint(credential: Credential): string {
    return `${base}/v2.1${credential.projectInUrl ? `/${credential.projectId}` : ''}`;
  }

  function catalog(credential: Credential) {
    const region = credential.region;
    const endpoint = (iface: string, url: string) => ({ id: randomUUID().replaceAll('-', ''), interface: iface, region, region_id: region, url });
    return [
      { type: 'identity', name: 'keystone', id: 'keystone-service', endpoints: [endpoint('public', base)] },
      {
        type: 'compute',
        name: 'nova',
        id: 'nova-service',
        endpoints: [endpoint('internal', `http://nova-internal.invalid:8774/v2.1${credential.projectInUrl ? `/${credential.projectId}` : ''}`), endpoint('public', computeEndpoint(credential))],
      },
    ];
  }

  function issueToken(body: unknown): { status: number; body: unknown; headers: Record<string, string> } {
    const auth = (body as { auth?: unknown } | null)?.auth;
    const identity = (auth as { identity?: unknown } | undefined)?.identity as { methods?: unknown; application_credential?: { id?: unknown; secret?: unknown; name?: unknown } } | undefined;
    if (typeof auth !== 'object' || auth === null || typeof identity !== 'object' || identity === null || !Array.isArray(identity.methods)) {
      throw new Fault(400, { error: { code: 400, title: 'Bad Request', message: "Invalid input for field 'identity': 'identity' is a required property" } });
    }
    if (!identity.methods.includes('application_credential')) {
      // The emulator implements no other method; Keystone would try them (password, token, …).
      throw unauthorized();
    }
    const given = identity.application_credential;
    if (typeof given !== 'object' || given === null || (typeof given.id !== 'string' && typeof given.name !== 'string')) {
      throw new Fault(400, {
        error: { code: 400, title: 'Bad Request', message: 'Expecting to find id or name in application credential. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.' },
      });
    }
    if ('scope' in auth) throw unauthorized('Error authenticating with application credential: Application credentials cannot request a scope.');
    if (typeof given.id !== 'string') throw unauthorized(); // by name needs a user too; not emulated
    const credential = credentials.get(given.id);
    if (!credential) throw new Fault(404, { error: { code: 404, title: 'Not Found', message: `Could not find Application Credential: ${given.id}.` } });
    if (typeof given.secret !== 'string' || !sameSecret(given.secret, credential.secret)) throw unauthorized();
    const issuedAt = new Date();
    const expiresAt = new Date(issuedAt.getTime() + TOKEN_LIFETIME_MS);
    const token = `gAAAAA${randomBytes(96).toString('base64url')}`;
    tokens.set(token, { token, credentialId: credential.id, projectId: credential.projectId, expiresAt });
    return {
      status: 201,
      headers: { 'x-subject-token': token },
      body: {
        token: {
          application_credential: { id: credential.id, name: credential.name, restricted: true },
          audit_ids: [randomBytes(16).toString('base64url').slice(0, 22)],
          catalog: catalog(credential),
          expires_at: keystoneTime(expiresAt),
          is_domain: false,
          issued_at: keystoneTime(issuedAt),
          methods: ['application_credential'],
          project: { domain: { id: 'default', name: 'Default' }, id: credential.projectId, name: credential.projectName },
          roles: [{ id: 'member-role', name: 'member' }],
          user: { domain: { id: 'default', name: 'Default' }, id: credential.userId, name: `user-${credential.projectName}`, password_expires_at: null },
        },
      },
    };
  }

  /** keystonemiddleware: the token must be one Keystone issued, unexpired, its credential still there. */
  function validToken(token: string | null): Token | undefined {
    if (token === null) return undefined;
    const held = tokens.get(token);
    if (!held || held.expiresAt.getTime() <= Date.now() || !credentials.has(held.credentialId)) return undefined;
    return held;
  }

  function settle(server: HeldServer): void {
    switch (server.taskState) {
      case 'powering-off':
        server.vmState = 'stopped';
        break;
      case 'powering-on':
      case 'rebooting':
      case 'rebooting_hard':
        server.vmState = 'active';
        break;
      case 'deleting':
        server.vmState = 'deleted';
        break;
      case null:
        return;
    }
    server.taskState = null;
    server.updated = novaTime(new Date());
  }

  function begin(server: HeldServer, task: Exclude<NovaTaskState, null>): void {
    server.taskState = task;
    server.pollsLeft = emulator.transitionPolls;
    server.updated = novaTime(new Date());
    if (server.pollsLeft <= 0) settle(server);
  }

  /** A GET that shows the server's state: one poll. */
  function poll(server: HeldServer): void {
    if (server.taskState === null) return;
    if (server.pollsLeft > 0) server.pollsLeft -= 1;
    else settle(server);
  }

  function visible(id: string, projectId: string): HeldServer {
    const server = servers.get(id);
    if (!server || server.projectId !== projectId || server.vmState === 'deleted') throw novaFault(404, `Instance ${id} could not be found.`);
    return server;
  }

  function conflict(action: string, server: HeldServer, attr: 'vm_state' | 'task_state'): Fault {
    return novaFault(409, `Cannot '${action}' instance ${server.id} while it is in ${attr} ${attr === 'vm_state' ? server.vmState : String(server.taskState)}`);
  }

  function view(server: HeldServer) {
    const self = `${base}/v2.1/servers/${server.id}`;
    const bookmark = `${base}/servers/${server.id}`;
    return {
      accessIPv4: '',
      accessIPv6: '',
      addresses: {},
      config_drive: '',
      created: server.created,
      flavor: { id: '1', links: [{ href: `${base}/flavors/1`, rel: 'bookmark' }] },
      hostId: 'a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3',
      id: server.id,
      image: '',
      key_name: null,
      links: [
        { href: self, rel: 'self' },
        { href: bookmark, rel: 'bookmark' },
      ],
      metadata: server.metadata,
      name: server.name,
      'OS-DCF:diskConfig': 'MANUAL',
      'OS-EXT-AZ:availability_zone': 'nova',
      'OS-EXT-STS:power_state': server.vmState === 'stopped' ? 4 : 1,
      'OS-EXT-STS:task_state': server.taskState,
      'OS-EXT-STS:vm_state': server.vmState,
      'os-extended-volumes:volumes_attached': [],
      'OS-SRV-USG:launched_at': server.created.replace('Z', '.000000'),
      'OS-SRV-USG:terminated_at': null,
      progress: 0,
      security_groups: [{ name: 'default' }],
      status: statusOf(server.vmState, server.taskState),
      tenant_id: server.projectId,
      updated: server.updated,
      user_id: server.userId,
    };
  }

  function list(url: URL, projectId: string, detail: boolean) {
    const mine = [...servers.values()].filter((s) => s.projectId === projectId && s.vmState !== 'deleted');
    const marker = url.searchParams.get('marker');
    let start = 0;
    if (marker !== null) {
      const at = mine.findIndex((s) => s.id === marker);
      if (at < 0) throw novaFault(400, `marker [${marker}] not found`);
      start = at + 1;
    }
    const limitParam = url.searchParams.get('limit');
    const asked = limitParam === null ? emulator.maxLimit : Number(limitParam);
    if (!Number.isInteger(asked) || asked < 0) throw novaFault(400, `Invalid input for query parameters limit. Value: ${limitParam}. '${limitParam}' does not match '^[0-9]*$'`);
    // api/openstack/common.py get_limit_and_marker: min(max_limit, limit), 0 meaning max_limit.
    const limit = Math.min(emulator.maxLimit, asked === 0 ? emulator.maxLimit : asked);
    let page = mine.slice(start, start + limit);
    if (detail) {
      page.forEach(poll);
      page = page.filter((s) => s.vmState !== 'deleted'); // a delete may have settled just now
    }
    const out: Record<string, unknown> = {
      servers: page.map((s) => (detail ? view(s) : { id: s.id, links: view(s).links, name: s.name })),
    };
    if (limitParam !== null && page.length === limit && start + page.length < mine.length) {
      out.servers_links = [{ href: `${base}${url.pathname}?limit=${limit}&marker=${page[page.length - 1]!.id}`, rel: 'next' }];
    }
    return out;
  }

  function action(server: HeldServer, body: Record<string, unknown>): void {
    const keys = Object.keys(body);
    if (keys.length !== 1) throw novaFault(400, 'Malformed request body');
    const key = keys[0]!;
    switch (key) {
      case 'os-start':
        if (server.vmState !== 'stopped') throw conflict('start', server, 'vm_state');
        if (server.taskState !== null) throw conflict('start', server, 'task_state');
        return begin(server, 'powering-on');
      case 'os-stop':
        if (server.vmState !== 'active') throw conflict('stop', server, 'vm_state');
        if (server.taskState !== null) throw conflict('stop', server, 'task_state');
        return begin(server, 'powering-off');
      case 'reboot': {
        const reboot = body.reboot as { type?: unknown } | null;
        const type = typeof reboot === 'object' && reboot !== null ? reboot.type : undefined;
        if (typeof reboot !== 'object' || reboot === null || Object.keys(reboot).length !== 1 || typeof type !== 'string' || !['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'].includes(type)) {
          throw novaFault(400, `Invalid input for field/attribute reboot. Value: ${JSON.stringify(reboot)}. 'type' must be one of 'HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'`);
        }
        if (type.toUpperCase() === 'SOFT') {
          if (server.vmState !== 'active') throw conflict('reboot', server, 'vm_state');
          if (server.taskState !== null) throw conflict('reboot', server, 'task_state');
          server.reboots += 1;
          return begin(server, 'rebooting');
        }
        // ALLOW_HARD_REBOOT vm states (of those emulated: active, stopped); task_states.ALLOW_REBOOT.
        if (server.taskState !== null && server.taskState !== 'rebooting' && server.taskState !== 'rebooting_hard') throw conflict('reboot', server, 'task_state');
        server.reboots += 1;
        return begin(server, 'rebooting_hard');
      }
      default:
        throw novaFault(400, `There is no such action: ${key}`);
    }
  }

  function microversion(req: http.IncomingMessage): string {
    const asked = req.headers['openstack-api-version'];
    const legacy = req.headers['x-openstack-nova-api-version'];
    const value = typeof asked === 'string' ? /^\s*compute\s+(\S+)/i.exec(asked)?.[1] : typeof legacy === 'string' ? legacy.trim() : undefined;
    if (value === undefined) return MIN_MICROVERSION;
    if (value === 'latest') return MAX_MICROVERSION;
    return value;
  }

  function nova(req: http.IncomingMessage, url: URL, body: unknown, token: Token): { status: number; body?: unknown } {
    const match = /^\/v2\.1(?:\/([^/]+))?\/servers(?:\/([^/]+)(\/action)?)?\/?$/.exec(url.pathname);
    if (!match) throw novaFault(404, 'The resource could not be found.');
    const [, urlProject, id, isAction] = match;
    if (urlProject !== undefined && urlProject !== token.projectId) {
      throw novaFault(400, `Malformed request URL: URL's project_id '${urlProject}' doesn't match Context's project_id '${token.projectId}'`);
    }
    const method = req.method ?? 'GET';
    if (id === undefined || id === 'detail') {
      if (method === 'GET') return { status: 200, body: list(url, token.projectId, id === 'detail') };
      throw novaFault(400, `${method} ${url.pathname} is not emulated (creating servers is out of scope)`);
    }
    if (isAction) {
      if (method !== 'POST') throw novaFault(404, 'The resource could not be found.');
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw novaFault(400, 'Malformed request body');
      const server = visible(id, token.projectId);
      action(server, body as Record<string, unknown>);
      return { status: 202 };
    }
    if (method === 'GET') {
      const server = visible(id, token.projectId);
      poll(server);
      // Settling may have finished a delete.
      if (server.vmState === 'deleted') throw novaFault(404, `Instance ${id} could not be found.`);
      return { status: 200, body: { server: view(server) } };
    }
    if (method === 'DELETE') {
      const server = visible(id, token.projectId);
      if (server.taskState !== 'deleting') begin(server, 'deleting');
      return { status: 204 };
    }
    throw novaFault(404, 'The resource could not be found.');
  }

  const httpServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      const tokenHeader = req.headers['x-auth-token'];
      const token = typeof tokenHeader === 'string' && tokenHeader !== '' ? tokenHeader : null;
      const entry: NovaRequest = { method: req.method ?? '', path: url.pathname, action: null, token, authorized: false, status: 0 };
      requests.push(entry);
      const isNova = url.pathname === '/v2.1' || url.pathname.startsWith('/v2.1/');
      const headers: Record<string, string> = { 'x-openstack-request-id': `req-${randomUUID()}` };
      const reply = (status: number, body?: unknown, extra: Record<string, string> = {}) => {
        entry.status = status;
        if (isNova && (entry.authorized || status === 200)) {
          // Nova's own headers; keystonemiddleware's 401 comes before Nova and has none.
          const version = microversion(req);
          headers['openstack-api-version'] = `compute ${version}`;
          headers['x-openstack-nova-api-version'] = version;
          headers['x-compute-request-id'] = headers['x-openstack-request-id']!;
          headers.vary = 'OpenStack-API-Version, X-OpenStack-Nova-API-Version';
        }
        if (body === undefined) {
          res.writeHead(status, { ...headers, ...extra, 'content-length': '0' });
          res.end();
        } else {
          res.writeHead(status, { ...headers, ...extra, 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        }
      };
      try {
        if (size > MAX_BODY) throw new Fault(413, { error: { code: 413, title: 'Request Entity Too Large', message: 'Request is too large.' } });
        let body: unknown = undefined;
        if (chunks.length > 0) {
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            throw isNova ? novaFault(400, 'Malformed request body') : new Fault(400, { error: { code: 400, title: 'Bad Request', message: 'Malformed request body' } });
          }
        }
        if (isNova && typeof body === 'object' && body !== null && url.pathname.endsWith('/action')) entry.action = Object.keys(body)[0] ?? null;

        if (url.pathname === '/v3' || url.pathname === '/v3/') {
          if (req.method !== 'GET') throw new Fault(405, { error: { code: 405, title: 'Method Not Allowed', message: 'The method is not allowed for the requested URL.' } });
          return reply(200, {
            version: {
              id: 'v3.14',
              status: 'stable',
              updated: '2020-04-07T00:00:00Z',
              links: [{ rel: 'self', href: `${base}/v3/` }],
              'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
            },
          });
        }
        if (url.pathname === '/v3/auth/tokens' && req.method === 'POST') {
          const issued = issueToken(body);
          entry.authorized = true;
          return reply(issued.status, issued.body, issued.headers);
        }
        if (url.pathname === '/v2.1' || url.pathname === '/v2.1/') {
          // The version document needs no token (api-paste.ini: /v2.1 -> oscomputeversion_v2).
          return reply(200, {
            version: {
              id: 'v2.1',
              links: [{ href: `${base}/v2.1/`, rel: 'self' }],
              'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
              status: 'CURRENT',
              version: MAX_MICROVERSION,
              min_version: MIN_MICROVERSION,
              updated: '2013-07-23T11:33:21Z',
            },
          });
        }
        if (isNova) {
          const valid = validToken(token);
          if (!valid) throw unauthorized();
          entry.authorized = true;
          const answer = nova(req, url, body, valid);
          return reply(answer.status, answer.body);
        }
        throw new Fault(404, { error: { code: 404, title: 'Not Found', message: 'The resource could not be found.' } });
      } catch (error) {
        if (error instanceof Fault) return reply(error.status, error.body, error.headers);
        entry.status = 500;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ computeFault: { code: 500, message: String(error) } }));
      }
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;

  const emulator: NovaEmulator = {
    authUrl: `${base}/v3`,
    computeUrl: `${base}/v2.1`,
    requests,
    transitionPolls: 1,
    maxLimit: 1000,
    addApplicationCredential(id, secret, project, options = {}) {
      if (credentials.has(id)) throw new Error(`application credential ${id} already exists`);
      credentials.set(id, {
        id,
        name: options.name ?? `pitcrew-${id.slice(0, 8)}`,
        secret,
        projectId: project.id,
        projectName: project.name ?? project.id,
        region: options.region ?? 'RegionOne',
        projectInUrl: options.projectInUrl ?? false,
        userId: `user-${project.id}`.slice(0, 64),
      });
    },
    removeApplicationCredential(id) {
      credentials.delete(id);
    },
    addServer(server) {
      if (servers.has(server.id)) throw new Error(`server ${server.id} already exists`);
      const now = novaTime(new Date());
      servers.set(server.id, {
        id: server.id,
        projectId: server.projectId,
        name: server.name ?? server.id,
        userId: `user-${server.projectId}`.slice(0, 64),
        vmState: server.status === 'ACTIVE' ? 'active' : 'stopped',
        taskState: null,
        pollsLeft: 0,
        reboots: 0,
        created: now,
        updated: now,
        metadata: { ...server.metadata },
      });
    },
    server(id) {
      const s = servers.get(id);
      if (!s) return undefined;
      return { id: s.id, projectId: s.projectId, name: s.name, status: statusOf(s.vmState, s.taskState), vmState: s.vmState, taskState: s.taskState, reboots: s.reboots, deleted: s.vmState === 'deleted' };
    },
    tokens: () => [...tokens.values()].map((t) => ({ ...t, expiresAt: new Date(t.expiresAt) })),
    expireTokens() {
      const past = new Date(Date.now() - 1000);
      for (const t of tokens.values()) t.expiresAt = past;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        httpServer.closeAllConnections();
        httpServer.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return emulator;
}
