import type { FastifyRequest } from 'fastify';
import { PitcrewError } from '../errors/catalogue.js';
import { API_KEY_PATTERN } from '../identity/secrets.js';
import type { OccurrenceResult } from '../ingest/writer.js';
import type { Metrics } from '../metrics/registry.js';
import { isDiskFull, isRefusedData } from '../store/faults.js';
import { GroupCommitOverloadedError } from '../store/group-commit.js';
import type { CallerAccess, KeyDirectory } from '../tenants/directory.js';
import { missingScopeMessage, newKeyAdvice } from '../tenants/scopes.js';
import type { Tarpit } from '../tenants/tarpit.js';

/*
 * What every source that takes alerts over HTTP does the same way (the webhook, integrations):
 * the API key in the path, the tenant's address allowlist and throttle, before the body is read;
 * and the answer when the event could not be stored.
 */

declare module 'fastify' {
  interface FastifyRequest {
    caller: CallerAccess;
  }
}

export interface AdmissionDeps {
  directory: KeyDirectory;
  tarpit: Tarpit;
  metrics: Metrics;
  /** The data directory's free space: below its reserve, nothing is taken (store/disk-watch.ts). */
  disk?: { refusal(incomingBytes?: number): string | undefined } | undefined;
}

/**
 * Authenticate, filter by address and throttle before the body is even read: Fastify's onRequest
 * hook in its callback form. A key this node knows is admitted in the same turn, without the
 * promise and the turn an async hook costs every call (bench/README.md, issue 41 item 4).
 */
export function admit(deps: AdmissionDeps, request: FastifyRequest<{ Params: { apiKey: string } }>, done: (error?: Error) => void): void {
  const { apiKey } = request.params;
  if (!API_KEY_PATTERN.test(apiKey)) return done(invalidKey());
  const known = deps.directory.known(apiKey);
  if (known) return admitCaller(deps, request, known, done);
  deps.directory.resolve(apiKey).then((caller) => (caller ? admitCaller(deps, request, caller, done) : done(invalidKey()))).catch(done);
}

function admitCaller(deps: AdmissionDeps, request: FastifyRequest, caller: CallerAccess, done: (error?: Error) => void): void {
  if (!caller.scopes.includes('webhook')) return done(lacksWebhookScope(caller.keyName));
  if (!caller.allows(request.ip)) {
    return done(new PitcrewError('PITCREW_ERR_IP_NOT_ALLOWED', `calls from ${request.ip} are not on this tenant's IP allowlist; add the address with PATCH /api/v1/tenant`));
  }
  const full = deps.disk?.refusal(Number(request.headers['content-length']) || 0);
  if (full) {
    request.log.warn({ tenant: caller.tenantId }, `event refused before it was read: ${full}`);
    return done(storageFull());
  }
  const take = caller.bucket.take();
  if (!take.ok) {
    deps.metrics.throttled.inc({ tenant: caller.tenantId });
    const throttled = new PitcrewError('PITCREW_ERR_THROTTLED', `this tenant sends more events than its throttle allows; retry after ${take.retryAfterSeconds} s or raise the throttle with PATCH /api/v1/tenant`, {
      headers: { 'Retry-After': String(take.retryAfterSeconds) },
    });
    deps.tarpit.hold(caller.tenantId, take.retryAfterSeconds).then(() => done(throttled)).catch(done);
    return;
  }
  request.caller = caller;
  done();
}

/** The writer's answer, or the error to answer with when the event could not be stored. */
export function submitted<T extends OccurrenceResult | OccurrenceResult[]>(request: FastifyRequest, storeLocation: string, submission: Promise<T>): Promise<T> {
  // A reaction, not an async function: one promise and one turn of the microtask queue less per call.
  return submission.catch((error: unknown) => {
    if (isRefusedData(error)) {
      request.log.error({ err: error }, 'event not stored: the database refused its values; the other events of its batch were stored');
      throw unstorable();
    }
    if (isDiskFull(error)) {
      request.log.error({ err: error, location: storeLocation }, "event not stored: the database's disk is full. Free space there, or delete old history with PITCREW_RETENTION_DAYS (docs/configuration.md)");
    } else {
      request.log.error({ err: error }, 'event not stored');
    }
    throw storageUnavailable(error);
  });
}

/** The writer could not make this one event into rows (its batch was stored): logged, and the 500 to answer. */
export function unstorableEvent(request: FastifyRequest, error: unknown): PitcrewError {
  request.log.error({ err: error }, 'event not stored: the service could not make it into rows; the other events of its batch were stored');
  return unstorable();
}

/** Not a 503: storage is fine, and a retry of the same call would fail the same way. */
export function unstorable(): PitcrewError {
  return new PitcrewError('PITCREW_ERR_INTERNAL', "the service failed to store this event (an error of its own, now in its log), so nothing was recorded; retrying the same body will fail the same way: report it to the service's operator");
}

export function invalidKey(): PitcrewError {
  return new PitcrewError('PITCREW_ERR_INVALID_API_KEY', `the API key in the URL is unknown or revoked; ${newKeyAdvice('webhook', "put it in the monitoring tool's webhook URL in place of this one")}`);
}

export function lacksWebhookScope(keyName: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_KEY_SCOPE', missingScopeMessage('webhook', keyName));
}


function storageUnavailable(error: unknown): PitcrewError {
  if (isDiskFull(error)) return storageFull();
  const detail = error instanceof GroupCommitOverloadedError
    ? `${error.message}; nothing was recorded, retry shortly`
    : 'the event could not be stored, so nothing was recorded; retry shortly';
  return new PitcrewError('PITCREW_ERR_STORAGE_UNAVAILABLE', detail, { headers: { 'Retry-After': '1' } });
}

/** The disk under the database is full (or below its reserve): a retry helps once space is freed. */
function storageFull(): PitcrewError {
  return new PitcrewError('PITCREW_ERR_STORAGE_UNAVAILABLE', "the service's storage is full, so nothing was recorded; retry once its operator has freed disk space", { headers: { 'Retry-After': '1' } });
}
