import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { assertNever } from '../errors/assert-never.js';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { recentEventEnvs } from '../events/repository.js';
import { IdParams, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Api } from '../http/types.js';
import { requestedByOf } from '../identity/requested-by.js';
import type { EventWriter } from '../ingest/writer.js';
import { getRule } from '../rules/repository.js';
import type { Database } from '../store/schema.js';
import { submitted, unstorableEvent } from './admission.js';
import { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from './idempotency-key.js';
import { RUN_FIELDS_EVENTS, runFieldsOf, RunFieldsView } from './run-fields.js';
import { runPayload } from './run-payload.js';
import { Accepted, AlertBody, IdempotencyHeaders, idempotencyKeyReused, sendAccepted } from './webhook-reply.js';

const tags = ['rules'];

const RunBody = Type.Object({
  payload: Type.Optional(AlertBody),
  act: Type.Optional(Type.Boolean({ description: "false: a dry run, the event is recorded (outcome dry_run) and nothing runs; given, it stands for the payload's Act" })),
}, { additionalProperties: false, description: 'both optional: no body runs the rule with an empty payload' });

/** What Run now takes an event with: the webhook's writer, and the rule's recorded events. */
export interface RunNowDeps {
  db: Kysely<Database>;
  writer: EventWriter;
  clock: () => number;
  /** Where the database is, for the log line of a full disk. */
  storeLocation: string;
}

/**
 * Run now (issue 36.8): a person raises a rule through the management API, as its trigger would.
 * The event goes the webhook's way (ingest/writer.ts: rule off, Act false, flapping, action limit,
 * Idempotency-Key all decided as for a call), with source `manual` and who asked, and the reply
 * is the webhook's. Any rule can be run: webhook, alert or cron.
 */
export function registerRunNowRoutes(app: Api, deps: RunNowDeps): void {
  app.post('/rules/:id/run', {
    // No body at all is an empty one: `curl -X POST …/run` runs the rule.
    preValidation: (request, _reply, done) => {
      request.body ??= {};
      done();
    },
    schema: {
      tags, ...access('operator'),
      summary: 'Run now: raise the rule as its trigger would, with a payload of the webhook\'s form (source "manual", recorded with who asked); act false is a dry run',
      params: IdParams, headers: IdempotencyHeaders, body: RunBody,
      response: { 202: Accepted, ...problems(400, 401, 404, 422, 503) },
    },
  }, async (request, reply) => {
    const { tenantId } = request.principal;
    const rule = await getRule(deps.db, tenantId, request.params.id);
    const receivedAt = deps.clock();
    const parsed = runPayload(rule, request.body, receivedAt);
    if (!parsed.ok) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${parsed.errors[0]!.path}: ${parsed.errors[0]!.message}`, { fieldErrors: parsed.errors });
    const idempotencyKey = readIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER]);
    const result = await submitted(request, deps.storeLocation, deps.writer.submit({
      tenantId,
      rule: { by: 'rule', ruleId: rule.id },
      source: 'manual',
      requestedBy: requestedByOf(request.principal),
      // The token proved the tenant; the transaction checks the rule is still there.
      credential: { kind: 'service' },
      receivedAt,
      sourceIp: request.ip,
      payload: parsed.payload,
      idempotencyKey,
    }));
    switch (result.status) {
      case 'no_rule':
        // Deleted since it was read.
        throw notFound('rule', rule.id);
      case 'unstorable':
        throw unstorableEvent(request, result.error);
      case 'idempotency_conflict':
        throw idempotencyKeyReused(idempotencyKey, 'this rule');
      case 'replayed':
      case 'stored':
        request.log.info({ ruleId: rule.id, eventId: result.eventId, tokenId: request.principal.tokenId }, 'rule run on request (Run now)');
        return sendAccepted(reply, result, parsed.payload);
      case 'revoked_key':
      case 'key_lacks_scope':
      case 'alert':
        throw new Error(`a run on request carries no API key and names one rule; the writer answered ${result.status}`);
      default:
        return assertNever(result);
    }
  });

  app.get('/rules/:id/run-fields', {
    schema: {
      tags, ...access('viewer'),
      summary: `What a Run now form offers: the payload fields the rule reads, prefilled from its last ${RUN_FIELDS_EVENTS} events (HostName, AlarmName, MetaData keys), and the names its action reads`,
      params: IdParams, response: { 200: RunFieldsView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const { tenantId } = request.principal;
    const rule = await getRule(deps.db, tenantId, request.params.id);
    return runFieldsOf(rule, await recentEventEnvs(deps.db, tenantId, rule.id, RUN_FIELDS_EVENTS));
  });
}
