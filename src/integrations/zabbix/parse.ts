import type { ToolAlert, ToolNotification, ToolRequest } from '../notification.js';
import { checkSecretHeader } from '../shared-secret.js';
import { invalid, isRecord } from '../values.js';

/*
 * Zabbix has no webhook body of its own: a webhook media type runs a script that builds one. pitcrew
 * ships that media type (media-type.yaml, Zabbix 6.0 export format); its script posts
 *   { pitcrew_media_type: '1', event_source, event_value, event_update_status, event_update_action,
 *     event_id, event_recovery_id, event_name, event_severity, event_nseverity, event_date, event_time,
 *     event_recovery_date, event_recovery_time, event_opdata, host_host, host_name, host_ip,
 *     trigger_id, item_lastvalue, zabbix_url, event_tags: [{ tag, value }] }
 * every value the text of a macro (Zabbix manual, "Supported macros"), "" when Zabbix could not resolve it.
 * {EVENT.VALUE} is 1 for a problem, 0 for a recovery; in a recovery notification {EVENT.ID} is still
 * the problem event's id and {EVENT.RECOVERY.ID} the recovery event's. {EVENT.SOURCE} 0 is a trigger.
 * Zabbix does not sign: the API key in the URL authenticates, and optionally the integration's secret
 * that the script sends in X-Pitcrew-Secret (parameter pitcrew_secret).
 */

const SOURCES: Record<string, string> = { '1': 'discovery', '2': 'autoregistration', '3': 'internal', '4': 'service' };
/** Zabbix leaves an unresolved macro as its own text; a body from an older or edited script may still carry one. */
const UNRESOLVED = /^\{[A-Z0-9_.$:"]+\}$/;
/** Fields that describe the event: annotations; the others are labels. */
const ANNOTATION_FIELDS = ['event_name', 'event_opdata', 'item_lastvalue', 'event_date', 'event_time', 'event_recovery_date', 'event_recovery_time', 'event_update_action', 'zabbix_url'] as const;
const LABEL_FIELDS = ['event_id', 'event_recovery_id', 'event_value', 'event_severity', 'event_nseverity', 'trigger_id', 'host_host', 'host_name', 'host_ip'] as const;

export function parseZabbix(request: ToolRequest): ToolNotification {
  const secretError = checkSecretHeader(request, 'Zabbix');
  if (secretError) return { kind: 'invalid', errors: [secretError] };
  const body = request.body;
  if (!isRecord(body) || body.pitcrew_media_type === undefined) {
    return invalid('/body', 'Expected the JSON that pitcrew\'s Zabbix media type sends: import src/integrations/zabbix/media-type.yaml (docs/integrations/zabbix.md) rather than another webhook script');
  }

  const source = field(body, 'event_source') ?? '0';
  const eventId = field(body, 'event_id');
  if (eventId === undefined || !/^\d+$/.test(eventId)) {
    return invalid('/body/event_id', `event_id must be the number of the problem event ({EVENT.ID}), got ${JSON.stringify(body.event_id ?? null)}`);
  }
  if (source !== '0') {
    return { kind: 'control', description: `Zabbix ${SOURCES[source] ?? `source ${source}`} event ${eventId}: only trigger events are acted on; use the pitcrew media type in trigger actions` };
  }
  const value = field(body, 'event_value');
  if (value !== '0' && value !== '1') {
    return invalid('/body/event_value', `event_value must be "1" (problem) or "0" (recovery) from {EVENT.VALUE}, got ${JSON.stringify(body.event_value ?? null)}`);
  }
  if (field(body, 'event_update_status') === '1') {
    const action = field(body, 'event_update_action');
    return { kind: 'control', description: `Zabbix update of problem ${eventId}${action ? ` (${action})` : ''}: recorded, not acted on` };
  }
  const state: ToolAlert['state'] = value === '1' ? 'firing' : 'resolved';

  const labels: Record<string, string> = {};
  const tags = body.event_tags;
  if (tags !== undefined && !Array.isArray(tags)) {
    return invalid('/body/event_tags', 'event_tags must be the array of {tag, value} of {EVENT.TAGSJSON}');
  }
  for (const item of tags ?? []) {
    if (!isRecord(item) || typeof item.tag !== 'string' || item.tag === '') continue;
    const tagValue = typeof item.value === 'string' ? item.value : '';
    // Zabbix allows one tag name several times (service:mysql, service:nginx): values join with ','.
    const previous = labels[item.tag];
    labels[item.tag] = previous === undefined || previous === tagValue ? tagValue : `${previous},${tagValue}`;
  }
  // The event's own fields come last: a tag cannot pass itself off as the host or the event id.
  for (const name of LABEL_FIELDS) {
    const text = field(body, name);
    if (text !== undefined) labels[name] = text;
  }
  const annotations: Record<string, string> = {};
  for (const name of ANNOTATION_FIELDS) {
    const text = field(body, name);
    if (text !== undefined) annotations[name] = text;
  }
  const zabbixUrl = field(body, 'zabbix_url');
  const triggerId = field(body, 'trigger_id');
  if (zabbixUrl !== undefined && triggerId !== undefined) {
    annotations.event_url = `${zabbixUrl.replace(/\/+$/, '')}/tr_events.php?triggerid=${encodeURIComponent(triggerId)}&eventid=${encodeURIComponent(eventId)}`;
  }

  const alert: ToolAlert = {
    alarmName: field(body, 'event_name'),
    // {HOST.HOST} is the technical name, the one agents are enrolled under more often than the
    // visible {HOST.NAME} (kept as the host_name label). For a trigger over several hosts both name
    // the host of the trigger expression's first item.
    hostName: field(body, 'host_host') ?? field(body, 'host_name'),
    severity: field(body, 'event_severity'),
    state,
    // {EVENT.ID} is the problem event in both the problem and its recovery notification, and a new
    // problem is a new event: id + state is stable across Zabbix's retries and new for a new firing.
    fingerprint: `zabbix:${eventId}:${state}`,
    // The problem event is the incident: {EVENT.ID} names it in its recovery's notification too.
    // The body's {EVENT.DATE} {EVENT.TIME} are in the Zabbix server's time zone, which it does not
    // say: the incident takes the time pitcrew received it (within seconds of the event); an
    // import reads problem.get's clock.
    incidentKey: eventId,
    at: null,
    labels,
    annotations,
    raw: body,
  };
  return { kind: 'alerts', alerts: [alert] };
}

function field(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  return text === undefined || text === '' || UNRESOLVED.test(text) ? undefined : text;
}

