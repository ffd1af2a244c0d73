import { Type, type Static } from 'typebox';
import type { EscalationRow } from '../store/schema.js';
import { ESCALATION_STATES } from './repository.js';

export const EscalationView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ruleId: Type.String({ format: 'uuid' }),
  hostId: Type.String({ format: 'uuid' }),
  hostname: Type.String(),
  state: Type.Enum([...ESCALATION_STATES], { description: 'pending: waiting for the notifier; notified: sent to the escalation contacts and channels (docs/notifications.md)' }),
  reason: Type.String(),
  windowStart: Type.String({ format: 'date-time', description: 'the first limited event of this window' }),
  windowEnd: Type.String({ format: 'date-time', description: 'limited events until then join this escalation' }),
  limitedEvents: Type.Integer({ description: 'events of the window that did not act because of the limit' }),
  firstEventId: Type.String({ format: 'uuid' }),
  lastEventId: Type.String({ format: 'uuid' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export type EscalationView = Static<typeof EscalationView>;

export function presentEscalation(row: EscalationRow): EscalationView {
  return {
    id: row.id,
    ruleId: row.rule_id,
    hostId: row.host_id,
    hostname: row.hostname,
    state: row.state as EscalationView['state'],
    reason: row.reason,
    windowStart: iso(row.window_start),
    windowEnd: iso(row.window_end),
    limitedEvents: row.limited_events,
    firstEventId: row.first_event_id,
    lastEventId: row.last_event_id,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
