import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { LISTED_EXECUTION_IDS, SkippedEnv } from '../events/presenter.js';
import type { AlertPayload } from '../ingest/alert.js';
import type { RaisedEvent } from '../ingest/writer.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key.js';

/*
 * The webhook's body and its 202 (DESIGN.md §3), which Run now (run-now.ts) takes and gives too:
 * a person's run of a rule reads and answers like the monitoring tool's call.
 */

/** What monitoring tools send in a text field: read as its string form; null as absent. */
const Scalar = (description?: string) => Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], description ? { description } : {});

export const AlertBody = Type.Object(
  {
    HostName: Type.Optional(Scalar('the host to act on (trigger_host); a number or boolean is read as its text, 12345 as "12345"')),
    hostname: Type.Optional(Scalar('older form of HostName')),
    AppName: Type.Optional(Scalar()),
    application: Type.Optional(Scalar('older form of AppName')),
    AlarmName: Type.Optional(Scalar()),
    Severity: Type.Optional(Scalar()),
    Source: Type.Optional(Scalar()),
    Act: Type.Optional(Type.Union([Type.Boolean(), Type.Enum(['true', 'false'])], { description: 'false (or "false") records the event without acting (dry run); default true. null or any other value is refused with 400' })),
    MetaData: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]))),
  },
  { description: 'Every field is optional; a known field sent as null is absent; every scalar pair reaches the runbook as an environment variable' },
);

/**
 * Execution ids a reply lists at most, as an event's view does. A rule over a fleet queues one
 * execution per host: the reply stays small and counts them, and the link pages through all
 * (docs/webhook.md).
 */
const REPLY_EXECUTION_IDS = LISTED_EXECUTION_IDS;

export const Accepted = Type.Object({
  eventId: Type.String({ format: 'uuid' }),
  outcome: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
  executionIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: REPLY_EXECUTION_IDS, description: `the event's executions, at most the first ${REPLY_EXECUTION_IDS}; executionsUrl lists them all` }),
  executionCount: Type.Integer({ minimum: 0, description: 'how many executions the event queued (executionIds may list fewer)' }),
  executionsUrl: Type.String({ description: "the event's executions, paged: GET with a bearer token" }),
  skippedEnv: Type.Array(SkippedEnv),
  act: Type.Boolean({ description: 'how Act was read: false, a dry run (Act: false or "false"); true when it was true, "true" or left out' }),
  replayed: Type.Boolean({ description: 'true: an earlier call with the same Idempotency-Key recorded this event; nothing new was stored or run' }),
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: `retries with the same key within 24 h get the original event back and run nothing (1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters)` })),
});

/** The 202 of an event just stored, or of the original one a retry with the same Idempotency-Key gets back. */
export function sendAccepted(reply: FastifyReply, result: Extract<RaisedEvent, { status: 'stored' | 'replayed' }>, payload: AlertPayload) {
  const replayed = result.status === 'replayed';
  reply.code(202).header('Location', `/api/v1/events/${result.eventId}`);
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.send(acceptedReply(result, result.skippedEnv, payload.act, replayed));
}

/** The same Idempotency-Key within 24 h with another body: `where` the key was used ("this trigger"). */
export function idempotencyKeyReused(key: string | undefined, where: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_IDEMPOTENCY_KEY_REUSED', `Idempotency-Key "${key}" was used on ${where} within 24 h for a different body, so nothing was recorded; use a new key for a new alarm, or resend the same body to get the original event`);
}

function acceptedReply(event: { eventId: string; outcome: string; reason: string | null; executionIds: string[] }, skippedEnv: AlertPayload['skippedEnv'], act: boolean, replayed: boolean) {
  return {
    eventId: event.eventId,
    outcome: event.outcome,
    reason: event.reason,
    executionIds: event.executionIds.slice(0, REPLY_EXECUTION_IDS),
    executionCount: event.executionIds.length,
    executionsUrl: `/api/v1/executions?eventId=${event.eventId}`,
    skippedEnv,
    act,
    replayed,
  };
}
