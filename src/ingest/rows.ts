import { createHash } from 'node:crypto';
import { hostKey, type HostFacts, type LimitedHost, type Outcome } from '../engine/decide.js';
import type { ActionKind } from '../actions/kind.js';
import { heldReason } from '../executions/fanout.js';
import { AWAITING_RUNBOOK } from '../executions/runbook-read.js';
import { awaitsRunbook } from '../actions/runbook-record.js';
import { queuedRow } from '../executions/repository.js';
import { SERVICE_HOSTNAME } from '../executions/service-runs.js';
import type { AlarmState } from '../engine/alarm-history.js';
import { pickOf, type Rule } from '../rules/rule.js';
import { newId } from '../store/ids.js';
import type { AlertsTable, EscalationsTable, NewEventRow, NewExecutionRow } from '../store/schema.js';
import type { OpenEscalation } from './batch-history.js';
import { apiKeyOf, type Occurrence, type RuleSelector } from './occurrence.js';
import type { RaisedEvent } from './writer.js';
import { counted } from '../errors/counts.js';

/** The rows one event writes, built from its submission and its decision. */

export function eventRow(s: Occurrence, ruleId: string, decided: { outcome: Outcome; reason: string | null; hostKey: string; alarmState: AlarmState | null; stateChanged: boolean }): NewEventRow {
  return {
    id: newId(s.receivedAt),
    tenant_id: s.tenantId,
    rule_id: ruleId,
    api_key_id: apiKeyOf(s) ?? null,
    outcome: decided.outcome,
    reason: decided.reason,
    received_at: s.receivedAt,
    source: s.source,
    // Left out (null in the table) unless a person asked: the webhook's insert stays as it was.
    requested_by: s.requestedBy ? JSON.stringify(s.requestedBy) : undefined,
    source_ip: s.sourceIp,
    payload: JSON.stringify(s.payload.raw),
    env: JSON.stringify(s.payload.env),
    skipped_env: JSON.stringify(s.payload.skippedEnv),
    host_key: decided.hostKey,
    alarm_state: decided.alarmState,
    state_changed: decided.stateChanged ? 1 : 0,
    idempotency_key: s.idempotencyKey ?? null,
    // Left out unless a person acted on an incident: the webhook's insert stays as it was.
    incident_id: s.incidentId,
  };
}

/** An integration's alert as its log keeps it, with the events it raised (none: no rule matched). */
export function alertRow(s: Occurrence, selector: Extract<RuleSelector, { by: 'integration' }>, events: RaisedEvent[]): AlertsTable {
  const { alert } = selector;
  return {
    id: newId(s.receivedAt),
    tenant_id: s.tenantId,
    integration_id: selector.integrationId,
    received_at: s.receivedAt,
    source: s.source,
    state: alert.state,
    fingerprint: s.alertFingerprint ?? '',
    alarm_name: alert.alarmName ?? null,
    host_name: alert.hostName ?? null,
    severity: alert.severity ?? null,
    labels: JSON.stringify(alert.labels),
    annotations: JSON.stringify(alert.annotations),
    events: JSON.stringify(events.map(raisedOutcome)),
  };
}

/**
 * What became of a rule an alert raised, as the reply and the alert log say it. Callers add to it
 * key by key: on Node 20 a spread after a key (`{ ruleId, ...outcome }`) takes V8's slow path.
 */
export function raisedOutcome(e: RaisedEvent): { ruleId: string; eventId: string | null; outcome: string } {
  if (e.status === 'idempotency_conflict') return { ruleId: e.ruleId, eventId: null, outcome: 'conflict' };
  return { ruleId: e.ruleId, eventId: e.eventId, outcome: e.status === 'replayed' ? 'duplicate' : e.outcome };
}

/** One queued execution of the rule's action: on a host's agent, or (no host) by the service, about a host. */
export function executionRow(rule: Rule, kind: ActionKind, event: NewEventRow, target: { host: HostFacts } | { about: string | undefined }, expirySeconds: number, held: boolean): NewExecutionRow {
  const id = newId(event.received_at);
  const host = 'host' in target ? target.host : undefined;
  const hostname = 'about' in target ? target.about || SERVICE_HOSTNAME : target.host.hostname;
  const spec = kind.spec(rule, { executionId: id, eventId: event.id, env: JSON.parse(event.env) as Record<string, string>, host, hostname, expirySeconds, event: { payload: event.payload, receivedAt: event.received_at } });
  const { maxConcurrency = null, maxErrors = null } = host ? rule.target : (kind.fanout?.(rule) ?? {});
  const ids = { id, tenantId: rule.tenantId, ruleId: rule.id, eventId: event.id };
  // A git runbook is read before the run may go anywhere: held until then, fan-out turns given after.
  const awaiting = awaitsRunbook(spec);
  return {
    ...queuedRow(ids, { hostId: host?.id ?? null, hostname }, spec, event.received_at, expirySeconds),
    reason: awaiting ? AWAITING_RUNBOOK : held ? heldReason(maxConcurrency!, host ? 'host' : 'instance') : null,
    held: held || awaiting ? 1 : 0,
    awaiting_runbook: awaiting ? 1 : 0,
    fanout_max_concurrency: maxConcurrency,
    fanout_max_errors: maxErrors,
    // One host picked of the tags: the run may move to another of them if this one goes offline first.
    placement: host && rule.target.type === 'specific_tags' && pickOf(rule) === 'one' ? JSON.stringify(rule.target.tags ?? []) : null,
  };
}

export function escalationRow(rule: Rule, kind: ActionKind, limited: LimitedHost, window: OpenEscalation, eventId: string, now: number): EscalationsTable {
  const { host, used, max } = limited;
  return {
    id: newId(now),
    tenant_id: rule.tenantId,
    rule_id: rule.id,
    host_id: host.id,
    hostname: host.hostname,
    host_key: hostKey(host.hostname),
    window_start: window.windowStart,
    window_end: window.windowEnd,
    state: 'pending',
    reason: `rule "${rule.name}" reached its action limit on ${host.hostname} (${used} of ${counted(max, 'execution')} within ${rule.actionLimit!.windowSeconds} s): the alarm needs a person`,
    limited_events: 1,
    limit_max: max,
    not_done: kind.notDone(rule, host.hostname),
    first_event_id: eventId,
    last_event_id: eventId,
    created_at: now,
    updated_at: now,
  };
}

/** Tells a retry (the same body) from another call that reuses the key. */
export function fingerprintOf(s: Occurrence): string {
  return createHash('sha256').update(JSON.stringify(s.payload.raw)).digest('hex');
}
