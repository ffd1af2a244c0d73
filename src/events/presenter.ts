import { Type, type Static } from 'typebox';
import type { EventExecutions } from '../executions/repository.js';
import { RequestedBy } from '../identity/requested-by.js';
import type { EventRow } from '../store/schema.js';

/** Execution ids an event's view lists at most, like the webhook's reply (ingress/webhook.ts). */
export const LISTED_EXECUTION_IDS = 100;

export const Outcome = Type.Enum(['accepted', 'rule_off', 'dry_run', 'recorded', 'no_target', 'flapping', 'limited', 'duplicate']);

export const SkippedEnv = Type.Object({ name: Type.String(), reason: Type.String() });

export const EventView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ruleId: Type.String({ format: 'uuid' }),
  outcome: Outcome,
  reason: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Type.String({ format: 'date-time' }),
  source: Type.String({ description: "what raised the event: webhook, an integration's type (alertmanager, …), test (an integration's test alert), cron (a schedule's tick), manual (Run now)" }),
  requestedBy: Type.Union([RequestedBy, Type.Null()], { description: 'who asked, for an event a person raised (source manual: Run now); null when a trigger raised it' }),
  sourceIp: Type.Union([Type.String(), Type.Null()], { description: 'the address the call came from; null when the service raised the event itself' }),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'the JSON object as posted' }),
  env: Type.Record(Type.String(), Type.String(), { description: 'environment variables the runbook receives' }),
  skippedEnv: Type.Array(SkippedEnv, { description: 'payload names not exported, with the reason' }),
  executionIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: LISTED_EXECUTION_IDS, description: `the first ${LISTED_EXECUTION_IDS} executions, oldest first; GET /api/v1/executions?eventId= lists them all` }),
  executionCount: Type.Integer({ minimum: 0, description: 'how many executions the event queued' }),
  idempotencyKey: Type.Union([Type.String(), Type.Null()], { description: 'the Idempotency-Key the call carried' }),
});

export type EventView = Static<typeof EventView>;

export function presentEvent(row: EventRow, executions: EventExecutions = { ids: [], count: 0 }): EventView {
  return {
    id: row.id,
    ruleId: row.rule_id,
    outcome: row.outcome as EventView['outcome'],
    reason: row.reason,
    receivedAt: new Date(row.received_at).toISOString(),
    source: row.source,
    requestedBy: row.requested_by === null ? null : (JSON.parse(row.requested_by) as RequestedBy),
    sourceIp: row.source_ip,
    payload: JSON.parse(row.payload),
    env: JSON.parse(row.env),
    skippedEnv: JSON.parse(row.skipped_env),
    executionIds: executions.ids,
    executionCount: executions.count,
    idempotencyKey: row.idempotency_key,
  };
}
