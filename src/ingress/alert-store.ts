import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { LISTED_EXECUTION_IDS, SkippedEnv } from '../events/presenter.js';
import type { AlertPayload } from '../ingest/alert.js';
import { raisedOutcome } from '../ingest/rows.js';
import type { Credential, Occurrence } from '../ingest/occurrence.js';
import type { EventWriter, RaisedEvent } from '../ingest/writer.js';
import { observationOf, type ToolAlert } from '../integrations/notification.js';
import type { Database, IntegrationRow } from '../store/schema.js';
import { invalidKey, lacksWebhookScope, submitted, unstorable } from './admission.js';

/** What storing an integration's alerts needs: the writer, and where the store is (for its errors). */
export interface StoreDeps {
  db: Kysely<Database>;
  writer: EventWriter;
  clock: () => number;
  storeLocation: string;
}

export const RaisedView = Type.Object({
  ruleId: Type.String({ format: 'uuid' }),
  eventId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null when nothing was recorded for this rule (a conflict)' }),
  outcome: Type.String({ description: 'accepted, recorded (a state the rule does not act on), duplicate (a re-sent alert), rule_off, no_target, ...' }),
  reason: Type.Union([Type.String(), Type.Null()]),
  executionIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: LISTED_EXECUTION_IDS }),
  executionCount: Type.Integer({ minimum: 0 }),
});

/** What became of one alert: the events it raised, one per rule it matched (an item of the reply's `alerts`). */
export const AlertResult = Type.Object({
  fingerprint: Type.String(),
  state: Type.Enum(['firing', 'resolved']),
  alarmName: Type.Union([Type.String(), Type.Null()]),
  hostName: Type.Union([Type.String(), Type.Null()]),
  events: Type.Array(RaisedView, { description: 'one per rule of the integration the alert matched; none: no rule matched (nothing to do)' }),
  skippedEnv: Type.Array(SkippedEnv),
});

/**
 * The alerts of one notification, each matched against the integration's rules and recorded with
 * the events it raised, in one transaction (the tool's retry of a failed one finds nothing half stored).
 */
export async function storeAlerts(deps: StoreDeps, request: FastifyRequest, integration: IntegrationRow, payloads: Array<{ alert: ToolAlert; payload: AlertPayload }>, from: { credential: Credential; keyName?: string; source?: string }) {
  // One origin for the notification's alerts, written out: a spread with new keys per alert took ~1 µs each on Node 20.
  const origin = { credential: from.credential, source: from.source, sourceIp: request.ip, receivedAt: deps.clock() };
  const occurrences = payloads.map(({ alert, payload }) => alertOccurrence(integration, alert, payload, origin));
  const results = await submitted(request, deps.storeLocation, deps.writer.submitAll(occurrences));
  return results.map((result, i) => {
    if (result.status === 'revoked_key') throw invalidKey();
    if (result.status === 'key_lacks_scope') throw lacksWebhookScope(from.keyName ?? '');
    if (result.status !== 'alert') throw unstorable();
    return alertView(payloads[i]!.alert, result.events, payloads[i]!.payload.skippedEnv);
  });
}

/**
 * One alert of an integration as it enters the ingest: it raises the integration's rules whose
 * alert trigger matches it, and opens, counts or resolves its incident. A test alert (its own
 * `source`) is pitcrew's, not the tool's: it makes no incident.
 */
export function alertOccurrence(integration: IntegrationRow, alert: ToolAlert, payload: AlertPayload, from: { credential: Credential; source?: string; sourceIp: string | null; receivedAt: number }): Occurrence {
  return {
    alarm: from.source === undefined ? { integrationId: integration.id, observation: observationOf(alert), repeat: { by: 'notification', fingerprint: alert.fingerprint } } : undefined,
    tenantId: integration.tenant_id,
    rule: { by: 'integration', integrationId: integration.id, alert: { alarmName: alert.alarmName, severity: alert.severity, state: alert.state, labels: alert.labels, hostName: alert.hostName, hostLabel: alert.hostLabel, annotations: alert.annotations } },
    source: from.source ?? integration.type,
    sourceIp: from.sourceIp,
    receivedAt: from.receivedAt,
    credential: from.credential,
    payload,
    alertFingerprint: alert.fingerprint,
  };
}

function alertView(alert: ToolAlert, events: RaisedEvent[], skippedEnv: AlertPayload['skippedEnv']) {
  return {
    fingerprint: alert.fingerprint,
    state: alert.state,
    alarmName: alert.alarmName ?? null,
    hostName: alert.hostName ?? null,
    events: events.map((event) => {
      const executionIds = event.status === 'idempotency_conflict' ? [] : event.executionIds;
      const { ruleId, eventId, outcome } = raisedOutcome(event);
      return {
        ruleId,
        eventId,
        outcome,
        reason: event.status === 'idempotency_conflict' ? 'not recorded' : event.reason,
        executionIds: executionIds.slice(0, LISTED_EXECUTION_IDS),
        executionCount: executionIds.length,
      };
    }),
    skippedEnv,
  };
}
