import { InstancesClient, ZoneOperationsClient, type protos } from '@google-cloud/compute';
import type { GcpEndpoints } from '../../config/config.js';
import type { ProbeResult, Secret } from '../../credentials/schema.js';
import { PitcrewError } from '../../errors/catalogue.js';
import type { RunEnd } from '../../executions/service-executor.js';
import { gceInstancePath, parseGceInstance, zoneOf, type GceInstance } from './gce-names.js';
import { GcpRefusal, keySecrets, serviceAccountKey, ServiceAccountAuth, type ServiceAccountKey } from './gcp-auth.js';
import type { CloudOperation, CloudSpec } from './kind.js';
import { PROBE_TIMEOUT_MS, providerError, VERBS, waitForState, type CloudProvider } from './provider.js';

export interface GcpSettings extends GcpEndpoints {
  /** How often the operation and the instance are read while waiting (5 s; tests shorten it). */
  pollMs?: number;
}

type Operation = protos.google.cloud.compute.v1.IOperation;

/** One credential's token and the Compute clients that use it. */
interface Session {
  account: ServiceAccountKey;
  auth: ServiceAccountAuth;
  instances: InstancesClient;
  operations: ZoneOperationsClient;
}

/** Sessions kept for reuse: each holds its access token until it expires, and its connections. */
const SESSIONS = 50;
/** Longest one HTTP call of a run may take (the run's own limit is the wait plus a minute). */
const CALL_TIMEOUT_MS = 30_000;
const GONE = 'deleted';

/** What each operation asks of Compute Engine, and the statuses that mean it is done. */
const OPERATIONS: Record<CloudOperation, { call: string; targets: readonly string[] }> = {
  start: { call: 'compute.instances.start', targets: ['RUNNING'] },
  // GCE shows a stopped VM as TERMINATED (the STOPPED of the API's enum is kept for compatibility).
  stop: { call: 'compute.instances.stop', targets: ['TERMINATED', 'STOPPED'] },
  // A hard reset: the VM keeps RUNNING, so only the zone operation tells when it happened.
  reboot: { call: 'compute.instances.reset', targets: ['RUNNING'] },
  terminate: { call: 'compute.instances.delete', targets: [GONE] },
};

/** Statuses of an instance that will not be there to act on: being deleted (STOPPING then DEPROVISIONING). */
const LEAVING = new Set(['STOPPING', 'DEPROVISIONING']);

/** Where a run is at one read: the zone operation's status, then (once DONE) the instance's. */
interface Progress {
  operation: string;
  status: string | undefined;
}

/**
 * Google Compute Engine (actions/cloud/runner.ts) with a service account's JSON key, through the
 * official SDK (@google-cloud/compute's InstancesClient and ZoneOperationsClient over REST, never
 * gRPC) with an access token from the operator's token endpoint (gcp-auth.ts). One operation on
 * one instance, then its zone operation read until DONE (a failed one ends the run with GCE's
 * error), then the instance until it is in the status asked for. The reason records the status
 * before and at the end.
 */
export class GceInstances implements CloudProvider<'gcp'> {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly settings: GcpSettings) {}

  async run(spec: CloudSpec, secret: Secret<'gcp'>, credentialKey: string, signal: AbortSignal): Promise<RunEnd> {
    const { call, targets } = OPERATIONS[spec.operation];
    const session = this.session(credentialKey, secret);
    if (typeof session === 'string') return { state: 'failed', reason: `${session}: GCP was not called` };
    const instance = parseGceInstance(spec.instanceId, session.account.projectId, spec.region || undefined);
    if (!instance) return { state: 'failed', reason: `${spec.instanceId} is not a Compute Engine instance (projects/PROJECT/zones/ZONE/instances/NAME, ZONE/NAME, or NAME with the zone as the action's region): GCP was not called` };
    const path = gceInstancePath(instance);
    const started = performance.now();
    let step = 'compute.instances.get';
    try {
      const before = await this.status(session, instance, signal);
      step = call;
      const operation = await this.send(session, () => this.begin(session, spec.operation, instance), signal);
      step = 'compute.zoneOperations.get';
      const read = this.progress(session, instance, operation, call, signal);
      const final = await waitForState(read, (p) => p.status !== undefined && (targets.includes(p.status) || p.status === GONE), spec.waitSeconds, this.pollMs, signal);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const now = final.status ?? `its operation ${operation.name ?? '?'} ${final.operation}`;
      if (!final.status || !targets.includes(final.status)) return { state: 'failed', reason: `${call} on ${path}: ${before} → ${now} after ${seconds} s, not ${targets[0]} (timeoutSeconds ${spec.waitSeconds})` };
      return { state: 'succeeded', reason: `${VERBS[spec.operation]} ${path} (${call}): ${before} → ${final.status} after ${seconds} s` };
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: gcpError(step, `on ${path}`, error, secret).message };
    }
  }

  /**
   * The key's project's instances carrying every label of `tags` (GCE's labels; names and values
   * compared exactly), found by GCE itself: instances.aggregatedList with one `(labels.NAME =
   * "VALUE")` per label, which GCE ANDs (the filter's reference in compute.proto,
   * AggregatedListInstancesRequest.filter). `region`, when set, is the zone they must be in.
   * TERMINATED ones are listed (a stopped VM can be started), ones being deleted are not.
   */
  async instancesTagged(tags: Readonly<Record<string, string>>, region: string, secret: Secret<'gcp'>, credentialKey: string, signal: AbortSignal): Promise<string[]> {
    const session = this.session(credentialKey, secret);
    if (typeof session === 'string') throw unusableKey(session);
    const { account } = session;
    const filter = Object.entries(tags).map(([name, value]) => `(labels.${name} = ${quoted(value)})`).join(' ');
    const found: string[] = [];
    try {
      const scopes = session.instances.aggregatedListAsync({ project: account.projectId, filter, maxResults: 500, returnPartialSuccess: true }, { autoPaginate: false })[Symbol.asyncIterator]();
      for (;;) {
        const next = await this.send(session, () => scopes.next(), signal, false);
        if (next.done) break;
        for (const instance of next.value[1].instances ?? []) {
          const zone = zoneOf(instance.zone);
          if (!instance.name || LEAVING.has(instance.status ?? '') || (region && zone !== region)) continue;
          found.push(gceInstancePath({ project: account.projectId, zone, name: instance.name }));
        }
      }
    } catch (error) {
      if (signal.aborted) throw error;
      throw gcpError('compute.instances.aggregatedList', `in project ${account.projectId}`, error, secret);
    }
    return found.sort();
  }

  async probe(secret: Secret<'gcp'>): Promise<ProbeResult> {
    const account = serviceAccountKey(secret.serviceAccountJson);
    if (typeof account === 'string') throw unusableKey(account);
    const call = 'oauth2 token, compute.instances.aggregatedList';
    const session = this.newSession(account, PROBE_TIMEOUT_MS);
    try {
      const scopes = session.instances.aggregatedListAsync({ project: account.projectId, maxResults: 1, returnPartialSuccess: true }, { autoPaginate: false })[Symbol.asyncIterator]();
      await this.send(session, () => scopes.next(), AbortSignal.timeout(PROBE_TIMEOUT_MS), false);
      return { call, message: `GCP accepted the key of ${account.clientEmail}: it can list the instances of project ${account.projectId}` };
    } catch (error) {
      throw gcpError(call, `in project ${account.projectId}`, error, secret);
    } finally {
      closeSession(session);
    }
  }

  close(): void {
    for (const session of this.sessions.values()) closeSession(session);
    this.sessions.clear();
  }

  private get pollMs(): number {
    return this.settings.pollMs ?? 5000;
  }

  private begin(session: Session, operation: CloudOperation, instance: GceInstance): Promise<Operation> {
    const { instances } = session;
    const request = requestOf(instance);
    switch (operation) {
      case 'start':
        return instances.start(request).then(([answer]) => answer.latestResponse as Operation);
      case 'stop':
        return instances.stop(request).then(([answer]) => answer.latestResponse as Operation);
      case 'reboot':
        return instances.reset(request).then(([answer]) => answer.latestResponse as Operation);
      case 'terminate':
        return instances.delete(request).then(([answer]) => answer.latestResponse as Operation);
    }
  }

  /** A reader of the run's progress: the zone operation until DONE (its error thrown as `call`'s), then the instance's status. */
  private progress(session: Session, instance: GceInstance, operation: Operation, call: string, signal: AbortSignal): () => Promise<Progress> {
    let done = operation.status === 'DONE';
    return async () => {
      if (!done) {
        const request = { project: instance.project, zone: instance.zone, operation: operation.name ?? '' };
        const [now] = await this.send(session, () => session.operations.get(request), signal);
        if (now.status !== 'DONE') return { operation: String(now.status ?? 'PENDING'), status: undefined };
        failIfErred(now, call);
        done = true;
      }
      return { operation: 'DONE', status: await this.status(session, instance, signal) };
    };
  }

  /** The instance's status, or `deleted` once GCE no longer knows it. */
  private async status(session: Session, instance: GceInstance, signal: AbortSignal): Promise<string> {
    try {
      const [answer] = await this.send(session, () => session.instances.get(requestOf(instance)), signal);
      return String(answer.status ?? 'UNKNOWN');
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal instanceof GcpRefusal && refusal.status === 404 && !refusal.call) return GONE;
      throw error;
    }
  }

  /**
   * One SDK call, given up when the run is stopped (the SDK takes no AbortSignal: the call's HTTP
   * request ends by itself within CALL_TIMEOUT_MS). A token Compute refuses (401: revoked, the key
   * disabled) is dropped and, with `again`, the call made once more with a new one.
   */
  private async send<T>(session: Session, call: () => Promise<T>, signal: AbortSignal, again = true): Promise<T> {
    try {
      return await abortable(call(), signal);
    } catch (error) {
      const refusal = refusalOf(error);
      if (signal.aborted || !(refusal instanceof GcpRefusal) || refusal.status !== 401 || refusal.call) throw error;
      session.auth.forgetToken();
      if (!again) throw error;
      return abortable(call(), signal);
    }
  }

  /**
   * The credential's session (as last saved: a rotated key changes its key), the least recently
   * used dropped past SESSIONS; its access token is reused by every run until it expires. Why
   * the key cannot be used, when it cannot.
   */
  private session(credentialKey: string, secret: Secret<'gcp'>): Session | string {
    let session = this.sessions.get(credentialKey);
    if (session) this.sessions.delete(credentialKey);
    else {
      const account = serviceAccountKey(secret.serviceAccountJson);
      if (typeof account === 'string') return account;
      session = this.newSession(account, CALL_TIMEOUT_MS);
    }
    this.sessions.set(credentialKey, session);
    for (const [oldest, stale] of this.sessions) {
      if (this.sessions.size <= SESSIONS) break;
      this.sessions.delete(oldest);
      closeSession(stale);
    }
    return session;
  }

  private newSession(account: ServiceAccountKey, timeoutMs: number): Session {
    const auth = new ServiceAccountAuth(account, this.settings, timeoutMs);
    const compute = new URL(this.settings.computeUrl);
    // fallback: the REST transport (JSON over HTTP/1.1), which Compute's client picks by itself too; never gRPC.
    const options = { authClient: auth, apiEndpoint: compute.hostname, port: Number(compute.port) || (compute.protocol === 'https:' ? 443 : 80), protocol: compute.protocol.slice(0, -1), fallback: true, projectId: account.projectId };
    return { account, auth, instances: new InstancesClient(options), operations: new ZoneOperationsClient(options) };
  }
}

/** The request fields of instances.get/start/stop/reset/delete. */
function requestOf(instance: GceInstance): { project: string; zone: string; instance: string } {
  return { project: instance.project, zone: instance.zone, instance: instance.name };
}

/** A DONE operation with an error: GCE's first error (ZONE_RESOURCE_POOL_EXHAUSTED, …) and the HTTP status it gives it. */
function failIfErred(operation: Operation, call: string): void {
  const first = operation.error?.errors?.[0];
  if (!first) return;
  throw new GcpRefusal(operation.httpErrorStatusCode ?? 400, first.message ?? operation.httpErrorMessage ?? 'the operation failed', first.code ?? 'error', call);
}

/** A key file the service cannot use: the tenant's to replace; nothing was sent. */
function unusableKey(reason: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${reason}: store the whole key file Google gave for the service account (PATCH the credential's secret); GCP was not called`);
}

function closeSession(session: Session): void {
  void session.instances.close().catch(() => undefined);
  void session.operations.close().catch(() => undefined);
}

/** A filter's string literal: GCE label values hold no quote or backslash (rules/validate.ts), escaped all the same. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/**
 * Compute's error as a GcpRefusal: over REST the SDK rejects with the HTTP client's error, whose
 * message is Google's body `{"error": {"code": 404, "message": "The resource … was not found",
 * "errors": [{"reason": "notFound"}]}}`. Anything without an HTTP status (no answer) is left as it is.
 */
function refusalOf(error: unknown): unknown {
  if (error instanceof GcpRefusal) return error;
  const e = error as { status?: unknown; response?: { status?: unknown; data?: unknown }; message?: unknown };
  const status = typeof e.response?.status === 'number' ? e.response.status : typeof e.status === 'number' ? e.status : undefined;
  if (status === undefined) return error;
  const body = googleError(e.response?.data) ?? googleError(e.message);
  const reason = body?.errors?.[0]?.reason ?? body?.status ?? 'error';
  return new GcpRefusal(status, body?.message ?? `Compute answered HTTP ${status}`, reason);
}

interface GoogleErrorBody {
  message?: string;
  status?: string;
  errors?: Array<{ reason?: string }>;
}

function googleError(data: unknown): GoogleErrorBody | undefined {
  try {
    const parsed = (typeof data === 'string' ? JSON.parse(data) : data) as { error?: GoogleErrorBody } | null;
    return typeof parsed?.error === 'object' && parsed.error !== null ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * GCP's refusal through providerError (502), or its silence (503) naming the GCP settings; never a
 * word of the key. `call` `on` is the call being made; a refusal of the token behind it, or of the
 * operation it started, names that.
 */
function gcpError(call: string, on: string, error: unknown, secret: Secret<'gcp'>): PitcrewError {
  const secrets = keySecrets(secret.serviceAccountJson);
  const refusal = refusalOf(error);
  const other = refusal instanceof GcpRefusal ? refusal.call : undefined;
  const where = other === undefined ? `${call} ${on}` : other.startsWith('compute.') ? `${other} ${on}` : `${other} (for ${call} ${on})`;
  if (refusal instanceof GcpRefusal) return providerError('GCP', where, refusal, secrets);
  const message = secrets.reduce((text, secret) => text.split(secret).join('[REDACTED]'), String((error as Error | undefined)?.message ?? error));
  return providerError('GCP', where, new Error(message), []);
}
