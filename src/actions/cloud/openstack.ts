import type { ProbeResult, Secret } from '../../credentials/schema.js';
import type { PolicyFetch } from '../../egress/fetch.js';
import type { RunEnd } from '../../executions/service-executor.js';
import type { CloudOperation, CloudSpec } from './kind.js';
import { PROBE_TIMEOUT_MS, providerError, VERBS, waitForState, type CloudProvider } from './provider.js';

export interface OpenStackSettings {
  /** Calls under the egress policy (egress/fetch.ts): the tenant names Keystone, and Keystone names Nova. */
  fetch: PolicyFetch;
  /** How often the server's state is read while waiting for it (5 s; tests shorten it). */
  pollMs?: number;
}

/** A Keystone token and the compute endpoint its catalog names, kept until shortly before it expires. */
interface Session {
  token: string;
  computeUrl: string;
  region: string;
  expiresAt: number;
}

/** A page of the detailed server list, and how many pages a tag filter reads at most (100,000 servers). */
const PAGE = 1000;
const MAX_PAGES = 100;

interface ListedServer {
  id: string;
  status?: string;
  metadata?: Record<string, string>;
  'OS-EXT-STS:task_state'?: string | null;
}

/** A server as GET /servers/{id} shows it; `gone` once Nova no longer knows it (deleted). */
interface ServerState {
  status: string;
  task: string | null;
  gone: boolean;
}

/** Nova's server actions (api-ref compute: "Servers - run an action"), and what each waits for. */
const OPERATIONS: Record<CloudOperation, { call: string; body: unknown; done: (server: ServerState) => boolean; target: string }> = {
  start: { call: 'os-start', body: { 'os-start': null }, done: (s) => s.status === 'ACTIVE' && !s.task, target: 'ACTIVE' },
  stop: { call: 'os-stop', body: { 'os-stop': null }, done: (s) => s.status === 'SHUTOFF' && !s.task, target: 'SHUTOFF' },
  reboot: { call: 'reboot', body: { reboot: { type: 'SOFT' } }, done: (s) => s.status === 'ACTIVE' && !s.task, target: 'ACTIVE' },
  terminate: { call: 'delete', body: undefined, done: (s) => s.gone || s.status === 'DELETED', target: 'deleted' },
};

/** An answer of Keystone or Nova other than the one asked for: its status and its message. */
class OpenStackRefusal extends Error {
  constructor(readonly status: number, message: string, override readonly name = 'error') {
    super(message);
  }
}

/**
 * OpenStack Nova (actions/cloud/runner.ts) with an application credential: a Keystone v3 token
 * (kept until a minute before it expires, and asked again when Nova refuses it), the compute
 * endpoint of the credential's region from the token's catalog, one server action, then the
 * server's state read until it is the one asked for. Every call goes through the egress policy:
 * the tenant chose Keystone's address, and Keystone Nova's.
 */
export class NovaServers implements CloudProvider<'openstack'> {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly settings: OpenStackSettings) {}

  async run(spec: CloudSpec, secret: Secret<'openstack'>, credentialKey: string, signal: AbortSignal): Promise<RunEnd> {
    const { call, body, done, target } = OPERATIONS[spec.operation];
    const region = spec.region || secret.region;
    const started = performance.now();
    const where = `nova ${call} on ${spec.instanceId}`;
    try {
      const state = await this.withSession(secret, credentialKey, region, signal, async (session) => {
        const before = await this.server(session, spec.instanceId, signal);
        const path = `/servers/${encodeURIComponent(spec.instanceId)}`;
        if (body === undefined) await this.nova(session, 'DELETE', path, undefined, signal);
        else await this.nova(session, 'POST', `${path}/action`, body, signal);
        const final = await waitForState(() => this.server(session, spec.instanceId, signal), done, spec.waitSeconds, this.settings.pollMs ?? 5000, signal);
        return { before, final, region: session.region };
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const change = `${state.before.status} → ${state.final.gone ? 'deleted' : state.final.status}`;
      if (!done(state.final)) return { state: 'failed', reason: `${where} in ${state.region}: ${change}${state.final.task ? ` (${state.final.task})` : ''} after ${seconds} s, not ${target} (timeoutSeconds ${spec.waitSeconds})` };
      return { state: 'succeeded', reason: `${VERBS[spec.operation]} ${spec.instanceId} in ${state.region} (${where.split(' on ')[0]}): ${change} after ${seconds} s` };
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: providerError('OpenStack', `${where}${region ? ` in ${region}` : ''}`, error, [secret.applicationCredentialSecret]).message };
    }
  }

  /**
   * Nova's server tags are bare strings; name: value pairs are a server's metadata, which Nova
   * does not filter a project's list by: the detailed list is read page by page and matched here.
   */
  async instancesTagged(tags: Readonly<Record<string, string>>, region: string, secret: Secret<'openstack'>, credentialKey: string, signal: AbortSignal): Promise<string[]> {
    const wanted = Object.entries(tags);
    const where = region || secret.region;
    try {
      return await this.withSession(secret, credentialKey, where, signal, async (session) => {
        const ids: string[] = [];
        for (let marker: string | undefined, pages = 0; pages < MAX_PAGES; pages += 1) {
          const query = new URLSearchParams({ limit: String(PAGE), ...(marker ? { marker } : {}) });
          const answer = (await this.nova(session, 'GET', `/servers/detail?${query}`, undefined, signal)) as { servers?: ListedServer[]; servers_links?: Array<{ rel?: string }> };
          const servers = answer.servers ?? [];
          for (const server of servers) {
            if (server.status !== 'DELETED' && server['OS-EXT-STS:task_state'] !== 'deleting' && wanted.every(([name, value]) => server.metadata?.[name] === value)) ids.push(server.id);
          }
          // Nova may give fewer than asked (its max_limit); a "next" link says more follow.
          if (servers.length === 0 || !answer.servers_links?.some((link) => link.rel === 'next')) break;
          marker = servers.at(-1)!.id;
        }
        return ids.sort();
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw providerError('OpenStack', `nova servers/detail${where ? ` in ${where}` : ''}`, error, [secret.applicationCredentialSecret]);
    }
  }

  async probe(secret: Secret<'openstack'>): Promise<ProbeResult> {
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    try {
      const session = await this.authenticate(secret, secret.region, signal);
      await this.nova(session, 'GET', '/servers?limit=1', undefined, signal);
      return { call: 'keystone:auth/tokens, nova:servers', message: `OpenStack accepted the application credential: compute in ${session.region} at ${session.computeUrl}` };
    } catch (error) {
      throw providerError('OpenStack', 'a token and a server list', error, [secret.applicationCredentialSecret]);
    }
  }

  close(): void {
    this.sessions.clear();
  }

  /** Runs `work` with a session; a token Nova no longer takes (401) is asked again, once. */
  private async withSession<T>(secret: Secret<'openstack'>, key: string, region: string | undefined, signal: AbortSignal, work: (session: Session) => Promise<T>): Promise<T> {
    const cacheKey = `${key} ${region ?? ''}`;
    const cached = this.sessions.get(cacheKey);
    const session = cached && cached.expiresAt > Date.now() ? cached : await this.authenticate(secret, region, signal);
    this.sessions.set(cacheKey, session);
    try {
      return await work(session);
    } catch (error) {
      if (!(error instanceof OpenStackRefusal && error.status === 401) || session !== cached) throw error;
      const fresh = await this.authenticate(secret, region, signal);
      this.sessions.set(cacheKey, fresh);
      return work(fresh);
    }
  }

  /** POST /v3/auth/tokens with the application credential (api-ref identity v3, "Authenticating with an Application Credential"). */
  private async authenticate(secret: Secret<'openstack'>, region: string | undefined, signal: AbortSignal): Promise<Session> {
    const url = `${secret.authUrl.replace(/\/+$/, '').replace(/\/v3$/, '')}/v3/auth/tokens`;
    const body = { auth: { identity: { methods: ['application_credential'], application_credential: { id: secret.applicationCredentialId, secret: secret.applicationCredentialSecret } } } };
    const response = await this.settings.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body), signal });
    const answer = await readJson(response);
    const token = response.headers.get('x-subject-token');
    if (!response.ok || !token) throw refusal('Keystone', response, answer);
    const { catalog = [], expires_at: expiresAt } = (answer as { token?: { catalog?: Catalog; expires_at?: string } }).token ?? {};
    const endpoint = computeEndpoint(catalog, region);
    if (typeof endpoint === 'string') throw new OpenStackRefusal(response.status, endpoint, 'NoComputeEndpoint');
    const expires = expiresAt ? Date.parse(expiresAt) : Date.now() + 3600_000;
    return { token, computeUrl: endpoint.url.replace(/\/+$/, ''), region: endpoint.region, expiresAt: expires - 60_000 };
  }

  private async server(session: Session, id: string, signal: AbortSignal): Promise<ServerState> {
    try {
      const answer = (await this.nova(session, 'GET', `/servers/${encodeURIComponent(id)}`, undefined, signal)) as { server?: { status?: string; 'OS-EXT-STS:task_state'?: string | null } };
      return { status: answer.server?.status ?? 'UNKNOWN', task: answer.server?.['OS-EXT-STS:task_state'] ?? null, gone: false };
    } catch (error) {
      if (error instanceof OpenStackRefusal && error.status === 404) return { status: 'DELETED', task: null, gone: true };
      throw error;
    }
  }

  private async nova(session: Session, method: string, path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const headers: Record<string, string> = { 'x-auth-token': session.token, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const response = await this.settings.fetch(`${session.computeUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal });
    const answer = await readJson(response);
    if (!response.ok) throw refusal('Nova', response, answer);
    return answer;
  }
}

type Catalog = Array<{ type?: string; endpoints?: Array<{ interface?: string; region?: string; region_id?: string; url?: string }> }>;

/** The public compute endpoint of the region (any region when none is set and there is one). */
function computeEndpoint(catalog: Catalog, region: string | undefined): { url: string; region: string } | string {
  const endpoints = catalog.filter((entry) => entry.type === 'compute').flatMap((entry) => entry.endpoints ?? []).filter((e) => e.interface === 'public' && e.url);
  const regions = [...new Set(endpoints.map((e) => e.region_id ?? e.region ?? ''))];
  const chosen = region ? endpoints.find((e) => (e.region_id ?? e.region) === region) : endpoints.length === 1 || regions.length === 1 ? endpoints[0] : undefined;
  if (chosen) return { url: chosen.url!, region: chosen.region_id ?? chosen.region ?? '' };
  if (endpoints.length === 0) return "the token's catalog has no public compute endpoint (Nova): is the application credential's project allowed to use compute?";
  return region ? `the catalog has no public compute endpoint in region ${region}; it has ${regions.join(', ')}` : `the catalog has compute in several regions (${regions.join(', ')}): set the credential's region or the action's region`;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return { message: text.slice(0, 300) };
  }
}

/** Keystone's {"error": {message}} or Nova's {"itemNotFound": {code, message}}: the first message found. */
function refusal(service: string, response: Response, answer: unknown): OpenStackRefusal {
  const values = typeof answer === 'object' && answer !== null ? Object.entries(answer as Record<string, unknown>) : [];
  for (const [name, value] of values) {
    const message = (value as { message?: unknown } | null)?.message;
    if (typeof message === 'string') return new OpenStackRefusal(response.status, `${service}: ${message}`, name);
  }
  return new OpenStackRefusal(response.status, `${service} answered HTTP ${response.status}`);
}
