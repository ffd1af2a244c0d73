import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An emulator of Google's OAuth 2.0 token endpoint (the service-account flow) and of the Compute
 * Engine v1 REST API for instances, for tests of pitcrew's GCP cloud actions driven by the real
 * @google-cloud/compute (REST transport) and google-auth-library. It issues service accounts with
 * their JSON key files, checks each assertion's RS256 signature with the public key of the key it
 * issued, and refuses every Compute call without an access token it issued. Where each behaviour
 * comes from:
 *
 * - Token request: POST, form-encoded `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=JWT`;
 *   the JWT's header {alg: RS256, typ: JWT}, claims iss (the service account's email), scope
 *   (space-separated), aud "always https://oauth2.googleapis.com/token", exp at most an hour after
 *   iat; the answer {access_token, expires_in, token_type: "Bearer"}
 *   (https://developers.google.com/identity/protocols/oauth2/service-account, "Making the access
 *   token request", "Forming the JWT claim set"; gtoken's request in
 *   node_modules/gtoken/build/cjs/src/index.cjs, _requestToken).
 * - Token errors, HTTP 400 as RFC 6749 §5.2 has it: `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`
 *   for a key Google does not hold (googleapis/google-cloud-python#10004, google-api-nodejs-client#2808;
 *   400 Bad Request: Triple-T/gradle-play-publisher#131); "Invalid grant: account not found" for an
 *   unknown or deleted account (googleapis/google-cloud-php#3622); "Invalid JWT: Token must be a
 *   short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in
 *   the JWT claim." (the shorter form quoted in erebusnz/gapi-google-analytics-php-interface#147,
 *   websightgmbh/l5-google-cloud-storage#6).
 * - Compute paths (the google.api.http options of compute.proto in
 *   node_modules/@google-cloud/compute/build/protos/google/cloud/compute/v1/compute.proto):
 *   GET/DELETE /compute/v1/projects/{project}/zones/{zone}/instances/{instance}, POST …/{instance}/start,
 *   /stop, /reset (each answering a zonal Operation), GET and POST …/zones/{zone}/operations/{operation}[/wait],
 *   GET /compute/v1/projects/{project}/aggregated/instances (filter, maxResults 0–500, pageToken,
 *   returnPartialSuccess; `items` keyed `zones/{zone}` holding `instances`, or a `warning`
 *   NO_RESULTS_ON_PAGE for a zone without any).
 * - The filter (AggregatedListInstancesRequest.filter in compute.proto): `field = "value"`, `!=`,
 *   `labels.key:*`; several expressions each in parentheses, ANDed unless OR is written (OR is
 *   refused here: pitcrew never sends it).
 * - Operation resource: kind compute#operation, id, name operation-{ms}-{hex}-{hex}-{hex},
 *   zone/targetLink/selfLink as https://www.googleapis.com/compute/v1/… URLs, operationType,
 *   status PENDING|RUNNING|DONE, progress, insert/start/endTime; a failed one DONE with
 *   error.errors[{code, message}], httpErrorStatusCode and httpErrorMessage
 *   (CCExtractor/sample-platform#901 quotes one whole; ZONE_RESOURCE_POOL_EXHAUSTED with 503
 *   SERVICE UNAVAILABLE: scylladb/scylla-cluster-tests#12477, googlefonts/fontbakery-dashboard#81).
 * - Instance status: PROVISIONING, STAGING, RUNNING, STOPPING, TERMINATED (a stopped VM), …
 *   (Instance.Status in compute.proto: "STOPPING: being deleted or killed").
 * - Errors `{"error": {"code", "message", "errors": [{"message", "domain": "global", "reason"}]}}`:
 *   404 notFound "The resource 'projects/p/zones/z/instances/x' was not found"
 *   (GoogleCloudPlatform/magic-modules#4377 quotes the body, elastic/beats#15613 an instance's);
 *   403 forbidden "Required 'compute.instances.get' permission for 'projects/p/zones/z/instances/x'"
 *   for a project the account has no role in (udacity/devops-intro-project#77,
 *   GoogleCloudPlatform/cloud-foundation-toolkit#97); 401 "Request had invalid authentication
 *   credentials. Expected OAuth 2 access token, login cookie or other valid authentication
 *   credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
 *   with status UNAUTHENTICATED (hashicorp/terraform#27658, kubeflow/kubeflow#4985).
 *
 * Not checked against a source, so the emulator's own choices: an assertion that is not three
 * base64url parts, or not RS256, is "Invalid JWT Signature." too; a wrong aud is "Invalid JWT:
 * Failed audience check."; a missing scope is invalid_scope; 403 "Request had insufficient
 * authentication scopes." for a token without the compute or cloud-platform scope; which statuses
 * each call accepts (start: TERMINATED, a no-op on a running one; stop: RUNNING or STAGING, a
 * no-op on a stopped one; reset: RUNNING only, else 400 resourceNotReady "The resource … is not
 * ready"; delete: anything); start going through STAGING (GCE goes PROVISIONING → STAGING →
 * RUNNING); the page tokens; a filter it cannot read is 400 invalid.
 *
 * Time: a change settles after `transitionPolls` reads (instances.get or zoneOperations.get) in
 * its zone, each read counting whatever it asks for; its operation is DONE then. An instance
 * added `stuck` never settles. Tests wait by polling, as pitcrew does, never by sleeping.
 */

export type GceStatus = 'PROVISIONING' | 'STAGING' | 'RUNNING' | 'STOPPING' | 'TERMINATED' | 'SUSPENDED';

/** The endpoint where the assertion's audience says it goes, whatever address it is posted to. */
export const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
const SELF = 'https://www.googleapis.com/compute/v1';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const COMPUTE_SCOPES = ['https://www.googleapis.com/auth/compute', 'https://www.googleapis.com/auth/cloud-platform'];
const TOKEN_SECONDS = 3599;
/** Zones every project lists in an aggregated list, beside those of its instances. */
const ZONES = ['us-central1-a', 'europe-west1-b', 'asia-northeast1-a'];

export interface ServiceAccount {
  email: string;
  /** The project the key file names (project_id). */
  projectId: string;
  /** The JSON key file, as Google gives it (its token_uri the emulator's unless told). */
  keyFile: string;
  privateKey: string;
}

export interface EmulatedInstance {
  project: string;
  zone: string;
  name: string;
  status: GceStatus;
  labels: Record<string, string>;
  /** instances.reset calls it has had. */
  resets: number;
  /** Deleted (instances.delete settled): GCE no longer knows it. */
  deleted: boolean;
}

export interface GceRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: Record<string, string>;
  /** `token` for the token endpoint; else the Compute call, as its IAM permission reads (compute.instances.start). */
  call: string;
  /** The service account: whose assertion (token) or whose access token (Compute); null when none is known. */
  serviceAccount: string | null;
  /** Whether the assertion or access token checked out. */
  authorized: boolean;
  /** The bearer token sent to Compute, or the token issued. */
  token: string | null;
  status: number;
}

export interface IssuedToken {
  token: string;
  serviceAccount: string;
  scopes: string[];
  expiresAt: number;
}

export interface GceEmulator {
  /** http://127.0.0.1:PORT: the Compute API's origin (PITCREW_GCP_COMPUTE_URL). */
  url: string;
  /** {url}/token (PITCREW_GCP_TOKEN_URL). */
  tokenUrl: string;
  /** A service account with a new key pair, with a role in `projects` (the first is its own, the key file's project_id). */
  addServiceAccount(options: { projects: string[]; email?: string; tokenUri?: string }): ServiceAccount;
  /** Its key file with another private key, which the emulator never issued: its assertions are refused. */
  forgedKeyFile(account: ServiceAccount): string;
  addInstance(instance: { project: string; zone: string; name: string; status: GceStatus; labels?: Record<string, string>; stuck?: boolean; startError?: { code: string; message: string; httpStatus: number; httpMessage: string } }): void;
  instance(project: string, zone: string, name: string): EmulatedInstance | undefined;
  requests: GceRequest[];
  tokens(): IssuedToken[];
  /** Compute refuses every token issued so far (401), as after a key is disabled and enabled again. */
  revokeTokens(): void;
  /** How many reads in its zone a change takes to settle (1 by default; 0: at once, its operation DONE in the call's answer). */
  transitionPolls: number;
  close(): Promise<void>;
}

interface Account {
  email: string;
  projects: string[];
  publicKey: KeyObject;
}

interface Stored extends EmulatedInstance {
  id: string;
  created: string;
  stuck: boolean;
  startError: { code: string; message: string; httpStatus: number; httpMessage: string } | undefined;
  /** The change in flight: the status it settles to (or deletion), the operations waiting for it, reads left. */
  pending: { to: GceStatus | 'deleted'; operations: StoredOperation[]; pollsLeft: number } | undefined;
}

interface StoredOperation {
  id: string;
  name: string;
  project: string;
  zone: string;
  type: string;
  target: Stored;
  user: string;
  status: 'PENDING' | 'RUNNING' | 'DONE';
  insertTime: string;
  endTime: string | undefined;
  error: Stored['startError'];
}

type Change = { now: GceStatus; to: GceStatus | 'deleted' } | 'join' | null;

class GceError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string, readonly statusName?: string) {
    super(message);
  }
}

const UNAUTHENTICATED = new GceError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.', 'UNAUTHENTICATED');

class TokenError extends Error {
  constructor(readonly error: string, readonly description: string) {
    super(description);
  }
}

export async function startGceEmulator(): Promise<GceEmulator> {
  const accounts = new Map<string, Account>();
  const instances = new Map<string, Stored>();
  const operations = new Map<string, StoredOperation>();
  const issued = new Map<string, IssuedToken>();
  const requests: GceRequest[] = [];
  let serial = 0;

  const key = (project: string, zone: string, name: string) => `${project}/${zone}/${name}`;
  const resource = (project: string, zone: string, kind: string, name: string) => `projects/${project}/zones/${zone}/${kind}/${name}`;

  // ---------------------------------------------------------------------------------------------
  // The token endpoint.

  function grant(form: URLSearchParams): { token: IssuedToken; account: string } {
    const grantType = form.get('grant_type') ?? '';
    if (grantType !== JWT_BEARER) throw new TokenError('unsupported_grant_type', `Invalid grant_type: ${grantType}`);
    const parts = (form.get('assertion') ?? '').split('.');
    const header = parts.length === 3 ? decodePart(parts[0]!) : undefined;
    const claims = parts.length === 3 ? decodePart(parts[1]!) : undefined;
    if (!header || !claims || header.alg !== 'RS256') throw new TokenError('invalid_grant', 'Invalid JWT Signature.');
    const account = accounts.get(String(claims.iss));
    if (!account) throw new TokenError('invalid_grant', 'Invalid grant: account not found');
    const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
    if (!verify('sha256', signed, account.publicKey, Buffer.from(parts[2]!, 'base64url'))) throw new TokenError('invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== GOOGLE_TOKEN_AUDIENCE) throw new TokenError('invalid_grant', 'Invalid JWT: Failed audience check.');
    const now = Math.floor(Date.now() / 1000);
    const [iat, exp] = [Number(claims.iat), Number(claims.exp)];
    if (!(exp > iat && exp - iat <= 3600 && iat <= now + 60 && exp > now)) {
      throw new TokenError('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
    if (scopes.length === 0) throw new TokenError('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const token: IssuedToken = { token: `ya29.emulated-${randomBytes(24).toString('base64url')}`, serviceAccount: account.email, scopes, expiresAt: Date.now() + TOKEN_SECONDS * 1000 };
    issued.set(token.token, token);
    return { token, account: account.email };
  }

  function tokenEndpoint(method: string, body: string, contentType: string, record: (entry: Partial<GceRequest>) => void): { status: number; body: unknown } {
    if (method !== 'POST') return { status: 405, body: { error: 'invalid_request', error_description: 'The token endpoint takes POST' } };
    if (!contentType.startsWith('application/x-www-form-urlencoded')) return { status: 400, body: { error: 'invalid_request', error_description: 'Bad Request' } };
    const form = new URLSearchParams(body);
    try {
      const { token, account } = grant(form);
      record({ serviceAccount: account, authorized: true, token: token.token });
      return { status: 200, body: { access_token: token.token, expires_in: TOKEN_SECONDS, token_type: 'Bearer' } };
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      const iss = decodePart((form.get('assertion') ?? '').split('.')[1] ?? '')?.iss;
      record({ serviceAccount: typeof iss === 'string' ? iss : null, authorized: false });
      return { status: 400, body: { error: error.error, error_description: error.description } };
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Compute Engine.

  function caller(authorization: string | undefined): IssuedToken {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    const known = token ? issued.get(token) : undefined;
    if (!known || known.expiresAt <= Date.now()) throw UNAUTHENTICATED;
    return known;
  }

  function allow(token: IssuedToken, project: string, permission: string, on: string): void {
    if (!token.scopes.some((scope) => COMPUTE_SCOPES.includes(scope))) throw new GceError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED');
    if (!accounts.get(token.serviceAccount)?.projects.includes(project)) throw new GceError(403, 'forbidden', `Required '${permission}' permission for '${on}'`);
  }

  function find(project: string, zone: string, name: string): Stored {
    const found = instances.get(key(project, zone, name));
    if (!found || found.deleted) throw new GceError(404, 'notFound', `The resource '${resource(project, zone, 'instances', name)}' was not found`);
    return found;
  }

  /** A read in the zone: time passes for every change in flight there. */
  function tick(project: string, zone: string): void {
    for (const instance of instances.values()) {
      if (instance.project !== project || instance.zone !== zone || !instance.pending || instance.stuck) continue;
      instance.pending.pollsLeft -= 1;
      if (instance.pending.pollsLeft <= 0) settle(instance);
    }
  }

  function settle(instance: Stored): void {
    const { to, operations: waiting } = instance.pending!;
    instance.pending = undefined;
    for (const operation of waiting) {
      operation.status = 'DONE';
      operation.endTime = new Date().toISOString();
    }
    if (waiting.some((operation) => operation.error)) instance.status = 'TERMINATED';
    else if (to === 'deleted') instance.deleted = true;
    else instance.status = to;
  }

  function begin(instance: Stored, type: string, user: string, change: Change): StoredOperation {
    serial += 1;
    const operation: StoredOperation = {
      id: String(7_000_000_000_000_000_000n + BigInt(serial)),
      name: `operation-${Date.now()}-${randomBytes(6).toString('hex').slice(0, 13)}-${randomBytes(4).toString('hex')}-${randomBytes(4).toString('hex')}`,
      project: instance.project, zone: instance.zone, type, target: instance, user, status: 'DONE', insertTime: new Date().toISOString(), endTime: new Date().toISOString(),
      error: type === 'start' && change ? instance.startError : undefined,
    };
    operations.set(`${instance.project}/${instance.zone}/${operation.name}`, operation);
    if (!change) return operation;
    operation.status = 'RUNNING';
    operation.endTime = undefined;
    if (change === 'join') {
      instance.pending!.operations.push(operation);
      return operation;
    }
    instance.status = change.now;
    instance.pending = { to: change.to, operations: [...(instance.pending?.operations ?? []), operation], pollsLeft: emulator.transitionPolls };
    if (emulator.transitionPolls <= 0 && !instance.stuck) settle(instance);
    return operation;
  }

  const notReady = (instance: Stored) => new GceError(400, 'resourceNotReady', `The resource '${resource(instance.project, instance.zone, 'instances', instance.name)}' is not ready`);

  /**
   * What each call does to the instance's status: the status now and the one it settles to, null
   * for a no-op, `join` for a call that asks what a change in flight already does (its operation
   * is DONE with it).
   */
  function changeOf(instance: Stored, verb: string): Change {
    const status = instance.status;
    const { pending } = instance;
    if (pending && verb !== 'delete') {
      const same = (verb === 'start' && pending.to === 'RUNNING') || (verb === 'stop' && pending.to === 'TERMINATED') || (verb === 'reset' && pending.to === 'RUNNING' && status === 'RUNNING');
      if (!same) throw notReady(instance);
      if (verb === 'reset') instance.resets += 1;
      return 'join';
    }
    switch (verb) {
      case 'start':
        if (status === 'TERMINATED') return { now: 'STAGING', to: 'RUNNING' };
        if (status === 'RUNNING' || status === 'STAGING' || status === 'PROVISIONING') return null;
        throw notReady(instance);
      case 'stop':
        if (status === 'RUNNING' || status === 'STAGING') return { now: 'STOPPING', to: 'TERMINATED' };
        if (status === 'TERMINATED') return null;
        throw notReady(instance);
      case 'reset':
        if (status !== 'RUNNING') throw notReady(instance);
        instance.resets += 1;
        return { now: 'RUNNING', to: 'RUNNING' };
      default:
        return { now: 'STOPPING', to: 'deleted' };
    }
  }

  function instanceJson(instance: Stored): unknown {
    const zoneUrl = `${SELF}/projects/${instance.project}/zones/${instance.zone}`;
    return {
      kind: 'compute#instance', id: instance.id, creationTimestamp: instance.created, name: instance.name,
      machineType: `${zoneUrl}/machineTypes/e2-small`, status: instance.status, zone: zoneUrl, labels: instance.labels,
      selfLink: `${zoneUrl}/instances/${instance.name}`,
    };
  }

  function operationJson(operation: StoredOperation): unknown {
    const zoneUrl = `${SELF}/projects/${operation.project}/zones/${operation.zone}`;
    const failed = operation.status === 'DONE' && operation.error;
    return {
      kind: 'compute#operation', id: operation.id, name: operation.name, zone: zoneUrl, operationType: operation.type,
      targetLink: `${zoneUrl}/instances/${operation.target.name}`, targetId: operation.target.id, status: operation.status, user: operation.user,
      progress: operation.status === 'DONE' ? 100 : 0, insertTime: operation.insertTime, startTime: operation.insertTime,
      ...(operation.endTime && operation.status === 'DONE' ? { endTime: operation.endTime } : {}),
      selfLink: `${zoneUrl}/operations/${operation.name}`,
      ...(failed ? { error: { errors: [{ code: operation.error!.code, message: operation.error!.message }] }, httpErrorStatusCode: operation.error!.httpStatus, httpErrorMessage: operation.error!.httpMessage } : {}),
    };
  }

  function aggregatedList(project: string, query: Record<string, string>): unknown {
    const matches = filterOf(query.filter ?? '');
    const maxResults = query.maxResults === undefined ? 500 : Number(query.maxResults);
    if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > 500) throw new GceError(400, 'invalid', `Invalid value for field 'maxResults': '${query.maxResults}'. Must be less than or equal to 500`);
    const all = [...instances.values()]
      .filter((i) => i.project === project && !i.deleted && matches(i))
      .sort((a, b) => a.zone.localeCompare(b.zone) || a.name.localeCompare(b.name));
    const offset = query.pageToken ? Number(Buffer.from(query.pageToken, 'base64url').toString()) : 0;
    const page = all.slice(offset, offset + (maxResults || 500));
    const zones = [...new Set([...ZONES, ...[...instances.values()].filter((i) => i.project === project).map((i) => i.zone)])].sort();
    const items: Record<string, unknown> = {};
    for (const zone of zones) {
      const here = page.filter((i) => i.zone === zone);
      items[`zones/${zone}`] = here.length > 0 ? { instances: here.map(instanceJson) }
        : { warning: { code: 'NO_RESULTS_ON_PAGE', message: `There are no results for scope 'zones/${zone}' on this page.`, data: [{ key: 'scope', value: `zones/${zone}` }] } };
    }
    const next = offset + page.length < all.length ? { nextPageToken: Buffer.from(String(offset + page.length)).toString('base64url') } : {};
    return { kind: 'compute#instanceAggregatedList', id: `projects/${project}/aggregated/instances`, items, selfLink: `${SELF}/projects/${project}/aggregated/instances`, ...next };
  }

  /** Routes a Compute call: names it for the record, checks its token and the account's role, answers it. */
  function compute(method: string, path: string, query: Record<string, string>, authorization: string | undefined, record: (entry: Partial<GceRequest>) => void): unknown {
    const route = routeOf(method, path);
    record({ call: route.permission });
    const token = caller(authorization);
    record({ serviceAccount: token.serviceAccount, authorized: true, token: token.token });
    const { project, zone, name, permission } = route;
    if (route.kind === 'list') {
      allow(token, project, permission, `projects/${project}`);
      return aggregatedList(project, query);
    }
    if (route.kind === 'operation') {
      allow(token, project, permission, resource(project, zone, 'operations', name));
      tick(project, zone);
      const found = operations.get(`${project}/${zone}/${name}`);
      if (!found) throw new GceError(404, 'notFound', `The resource '${resource(project, zone, 'operations', name)}' was not found`);
      return operationJson(found);
    }
    allow(token, project, permission, resource(project, zone, 'instances', name));
    if (route.verb === 'get') tick(project, zone);
    const instance = find(project, zone, name);
    if (route.verb === 'get') return instanceJson(instance);
    return operationJson(begin(instance, route.verb, token.serviceAccount, changeOf(instance, route.verb)));
  }

  // ---------------------------------------------------------------------------------------------
  // The server.

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://emulator');
      const entry: GceRequest = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), call: '', serviceAccount: null, authorized: false, token: null, status: 0 };
      requests.push(entry);
      const record = (fields: Partial<GceRequest>) => Object.assign(entry, fields);
      let status = 200;
      let body: unknown;
      try {
        if (url.pathname === '/token') {
          entry.call = 'token';
          ({ status, body } = tokenEndpoint(entry.method, Buffer.concat(chunks).toString('utf8'), req.headers['content-type'] ?? '', record));
        } else {
          body = compute(entry.method, url.pathname, entry.query, req.headers.authorization, record);
        }
      } catch (error) {
        if (!(error instanceof GceError)) throw error;
        if (error.status === 401) entry.authorized = false;
        status = error.status;
        body = { error: { code: error.status, message: error.message, errors: [{ message: error.status === 401 ? 'Invalid Credentials' : error.message, domain: 'global', reason: error.reason }], ...(error.statusName ? { status: error.statusName } : {}) } };
      }
      entry.status = status;
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const emulator: GceEmulator = {
    url,
    tokenUrl: `${url}/token`,
    requests,
    transitionPolls: 1,
    addServiceAccount({ projects, email, tokenUri }) {
      const projectId = projects[0]!;
      const address = email ?? `pitcrew-${accounts.size + 1}@${projectId}.iam.gserviceaccount.com`;
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      accounts.set(address, { email: address, projects, publicKey });
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      return { email: address, projectId, privateKey: pem, keyFile: keyFile(address, projectId, pem, tokenUri ?? emulator.tokenUrl) };
    },
    forgedKeyFile(account) {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      return keyFile(account.email, account.projectId, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), JSON.parse(account.keyFile).token_uri as string);
    },
    addInstance({ project, zone, name, status, labels = {}, stuck = false, startError }) {
      serial += 1;
      instances.set(key(project, zone, name), {
        project, zone, name, status, labels, resets: 0, deleted: false, id: String(4_000_000_000_000_000_000n + BigInt(serial)),
        created: new Date().toISOString(), stuck, startError, pending: undefined,
      });
    },
    instance(project, zone, name) {
      const found = instances.get(key(project, zone, name));
      return found && { project: found.project, zone: found.zone, name: found.name, status: found.status, labels: { ...found.labels }, resets: found.resets, deleted: found.deleted };
    },
    tokens: () => [...issued.values()],
    revokeTokens() {
      for (const token of issued.values()) token.expiresAt = 0;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return emulator;
}

interface Route {
  kind: 'list' | 'operation' | 'instance';
  /** The IAM permission the call needs (compute.instances.start), which names it in the record. */
  permission: string;
  verb: string;
  project: string;
  zone: string;
  name: string;
}

/** The call a path and method make (compute.proto's google.api.http paths); 404 for any other. */
function routeOf(method: string, path: string): Route {
  const list = /^\/compute\/v1\/projects\/([^/]+)\/aggregated\/instances$/.exec(path);
  if (list && method === 'GET') return { kind: 'list', permission: 'compute.instances.list', verb: 'list', project: decodeURIComponent(list[1]!), zone: '', name: '' };
  const op = /^\/compute\/v1\/projects\/([^/]+)\/zones\/([^/]+)\/operations\/([^/]+?)(\/wait)?$/.exec(path);
  if (op && (method === 'GET' || (method === 'POST' && op[4]))) {
    return { kind: 'operation', permission: 'compute.zoneOperations.get', verb: 'get', project: decodeURIComponent(op[1]!), zone: decodeURIComponent(op[2]!), name: decodeURIComponent(op[3]!) };
  }
  const one = /^\/compute\/v1\/projects\/([^/]+)\/zones\/([^/]+)\/instances\/([^/]+?)(?:\/(start|stop|reset))?$/.exec(path);
  const verb = one ? (one[4] ?? (method === 'DELETE' ? 'delete' : method === 'GET' ? 'get' : undefined)) : undefined;
  if (!one || !verb || (one[4] && method !== 'POST')) throw new GceError(404, 'notFound', `The requested URL ${path} was not found on this server.`);
  return { kind: 'instance', permission: `compute.instances.${verb}`, verb, project: decodeURIComponent(one[1]!), zone: decodeURIComponent(one[2]!), name: decodeURIComponent(one[3]!) };
}

/** A key file as the console's "Create key" (JSON) downloads it. */
function keyFile(email: string, projectId: string, privateKey: string, tokenUri: string): string {
  return JSON.stringify({
    type: 'service_account', project_id: projectId, private_key_id: randomBytes(20).toString('hex'), private_key: privateKey,
    client_email: email, client_id: String(100_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9))),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth', token_uri: tokenUri,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`, universe_domain: 'googleapis.com',
  }, null, 2);
}

function decodePart(part: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The list filter, as far as pitcrew and the tests use it: expressions `field = "value"`,
 * `field != "value"`, `field:*`, alone or each in parentheses, ANDed (AND may be written).
 */
export function filterOf(filter: string): (instance: EmulatedInstance) => boolean {
  const text = filter.trim();
  if (text === '') return () => true;
  const invalid = new GceError(400, 'invalid', `Invalid value for field 'filter': '${filter}'. Invalid list filter expression.`);
  const groups = text.startsWith('(') ? splitGroups(text, invalid) : [text];
  const tests = groups.map((group) => expression(group, invalid));
  return (instance) => tests.every((test) => test(instance));
}

function splitGroups(text: string, invalid: GceError): string[] {
  const groups: string[] = [];
  const pattern = /\s*\(((?:[^()"]|"(?:[^"\\]|\\.)*")*)\)\s*(?:AND\s*)?/gy;
  let match: RegExpExecArray | null;
  let end = 0;
  while ((match = pattern.exec(text)) !== null) {
    groups.push(match[1]!);
    end = pattern.lastIndex;
  }
  if (end !== text.length || groups.length === 0) throw invalid;
  return groups;
}

function expression(text: string, invalid: GceError): (instance: EmulatedInstance) => boolean {
  const match = /^\s*([a-zA-Z][\w.-]*)\s*(=|!=|:)\s*(\*|"((?:[^"\\]|\\.)*)"|[^\s"()]+)\s*$/.exec(text);
  if (!match) throw invalid;
  const [, field, operator, raw, quoted] = match as unknown as [string, string, string, string, string | undefined];
  const value = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : raw;
  if (!field.startsWith('labels.') && !['name', 'status', 'zone'].includes(field)) throw invalid;
  const read = (instance: EmulatedInstance): string | undefined =>
    field.startsWith('labels.') ? instance.labels[field.slice(7)] : field === 'name' ? instance.name : field === 'status' ? instance.status : instance.zone;
  if (operator === ':') {
    if (raw !== '*') throw invalid;
    return (instance) => read(instance) !== undefined;
  }
  return operator === '=' ? (instance) => read(instance) === value : (instance) => read(instance) !== value;
}
