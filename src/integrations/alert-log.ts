import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { matchesAlert, type AlertFacts, type AlertTrigger } from '../engine/alert-match.js';
import type { PageRequest } from '../store/pagination.js';
import type { AlertRow, Database } from '../store/schema.js';
import { ruleHostOf } from './rule-host.js';

/**
 * An integration's alert log: every alert it took, with what each did (the events it raised,
 * one per matching rule; none when no rule matched). Written by the ingest transaction
 * (ingest/rows.ts alertRow); read by the integration's page and the rule wizard's preview.
 */

const Text = Type.Union([Type.String(), Type.Null()]);
const Texts = Type.Record(Type.String(), Type.String());

export const AlertView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  receivedAt: Type.String({ format: 'date-time' }),
  source: Type.String({ description: 'the integration type, or "test" for a test alert sent from pitcrew' }),
  state: Type.Enum(['firing', 'resolved']),
  fingerprint: Type.String({ description: 'identifies the alert across notifications: a re-sent one is a duplicate' }),
  alarmName: Text,
  hostName: Type.Union([Type.String(), Type.Null()], { description: 'the host the tool named (a rule may read another label: trigger.hostLabel)' }),
  severity: Text,
  labels: Texts,
  annotations: Texts,
  events: Type.Array(Type.Object({
    ruleId: Type.String({ format: 'uuid' }),
    eventId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    outcome: Type.String({ description: 'the event outcome: accepted, recorded, duplicate, rule_off, no_target, dry_run, ...' }),
  }), { description: 'what the alert did: one event per rule it matched; empty when it matched none' }),
});
export type AlertView = Static<typeof AlertView>;

/** An alert trigger without its integration: what the wizard previews against the log (ingress/alert-preview.ts). */
export const TriggerMatch = Type.Object(
  {
    alarmName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'a glob or a /regular expression/, as in an alert trigger' })),
    severity: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20, uniqueItems: true })),
    labels: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 500 }))),
    on: Type.Optional(Type.Enum(['firing', 'resolved', 'both'])),
    hostLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type TriggerMatch = Static<typeof TriggerMatch>;

/** An integration's alerts, newest first. */
export async function listAlerts(db: Kysely<Database>, tenantId: string, integrationId: string, page: PageRequest): Promise<AlertRow[]> {
  let query = db.selectFrom('alerts').selectAll().where('integration_id', '=', integrationId).where('tenant_id', '=', tenantId);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

/** The integration's last `count` alerts, newest first. */
export function recentAlerts(db: Kysely<Database>, tenantId: string, integrationId: string, count: number): Promise<AlertRow[]> {
  return db.selectFrom('alerts').selectAll().where('integration_id', '=', integrationId).where('tenant_id', '=', tenantId).orderBy('id', 'desc').limit(count).execute();
}

export function presentAlert(row: AlertRow): AlertView {
  return {
    id: row.id,
    receivedAt: new Date(Number(row.received_at)).toISOString(),
    source: row.source,
    state: row.state as AlertView['state'],
    fingerprint: row.fingerprint,
    alarmName: row.alarm_name,
    hostName: row.host_name,
    severity: row.severity,
    labels: JSON.parse(row.labels) as Record<string, string>,
    annotations: JSON.parse(row.annotations) as Record<string, string>,
    events: JSON.parse(row.events) as AlertView['events'],
  };
}

/** Which of these alerts a trigger would have matched, and the host each names for it: pure. */
export function previewTrigger(alerts: AlertView[], match: TriggerMatch, integrationId: string): { scanned: number; matched: number; items: Array<{ alert: AlertView; matches: boolean; hostName: string | null }> } {
  const trigger: AlertTrigger = { type: 'alert', integrationId, ...match };
  const items = alerts.map((alert) => {
    const facts: AlertFacts = { alarmName: alert.alarmName ?? undefined, severity: alert.severity ?? undefined, state: alert.state, labels: alert.labels, hostName: alert.hostName ?? undefined };
    const matches = matchesAlert(trigger, facts);
    return { alert, matches, hostName: matches ? ruleHostOf(trigger, facts) ?? null : null };
  });
  return { scanned: items.length, matched: items.filter((item) => item.matches).length, items };
}
