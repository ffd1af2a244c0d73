import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type NovaEmulator, startNovaEmulator } from './nova-emulator.js';

/**
 * The Keystone + Nova emulator (test/support/nova-emulator.ts) driven with plain fetch, as a
 * client would. What it emulates and where each behaviour was checked is cited at the top of that
 * file; the facts these assertions rest on:
 * - Keystone application-credential auth: 201 + X-Subject-Token (api-ref identity v3,
 *   "Authenticating with an Application Credential"); a wrong secret is 401 "The request you have
 *   made requires authentication." with WWW-Authenticate (openstack/keystone
 *   application_credential/backends/sql.py authenticate, exception.Unauthorized,
 *   server/flask/application.py); an unknown id is 404 "Could not find Application Credential:
 *   <id>." (auth/core.py _lookup_app_cred -> ApplicationCredentialNotFound, not caught); a scope
 *   in the request is 401 (auth/core.py _validate_and_normalize_scope_data).
 * - Nova behind keystonemiddleware: no/invalid/expired token 401 with the same error body
 *   (keystonemiddleware auth_token AuthProtocol.process_request); another project's server 404
 *   "Instance <id> could not be found." (nova db/main/api.py project_only=True,
 *   exception.InstanceNotFound); actions 202, delete 204 (api/openstack/compute/servers.py);
 *   409 "Cannot 'start' instance <id> while it is in vm_state active" (api/openstack/common.py
 *   raise_http_conflict_for_instance_invalid_state, with the 'start'/'stop'/'reboot' servers.py
 *   passes); status from (vm_state, task_state) by common.py _STATE_MAP.
 */

const PROJECT = { id: '5f1c6f0d2b8a4d7e9c3b1a2f4e6d8c0b', name: 'ops' };
const OTHER = { id: 'a9e8d7c6b5a44f3e2d1c0b9a8f7e6d5c', name: 'other' };
const CRED = { id: '423f19a4ac1e4f48bbb4180756e6eb6c', secret: 'rEaLlY-s3cret-value' };
const OTHER_CRED = { id: '9d2b1e0f8c7a4b6d5e3f1a0b9c8d7e6f', secret: 'another-secret' };
const UNAUTHORIZED = { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } };

let emulator: NovaEmulator;
let serial = 0;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

async function call(url: string, init: { method?: string; token?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  if (init.token) headers['x-auth-token'] = init.token;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** POST {authUrl}/auth/tokens with an application credential, as the api-ref's request sample. */
function authenticate(id: string, secret: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  return call(`${emulator.authUrl}/auth/tokens`, {
    method: 'POST',
    body: { auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } }, ...extra } },
  });
}

interface TokenBody {
  token: {
    methods: string[];
    expires_at: string;
    issued_at: string;
    project: { id: string; name: string; domain: { id: string; name: string } };
    application_credential: { id: string; name: string; restricted: boolean };
    catalog: { type: string; name: string; endpoints: { interface: string; region: string; region_id: string; url: string }[] }[];
  };
}

/** What a client does: authenticate, keep the token, find the public compute endpoint. */
async function login(cred = CRED): Promise<{ token: string; compute: string; body: TokenBody }> {
  const answer = await authenticate(cred.id, cred.secret);
  expect(answer.status).toBe(201);
  const token = answer.headers.get('x-subject-token');
  expect(token).toBeTruthy();
  const body = answer.json as TokenBody;
  const endpoint = body.token.catalog.find((s) => s.type === 'compute')?.endpoints.find((e) => e.interface === 'public');
  expect(endpoint).toBeDefined();
  return { token: token!, compute: endpoint!.url, body };
}

/** A fresh server id per test (Nova ids are UUIDs). */
function newServer(status: 'ACTIVE' | 'SHUTOFF', project = PROJECT.id): string {
  serial += 1;
  const id = `0e44cc9c-e052-415d-afbf-${serial.toString(16).padStart(12, '0')}`;
  emulator.addServer({ id, projectId: project, name: `server-${serial}`, status });
  return id;
}

interface ServerBody {
  server: { id: string; name: string; status: string; tenant_id: string; 'OS-EXT-STS:vm_state': string; 'OS-EXT-STS:task_state': string | null; 'OS-EXT-STS:power_state': number };
}

async function show(compute: string, token: string, id: string): Promise<Answer & { server?: ServerBody['server'] }> {
  const answer = await call(`${compute}/servers/${id}`, { token });
  return { ...answer, server: (answer.json as ServerBody | undefined)?.server };
}

const act = (compute: string, token: string | null, id: string, body: unknown) => call(`${compute}/servers/${id}/action`, { method: 'POST', token, body });

beforeAll(async () => {
  emulator = await startNovaEmulator();
  emulator.addApplicationCredential(CRED.id, CRED.secret, PROJECT, { name: 'pitcrew' });
  emulator.addApplicationCredential(OTHER_CRED.id, OTHER_CRED.secret, OTHER, { region: 'RegionTwo' });
});

afterAll(async () => {
  await emulator.close();
});

beforeEach(() => {
  emulator.transitionPolls = 1;
});

describe('Keystone: application credential auth', () => {
  it('issues a project-scoped token, valid 1 h, with the compute endpoint in the catalog', async () => {
    const before = Date.now();
    const answer = await authenticate(CRED.id, CRED.secret);
    expect(answer.status).toBe(201);
    const token = answer.headers.get('x-subject-token');
    expect(token).toMatch(/^gAAAAA[\w-]{40,}$/);
    const body = answer.json as TokenBody;
    expect(body.token.methods).toEqual(['application_credential']);
    expect(body.token.project).toEqual({ id: PROJECT.id, name: PROJECT.name, domain: { id: 'default', name: 'Default' } });
    expect(body.token.application_credential).toEqual({ id: CRED.id, name: 'pitcrew', restricted: true });
    expect(body.token.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const lifetime = Date.parse(body.token.expires_at) - before;
    expect(lifetime).toBeGreaterThan(3590_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000 + 5_000);
    const compute = body.token.catalog.find((s) => s.type === 'compute');
    expect(compute?.name).toBe('nova');
    const publicEndpoint = compute?.endpoints.find((e) => e.interface === 'public');
    expect(publicEndpoint).toEqual({ id: expect.any(String), interface: 'public', region: 'RegionOne', region_id: 'RegionOne', url: emulator.computeUrl });
    // An internal endpoint comes first, on a host that cannot resolve: the client must choose by interface.
    expect(compute?.endpoints[0]?.interface).toBe('internal');
    expect(new URL(compute!.endpoints[0]!.url).hostname).toMatch(/\.invalid$/);
    expect(emulator.tokens().map((t) => t.token)).toContain(token);
    expect(emulator.authUrl).toBe(emulator.computeUrl.replace(/\/v2\.1$/, '/v3'));
  });

  it("names the credential's region in the catalog", async () => {
    const { body } = await login(OTHER_CRED);
    const endpoints = body.token.catalog.find((s) => s.type === 'compute')!.endpoints;
    expect(endpoints.every((e) => e.region === 'RegionTwo' && e.region_id === 'RegionTwo')).toBe(true);
    expect(body.token.project.id).toBe(OTHER.id);
  });

  it('refuses a wrong secret with 401 and issues no token', async () => {
    const issued = emulator.tokens().length;
    const answer = await authenticate(CRED.id, `${CRED.secret}x`);
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual(UNAUTHORIZED);
    expect(answer.headers.get('www-authenticate')).toMatch(/^Keystone uri="http:\/\/127\.0\.0\.1:\d+"$/);
    expect(answer.headers.get('x-subject-token')).toBeNull();
    // Another credential's secret does not open this one either.
    expect((await authenticate(CRED.id, OTHER_CRED.secret)).status).toBe(401);
    expect((await authenticate(CRED.id, '')).status).toBe(401);
    expect(emulator.tokens().length).toBe(issued);
    expect(emulator.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v3/auth/tokens', authorized: false, status: 401 });
  });

  it('refuses an unknown credential id with 404, as Keystone looks the credential up before checking the secret', async () => {
    const answer = await authenticate('0000aaaa0000aaaa0000aaaa0000aaaa', CRED.secret);
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({ error: { code: 404, title: 'Not Found', message: 'Could not find Application Credential: 0000aaaa0000aaaa0000aaaa0000aaaa.' } });
    expect(answer.headers.get('x-subject-token')).toBeNull();
  });

  it('refuses a request that asks for a scope', async () => {
    const answer = await authenticate(CRED.id, CRED.secret, { scope: { project: { id: OTHER.id } } });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: { code: 401, title: 'Unauthorized', message: 'Error authenticating with application credential: Application credentials cannot request a scope.' } });
  });

  it('answers malformed requests with 400', async () => {
    expect((await call(`${emulator.authUrl}/auth/tokens`, { method: 'POST', body: { auth: {} } })).status).toBe(400);
    expect((await call(`${emulator.authUrl}/auth/tokens`, { method: 'POST', body: { auth: { identity: { methods: ['application_credential'], application_credential: { secret: 'x' } } } } })).status).toBe(400);
  });
});

describe('Nova: authentication in front of every call', () => {
  it('refuses no token, a token Keystone did not issue, and an expired token with 401; a new token works', async () => {
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    expect((await show(compute, token, id)).status).toBe(200);

    const none = await call(`${compute}/servers?limit=1`);
    expect(none.status).toBe(401);
    expect(none.json).toEqual(UNAUTHORIZED);
    expect(none.headers.get('www-authenticate')).toMatch(/^Keystone uri="/);

    // Looks like a Fernet token, was never issued.
    const forged = `gAAAAA${'A'.repeat(128)}`;
    expect((await call(`${compute}/servers/${id}`, { token: forged })).status).toBe(401);
    expect((await act(compute, forged, id, { 'os-stop': null })).status).toBe(401);
    expect((await call(`${compute}/servers/${id}`, { method: 'DELETE', token: forged })).status).toBe(401);
    // The secret is not a token.
    expect((await call(`${compute}/servers?limit=1`, { token: CRED.secret })).status).toBe(401);
    expect(emulator.server(id)).toMatchObject({ status: 'ACTIVE', deleted: false });
    expect(emulator.requests.filter((r) => r.token === forged).every((r) => !r.authorized && r.status === 401)).toBe(true);

    emulator.expireTokens();
    expect(emulator.tokens().every((t) => t.expiresAt.getTime() < Date.now())).toBe(true);
    const expired = await act(compute, token, id, { 'os-stop': null });
    expect(expired.status).toBe(401);
    expect(expired.json).toEqual(UNAUTHORIZED);
    expect(emulator.server(id)?.taskState).toBeNull();

    const again = await login();
    expect(again.token).not.toBe(token);
    expect((await show(again.compute, again.token, id)).status).toBe(200);
    expect((await show(compute, token, id)).status).toBe(401);
  });

  it("stops honouring a credential's tokens once the credential is removed", async () => {
    const cred = { id: 'b1b2b3b4b5b6b7b8b9b0c1c2c3c4c5c6', secret: 'short-lived' };
    emulator.addApplicationCredential(cred.id, cred.secret, PROJECT);
    const { token, compute } = await login(cred);
    expect((await call(`${compute}/servers?limit=1`, { token })).status).toBe(200);
    emulator.removeApplicationCredential(cred.id);
    expect((await call(`${compute}/servers?limit=1`, { token })).status).toBe(401);
    expect((await authenticate(cred.id, cred.secret)).status).toBe(404);
  });

  it('serves the version document without a token', async () => {
    const answer = await call(emulator.computeUrl);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ version: { id: 'v2.1', status: 'CURRENT', min_version: '2.1' } });
  });
});

describe('Nova: servers', () => {
  it("lists only the token's project's servers, a page at a time (a harmless read)", async () => {
    const mine = [newServer('ACTIVE'), newServer('SHUTOFF')];
    const theirs = newServer('ACTIVE', OTHER.id);
    const { token, compute } = await login();
    const first = await call(`${compute}/servers?limit=1`, { token });
    expect(first.status).toBe(200);
    expect(first.headers.get('openstack-api-version')).toBe('compute 2.1');
    const page = first.json as { servers: { id: string; name: string; links: unknown[] }[]; servers_links?: { href: string; rel: string }[] };
    expect(page.servers).toHaveLength(1);
    expect(page.servers[0]).toEqual({ id: expect.any(String), name: expect.any(String), links: expect.any(Array) });
    expect(page.servers_links?.[0]?.rel).toBe('next');

    const all = (await call(`${compute}/servers`, { token })).json as { servers: { id: string }[] };
    const ids = all.servers.map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining(mine));
    expect(ids).not.toContain(theirs);

    const other = await login(OTHER_CRED);
    const otherIds = ((await call(`${other.compute}/servers`, { token: other.token })).json as { servers: { id: string }[] }).servers.map((s) => s.id);
    expect(otherIds).toContain(theirs);
    expect(otherIds).not.toContain(mine[0]);

    expect((await call(`${compute}/servers?marker=nope`, { token })).status).toBe(400);
  });

  it('shows a server as Nova does', async () => {
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    const answer = await show(compute, token, id);
    expect(answer.status).toBe(200);
    expect(answer.server).toMatchObject({ id, status: 'ACTIVE', tenant_id: PROJECT.id, 'OS-EXT-STS:vm_state': 'active', 'OS-EXT-STS:task_state': null, 'OS-EXT-STS:power_state': 1 });
  });

  it('stops an ACTIVE server: 202, ACTIVE/powering-off for one poll, then SHUTOFF', async () => {
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    const answer = await act(compute, token, id, { 'os-stop': null });
    expect(answer.status).toBe(202);
    expect(answer.text).toBe('');
    const during = await show(compute, token, id);
    expect(during.server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:vm_state': 'active', 'OS-EXT-STS:task_state': 'powering-off' });
    const after = await show(compute, token, id);
    expect(after.server).toMatchObject({ status: 'SHUTOFF', 'OS-EXT-STS:vm_state': 'stopped', 'OS-EXT-STS:task_state': null, 'OS-EXT-STS:power_state': 4 });
    expect(emulator.server(id)).toMatchObject({ status: 'SHUTOFF', deleted: false });
    expect(emulator.requests.find((r) => r.path === `/v2.1/servers/${id}/action`)).toMatchObject({ method: 'POST', action: 'os-stop', token, authorized: true, status: 202 });
  });

  it('starts a SHUTOFF server, settling after transitionPolls GETs', async () => {
    emulator.transitionPolls = 3;
    const id = newServer('SHUTOFF');
    const { token, compute } = await login();
    expect((await act(compute, token, id, { 'os-start': null })).status).toBe(202);
    for (let i = 0; i < 3; i++) {
      expect((await show(compute, token, id)).server).toMatchObject({ status: 'SHUTOFF', 'OS-EXT-STS:task_state': 'powering-on' });
    }
    expect((await show(compute, token, id)).server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': null });
  });

  it('settles at once with transitionPolls 0', async () => {
    emulator.transitionPolls = 0;
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    expect((await act(compute, token, id, { 'os-stop': null })).status).toBe(202);
    expect((await show(compute, token, id)).server?.status).toBe('SHUTOFF');
  });

  it('reboots: SOFT shows REBOOT, HARD shows HARD_REBOOT, then ACTIVE; counts reboots', async () => {
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    expect((await act(compute, token, id, { reboot: { type: 'SOFT' } })).status).toBe(202);
    expect((await show(compute, token, id)).server).toMatchObject({ status: 'REBOOT', 'OS-EXT-STS:task_state': 'rebooting' });
    expect((await show(compute, token, id)).server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': null });
    expect((await act(compute, token, id, { reboot: { type: 'HARD' } })).status).toBe(202);
    expect((await show(compute, token, id)).server?.status).toBe('HARD_REBOOT');
    expect((await show(compute, token, id)).server?.status).toBe('ACTIVE');
    expect(emulator.server(id)?.reboots).toBe(2);
    expect((await act(compute, token, id, { reboot: { type: 'GENTLE' } })).status).toBe(400);
    expect((await act(compute, token, id, { reboot: {} })).status).toBe(400);
    expect(emulator.server(id)?.reboots).toBe(2);
  });

  it('deletes: 204, task_state deleting for one poll, then 404', async () => {
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    const answer = await call(`${compute}/servers/${id}`, { method: 'DELETE', token });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect((await show(compute, token, id)).server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': 'deleting' });
    // Deleting again while it is being deleted is accepted and ignored (compute/api.py _delete).
    expect((await call(`${compute}/servers/${id}`, { method: 'DELETE', token })).status).toBe(204);
    const gone = await show(compute, token, id);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({ itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });
    expect(emulator.server(id)).toMatchObject({ deleted: true, status: 'DELETED' });
    expect((await call(`${compute}/servers/${id}`, { method: 'DELETE', token })).status).toBe(404);
    expect((await act(compute, token, id, { 'os-start': null })).status).toBe(404);
  });

  it("answers another project's server, and an unknown one, with 404 and leaves it alone", async () => {
    const theirs = newServer('ACTIVE', OTHER.id);
    const { token, compute } = await login();
    const answer = await show(compute, token, theirs);
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({ itemNotFound: { code: 404, message: `Instance ${theirs} could not be found.` } });
    expect((await act(compute, token, theirs, { 'os-stop': null })).status).toBe(404);
    expect((await act(compute, token, theirs, { reboot: { type: 'HARD' } })).status).toBe(404);
    expect((await call(`${compute}/servers/${theirs}`, { method: 'DELETE', token })).status).toBe(404);
    expect(emulator.server(theirs)).toMatchObject({ status: 'ACTIVE', taskState: null, reboots: 0, deleted: false });
    // Its own project sees it.
    const other = await login(OTHER_CRED);
    expect((await show(other.compute, other.token, theirs)).status).toBe(200);

    const unknown = 'ffffffff-ffff-4fff-8fff-ffffffffffff';
    expect((await show(compute, token, unknown)).json).toEqual({ itemNotFound: { code: 404, message: `Instance ${unknown} could not be found.` } });
  });

  it('answers an action in the wrong state with 409 conflictingRequest', async () => {
    const active = newServer('ACTIVE');
    const stopped = newServer('SHUTOFF');
    const { token, compute } = await login();

    const start = await act(compute, token, active, { 'os-start': null });
    expect(start.status).toBe(409);
    expect(start.json).toEqual({ conflictingRequest: { code: 409, message: `Cannot 'start' instance ${active} while it is in vm_state active` } });
    expect((await act(compute, token, stopped, { 'os-stop': null })).json).toEqual({ conflictingRequest: { code: 409, message: `Cannot 'stop' instance ${stopped} while it is in vm_state stopped` } });
    expect((await act(compute, token, stopped, { reboot: { type: 'SOFT' } })).json).toEqual({ conflictingRequest: { code: 409, message: `Cannot 'reboot' instance ${stopped} while it is in vm_state stopped` } });

    // While a stop is under way, a second stop conflicts on task_state.
    expect((await act(compute, token, active, { 'os-stop': null })).status).toBe(202);
    expect((await act(compute, token, active, { 'os-stop': null })).json).toEqual({ conflictingRequest: { code: 409, message: `Cannot 'stop' instance ${active} while it is in task_state powering-off` } });
    expect(emulator.server(active)?.taskState).toBe('powering-off');
    expect(emulator.server(stopped)).toMatchObject({ status: 'SHUTOFF', taskState: null, reboots: 0 });

    // A HARD reboot of a SHUTOFF server is allowed (ALLOW_HARD_REBOOT) and brings it up.
    expect((await act(compute, token, stopped, { reboot: { type: 'hard' } })).status).toBe(202);
    expect((await show(compute, token, stopped)).server?.status).toBe('SHUTOFF');
    expect((await show(compute, token, stopped)).server?.status).toBe('ACTIVE');
  });

  it('refuses an unknown action and a malformed body with 400', async () => {
    const id = newServer('ACTIVE');
    const { token, compute } = await login();
    expect((await act(compute, token, id, { 'os-hibernate': null })).json).toEqual({ badRequest: { code: 400, message: 'There is no such action: os-hibernate' } });
    const malformed = await fetch(`${compute}/servers/${id}/action`, { method: 'POST', headers: { 'x-auth-token': token, 'content-type': 'application/json' }, body: '{"os-stop":' });
    expect(malformed.status).toBe(400);
    expect(emulator.server(id)?.taskState).toBeNull();
  });

  it('accepts a compute URL holding the project id, and refuses another project id there', async () => {
    const cred = { id: 'c0c1c2c3c4c5c6c7c8c9d0d1d2d3d4d5', secret: 'with-project' };
    emulator.addApplicationCredential(cred.id, cred.secret, PROJECT, { projectInUrl: true });
    const id = newServer('ACTIVE');
    const { token, compute } = await login(cred);
    expect(compute).toBe(`${emulator.computeUrl}/${PROJECT.id}`);
    expect((await show(compute, token, id)).status).toBe(200);
    const wrong = await show(`${emulator.computeUrl}/${OTHER.id}`, token, id);
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ badRequest: { code: 400, message: `Malformed request URL: URL's project_id '${OTHER.id}' doesn't match Context's project_id '${PROJECT.id}'` } });
  });
});
