import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FieldError } from '../../errors/catalogue.js';
import { toolTime, type ToolAlert, type ToolNotification, type ToolRequest } from '../notification.js';
import { headerValue } from '../shared-secret.js';
import { invalid, isRecord, labelText } from '../values.js';

/*
 * PagerDuty v3 webhooks (webhook subscriptions): developer.pagerduty.com "V3 Webhooks overview"
 * (PagerDuty/developer-docs docs/webhooks/01-Overview.md) and "Verifying Signatures" (04-Signatures.md).
 * One event per body: { event: { id, event_type, resource_type, occurred_at, agent, client, data } }.
 * Signed: X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the raw body>[,v1=<...>] (several during a
 * secret rotation; any match is enough). PagerDuty signs no timestamp, so there is no replay window
 * to check: a replayed body is the same event id, hence the same fingerprint, a duplicate.
 */

const SIGNATURE_HEADER = 'x-pagerduty-signature';

/** Incident events that change whether the problem is there; every other event is recorded, not acted on. */
const STATES: Record<string, ToolAlert['state']> = {
  'incident.triggered': 'firing',
  // A reopened incident is the problem back after a resolution: a new firing (its own event id).
  'incident.reopened': 'firing',
  'incident.resolved': 'resolved',
};

export function parsePagerDuty(request: ToolRequest): ToolNotification {
  if (request.secret !== undefined) {
    const error = verifySignature(request.rawBody, headerValue(request.headers, SIGNATURE_HEADER), request.secret);
    if (error) return { kind: 'invalid', errors: [error] };
  }
  const body = request.body;
  if (!isRecord(body) || !isRecord(body.event)) {
    return invalid('/body/event', 'Expected a PagerDuty v3 webhook: a JSON object with an "event" object (create a v3 webhook subscription, not a v1/v2 extension)');
  }
  const event = body.event;
  const eventType = nonEmpty(event.event_type);
  const eventId = nonEmpty(event.id);
  if (eventType === undefined) return invalid('/body/event/event_type', 'event.event_type must be a string such as "incident.triggered"');
  if (eventId === undefined) return invalid('/body/event/id', 'event.id must be the event\'s id (a string)');

  if (eventType === 'pagey.ping') {
    return { kind: 'control', description: 'PagerDuty ping (a test event of the webhook subscription): not acted on' };
  }
  const data = event.data;
  const incidentId = isRecord(data) ? nonEmpty(data.id) : undefined;
  const state = STATES[eventType];
  if (state === undefined) {
    const about = incidentId ?? (isRecord(data) && isRecord(data.incident) ? nonEmpty(data.incident.id) : undefined);
    return { kind: 'control', description: `PagerDuty ${eventType}${about ? ` for ${event.resource_type === 'service' ? 'service' : 'incident'} ${about}` : ''}: recorded, not acted on (only incident.triggered, incident.reopened and incident.resolved are)` };
  }
  if (!isRecord(data) || data.type !== 'incident' || incidentId === undefined) {
    return invalid('/body/event/data', `A ${eventType} event must carry the incident in event.data ({ "type": "incident", "id": ... })`);
  }

  const labels: Record<string, string> = { event_type: eventType, incident_id: incidentId };
  const put = (name: string, value: unknown): void => {
    const printed = labelText(value);
    if (printed !== undefined && printed !== '') labels[name] = printed;
  };
  put('incident_number', data.number);
  put('incident_key', data.incident_key);
  put('status', data.status);
  put('urgency', data.urgency);
  put('priority', summary(data.priority));
  put('service', summary(data.service));
  put('service_id', isRecord(data.service) ? data.service.id : undefined);
  put('escalation_policy', summary(data.escalation_policy));
  put('teams', list(data.teams));
  put('assignees', list(data.assignees));
  put('agent', summary(event.agent));
  if (isRecord(data.resolve_reason)) put('resolve_reason', data.resolve_reason.type);

  const annotations: Record<string, string> = {};
  for (const name of ['title', 'html_url', 'self', 'created_at'] as const) {
    const value = nonEmpty(data[name]);
    if (value !== undefined) annotations[name] = value;
  }
  const occurredAt = nonEmpty(event.occurred_at);
  if (occurredAt !== undefined) annotations.occurred_at = occurredAt;

  const alert: ToolAlert = {
    alarmName: nonEmpty(data.title),
    hostName: hostOf(data, request.config.hostField),
    severity: nonEmpty(data.urgency),
    state,
    // The event id is repeated on every delivery attempt of one event (and in X-Webhook-Id), and new
    // for the next event of the incident: a reopening is a new firing.
    fingerprint: `pagerduty:${incidentId}:${state}:${eventId}`,
    incidentKey: incidentId,
    at: toolTime(occurredAt),
    labels,
    annotations,
    raw: event,
  };
  return { kind: 'alerts', alerts: [alert] };
}

/**
 * An incident names no host of its own: its title is free text and the alert's custom details are
 * not in the webhook. So the host is only what config.hostField points at (a dot path into
 * event.data, e.g. "service.summary" when services are named after hosts); otherwise undefined,
 * and a rule picks its target another way.
 */
function hostOf(data: Record<string, unknown>, hostField: unknown): string | undefined {
  if (typeof hostField !== 'string' || hostField.trim() === '') return undefined;
  let value: unknown = data;
  for (const step of hostField.trim().split('.')) {
    if (!isRecord(value) || !Object.hasOwn(value, step)) return undefined;
    value = value[step];
  }
  return nonEmpty(value);
}

/**
 * Step 1-3 of "Verifying Signatures": split the header on ',', keep the v1= ones, compare each with
 * the hex HMAC-SHA256 of the raw body in constant time; one match is enough.
 */
function verifySignature(rawBody: string, header: string | undefined, secret: string): FieldError | undefined {
  const path = `/headers/${SIGNATURE_HEADER}`;
  if (header === undefined || header.trim() === '') {
    return { path, message: 'This integration has the subscription\'s signing secret, and the request has no X-PagerDuty-Signature header: only PagerDuty v3 webhook subscriptions are accepted' };
  }
  const expected = createHmac('sha256', secret).update(rawBody, 'utf8').digest();
  const candidates = header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('v1='))
    .map((part) => part.slice(3));
  const matches = candidates.some((hex) => /^[0-9a-f]{64}$/i.test(hex) && timingSafeEqual(Buffer.from(hex, 'hex'), expected));
  if (matches) return undefined;
  return { path, message: candidates.length === 0 ? 'X-PagerDuty-Signature holds no v1= signature' : 'No X-PagerDuty-Signature signature matches the body with this integration\'s secret: copy the webhook subscription\'s secret again (PagerDuty shows it once, when the subscription is created)' };
}

function summary(reference: unknown): unknown {
  return isRecord(reference) ? reference.summary : undefined;
}

function list(references: unknown): string | undefined {
  if (!Array.isArray(references)) return undefined;
  const names = references.map(summary).filter((name): name is string => typeof name === 'string' && name !== '');
  return names.length === 0 ? undefined : names.join(',');
}

function nonEmpty(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

