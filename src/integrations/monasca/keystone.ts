import { isRecord } from '../values.js';
/**
 * The identity side of the Monasca integration (DESIGN.md §3, issue 17): a Keystone token for the
 * user's tenant, and a reader of the Monasca API that shows which alarm definitions already notify
 * pitcrew's URL.
 *
 * - Keystone v2.0, `POST {identity_url}/v2.0/tokens` {auth:{tenantName, passwordCredentials:{username,
 *   password}}} -> 200 {access:{token:{id, expires}}} (Identity API v2.0 reference,
 *   https://docs.openstack.org/api-ref/identity/v2/, "Authenticate").
 * - Keystone v3, `POST {identity_url}/v3/auth/tokens` with the password method, the user's domain and a
 *   project scope -> 201, the token in the `X-Subject-Token` header, {token:{expires_at}} in the body
 *   (https://docs.openstack.org/api-ref/identity/v3/, "Password authentication with scoped authorization").
 * - Monasca, `GET {monasca_url}/v2.0/alarm-definitions` and `GET /v2.0/notification-methods` with
 *   `X-Auth-Token`, each {links, elements}, paged by `offset`/`limit` with a `next` link
 *   (openstack/monasca-api docs/monasca-api-spec.md, "List Alarm Definitions", "List Notification Methods").
 *
 * I/O goes through the `fetch` the caller passes (the service's, under its egress policy); the
 * global one by default. Errors are MonascaApiError with a message a person can act on; they never
 * carry the password or the token.
 */

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<Response>;

export interface KeystoneV2Credentials {
  version: 'v2.0';
  /** Keystone's root, e.g. http://keystone:5000 (a trailing /v2.0 is tolerated). */
  identityUrl: string;
  tenantName: string;
  username: string;
  password: string;
}

export interface KeystoneV3Credentials {
  version: 'v3';
  /** Keystone's root, e.g. http://keystone:5000 (a trailing /v3 is tolerated). */
  identityUrl: string;
  username: string;
  password: string;
  /** The user's domain by name. Default "Default". */
  userDomainName?: string;
  /** The project (tenant) the token is scoped to. */
  projectName: string;
  /** The project's domain by name. Default "Default". */
  projectDomainName?: string;
}

export type KeystoneCredentials = KeystoneV2Credentials | KeystoneV3Credentials;

export interface KeystoneToken {
  id: string;
  /** When Keystone says the token expires (ISO 8601), when it says. */
  expiresAt: string | undefined;
}

export interface HttpOptions {
  fetch?: FetchLike;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
}

export type MonascaApiErrorKind = 'refused' | 'forbidden' | 'not_found' | 'unreachable' | 'unexpected';

/** A call to Keystone or Monasca that did not give what was asked; `message` says what to do. */
export class MonascaApiError extends Error {
  readonly kind: MonascaApiErrorKind;
  readonly status: number | undefined;

  constructor(kind: MonascaApiErrorKind, message: string, status?: number) {
    super(message);
    this.name = 'MonascaApiError';
    this.kind = kind;
    this.status = status;
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Enough for thousands of definitions at the API's default page size; a loop guard, not a quota. */
const MAX_PAGES = 100;

/** A token from Keystone for these credentials. */
export async function issueToken(credentials: KeystoneCredentials, options: HttpOptions = {}): Promise<KeystoneToken> {
  const root = apiRoot(credentials.identityUrl, /\/(v2\.0|v3)$/);
  const who = credentials.version === 'v2.0' ? `user ${credentials.username} of tenant ${credentials.tenantName}` : `user ${credentials.username} of project ${credentials.projectName}`;
  if (credentials.version === 'v2.0') {
    const url = `${root}/v2.0/tokens`;
    const body = { auth: { tenantName: credentials.tenantName, passwordCredentials: { username: credentials.username, password: credentials.password } } };
    const response = await call(options, 'Keystone', url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });
    await refuseUnlessOk(response, 'Keystone', url, who);
    const json = await readJson(response, 'Keystone', url);
    const token = path(json, ['access', 'token']);
    const id = path(token, ['id']);
    if (typeof id !== 'string' || id === '') throw new MonascaApiError('unexpected', `Keystone at ${url} answered without access.token.id: is identity_url a Keystone v2.0 endpoint?`);
    return { id, expiresAt: stringOrUndefined(path(token, ['expires'])) };
  }
  const url = `${root}/v3/auth/tokens`;
  const body = {
    auth: {
      identity: { methods: ['password'], password: { user: { name: credentials.username, domain: { name: credentials.userDomainName ?? 'Default' }, password: credentials.password } } },
      scope: { project: { name: credentials.projectName, domain: { name: credentials.projectDomainName ?? 'Default' } } },
    },
  };
  const response = await call(options, 'Keystone', url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });
  await refuseUnlessOk(response, 'Keystone', url, who);
  const id = response.headers.get('x-subject-token');
  const json = await readJson(response, 'Keystone', url);
  if (!id) throw new MonascaApiError('unexpected', `Keystone at ${url} answered without an X-Subject-Token header: is identity_url a Keystone v3 endpoint?`);
  return { id, expiresAt: stringOrUndefined(path(json, ['token', 'expires_at'])) };
}

export interface NotificationMethod {
  id: string;
  name: string;
  /** WEBHOOK, EMAIL, PAGERDUTY... as the API spells it (upper case). */
  type: string;
  address: string;
  period: number | undefined;
}

export interface AlarmDefinition {
  id: string;
  name: string;
  description: string | undefined;
  expression: string | undefined;
  severity: string | undefined;
  actionsEnabled: boolean;
  /** Notification method ids invoked on the transition to ALARM, OK, UNDETERMINED. */
  alarmActions: string[];
  okActions: string[];
  undeterminedActions: string[];
}

export interface DefinitionCoverage {
  definition: AlarmDefinition;
  /** Whether one of pitcrew's notification methods is among the definition's actions for each state. */
  onAlarm: boolean;
  onOk: boolean;
  onUndetermined: boolean;
}

/** Reads a tenant's Monasca API with a Keystone token. */
export class MonascaClient {
  private readonly root: string;

  constructor(private readonly options: HttpOptions & { monascaUrl: string; token: string }) {
    this.root = apiRoot(options.monascaUrl, /\/v2\.0$/);
  }

  async listNotificationMethods(): Promise<NotificationMethod[]> {
    const elements = await this.list('/v2.0/notification-methods');
    return elements.flatMap((element) => {
      const id = stringOrUndefined(element.id);
      if (id === undefined) return [];
      return [{ id, name: stringOrUndefined(element.name) ?? '', type: (stringOrUndefined(element.type) ?? '').toUpperCase(), address: stringOrUndefined(element.address) ?? '', period: typeof element.period === 'number' ? element.period : undefined }];
    });
  }

  async listAlarmDefinitions(): Promise<AlarmDefinition[]> {
    const elements = await this.list('/v2.0/alarm-definitions');
    return elements.flatMap((element) => {
      const id = stringOrUndefined(element.id);
      if (id === undefined) return [];
      return [{
        id,
        name: stringOrUndefined(element.name) ?? '',
        description: stringOrUndefined(element.description),
        expression: stringOrUndefined(element.expression),
        severity: stringOrUndefined(element.severity),
        actionsEnabled: element.actions_enabled !== false,
        alarmActions: strings(element.alarm_actions),
        okActions: strings(element.ok_actions),
        undeterminedActions: strings(element.undetermined_actions),
      }];
    });
  }

  /**
   * Which alarm definitions notify an integration (`isOurs` tells its URL among the tenant's
   * Webhook notification methods: pitcrewAddress), and on which transitions. A definition pitcrew
   * should act on needs it on ALARM (and on OK for rules on resolution).
   */
  async coverage(isOurs: (address: string) => boolean): Promise<{ methods: NotificationMethod[]; definitions: DefinitionCoverage[] }> {
    const [methods, definitions] = await Promise.all([this.listNotificationMethods(), this.listAlarmDefinitions()]);
    const ours = methods.filter((method) => method.type === 'WEBHOOK' && isOurs(method.address));
    const ids = new Set(ours.map((method) => method.id));
    const has = (actions: string[]) => actions.some((id) => ids.has(id));
    return {
      methods: ours,
      definitions: definitions.map((definition) => ({
        definition,
        onAlarm: has(definition.alarmActions),
        onOk: has(definition.okActions),
        onUndetermined: has(definition.undeterminedActions),
      })),
    };
  }

  /** Every element of a paged list, following `next` by its offset on our own base URL. */
  private async list(resource: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let offset: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      // The next link names the host the API believes it has (often an internal one): only its offset is taken.
      const url = `${this.root}${resource}${offset === undefined ? '' : `?offset=${encodeURIComponent(offset)}`}`;
      const response = await call(this.options, 'Monasca', url, { method: 'GET', headers: { accept: 'application/json', 'x-auth-token': this.options.token } });
      await refuseUnlessOk(response, 'Monasca', url);
      const json = await readJson(response, 'Monasca', url);
      const elements = path(json, ['elements']);
      if (!Array.isArray(elements)) throw new MonascaApiError('unexpected', `Monasca at ${url} answered without an elements list: is monasca_url the Monasca API (port 8070 by default)?`);
      for (const element of elements) if (isRecord(element)) out.push(element);
      const next = nextOffset(path(json, ['links']));
      if (next === undefined || next === offset || elements.length === 0) return out;
      offset = next;
    }
    throw new MonascaApiError('unexpected', `Monasca at ${this.root}${resource} kept answering with a next page after ${MAX_PAGES} pages`);
  }
}

async function call(options: HttpOptions, service: 'Keystone' | 'Monasca', url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Response> {
  const doFetch: FetchLike = options.fetch ?? ((target, request) => fetch(target, request));
  try {
    return await doFetch(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
  } catch (error) {
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    const hint = service === 'Keystone' ? 'check identity_url and that this server can reach it' : 'check monasca_url and that this server can reach it';
    throw new MonascaApiError('unreachable', `${service} at ${url} is unreachable (${cause}): ${hint}`);
  }
}

async function refuseUnlessOk(response: Response, service: 'Keystone' | 'Monasca', url: string, who?: string): Promise<void> {
  if (response.ok) return;
  // The body is drained and dropped: an error body may echo the request.
  await response.arrayBuffer().catch(() => undefined);
  const status = response.status;
  if (status === 401) {
    if (service === 'Keystone') throw new MonascaApiError('refused', `Keystone refused the credentials of ${who ?? 'this user'}: check the user name, password, tenant/project and domain`, status);
    throw new MonascaApiError('refused', 'Monasca refused the token (401): the token was refused: get a new one from Keystone and enter it on the integration', status);
  }
  if (status === 403) {
    throw new MonascaApiError('forbidden', `${service} at ${url} answered 403: the user lacks a role for this call (Monasca needs monasca-user or admin in the project)`, status);
  }
  if (status === 404) {
    const hint = service === 'Keystone' ? 'identity_url should be Keystone\'s root (e.g. http://keystone:5000), and this Keystone may not serve this API version' : 'monasca_url should be the Monasca API\'s root (e.g. http://monasca:8070)';
    throw new MonascaApiError('not_found', `${service} at ${url} answered 404: ${hint}`, status);
  }
  throw new MonascaApiError('unexpected', `${service} at ${url} answered HTTP ${status}: try again later, or check the service's logs`, status);
}

async function readJson(response: Response, service: string, url: string): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new MonascaApiError('unexpected', `${service} at ${url} answered with a body that is not JSON: check the URL`);
  }
}

/** The `offset` of a `next` link, if there is one. */
function nextOffset(links: unknown): string | undefined {
  if (!Array.isArray(links)) return undefined;
  for (const link of links) {
    if (!isRecord(link) || link.rel !== 'next' || typeof link.href !== 'string') continue;
    try {
      return new URL(link.href).searchParams.get('offset') ?? undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The service's root without trailing slashes and without a version segment the user may have pasted. */
function apiRoot(raw: string, versionSuffix: RegExp): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MonascaApiError('unexpected', `"${raw}" is not a URL: enter the service's address, e.g. http://host:5000`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MonascaApiError('unexpected', `${raw} must be an http or https URL`);
  const pathname = url.pathname.replace(/\/+$/, '').replace(versionSuffix, '');
  return `${url.origin}${pathname}`;
}

/**
 * Whether a notification method's address is this Monasca integration's URL, on whatever host
 * name the tenant reaches pitcrew by and with whichever of its API keys: the path names the
 * integration. (pitcrew cannot rebuild the URL: it keeps API keys hashed.)
 */
export function pitcrewAddress(integrationId: string): (address: string) => boolean {
  const path = new RegExp(`/api/v1/trigger/channel/monasca/[^/]+/${integrationId.replace(/[^0-9A-Za-z_-]/g, '')}/?$`, 'i');
  return (address) => {
    try {
      return path.test(new URL(address.trim()).pathname);
    } catch {
      return false;
    }
  };
}

/** The address with the API key of a pitcrew URL masked: the key is a secret, the rest is not. */
export function maskedAddress(address: string): string {
  return address.replace(/(\/trigger\/channel\/[a-z_]+\/)[^/]+\//i, '$1<api_key>/');
}

function path(value: unknown, keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

