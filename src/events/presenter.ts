import { Type, type Static } from 'typebox';
import type { EventRow } from '../store/schema.js';

export const Outcome = Type.Enum(['accepted', 'rule_off', 'dry_run', 'no_target', 'flapping', 'limited', 'duplicate']);

export const SkippedEnv = Type.Object({ name: Type.String(), reason: Type.String() });

export const EventView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ruleId: Type.String({ format: 'uuid' }),
  outcome: Outcome,
  reason: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Type.String({ format: 'date-time' }),
  sourceIp: Type.Union([Type.String(), Type.Null()]),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'the JSON object as posted' }),
  env: Type.Record(Type.String(), Type.String(), { description: 'environment variables the runbook receives' }),
  skippedEnv: Type.Array(SkippedEnv, { description: 'payload names not exported, with the reason' }),
  executionIds: Type.Array(Type.String({ format: 'uuid' })),
  idempotencyKey: Type.Union([Type.String(), Type.Null()], { description: 'the Idempotency-Key the call carried' }),
});

export type EventView = Static<typeof EventView>;

export function presentEvent(row: EventRow, executionIds: string[]): EventView {
  return {
    id: row.id,
    ruleId: row.rule_id,
    outcome: row.outcome as EventView['outcome'],
    reason: row.reason,
    receivedAt: new Date(row.received_at).toISOString(),
    sourceIp: row.source_ip,
    payload: JSON.parse(row.payload),
    env: JSON.parse(row.env),
    skippedEnv: JSON.parse(row.skipped_env),
    executionIds,
    idempotencyKey: row.idempotency_key,
  };
}
