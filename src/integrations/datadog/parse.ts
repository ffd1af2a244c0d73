import type { ToolAlert, ToolNotification, ToolRequest } from '../notification.js';
import { checkSecretHeader } from '../shared-secret.js';
import { invalid, isRecord, labelText } from '../values.js';

/*
 * Datadog's Webhooks integration (docs.datadoghq.com/integrations/webhooks). The body is a JSON
 * template the user may edit; Datadog substitutes $VARIABLES into it. The default template holds
 *   { body: $EVENT_MSG, last_updated: $LAST_UPDATED, event_type: $EVENT_TYPE, title: $EVENT_TITLE,
 *     date: $DATE, org: { id: $ORG_ID, name: $ORG_NAME }, id: $ID }
 * and the common additions are alert_id ($ALERT_ID), alert_transition ($ALERT_TRANSITION),
 * alert_cycle_key ($ALERT_CYCLE_KEY), aggreg_key ($AGGREG_KEY), hostname ($HOSTNAME), tags ($TAGS),
 * alert_scope ($ALERT_SCOPE), alert_title, alert_status, alert_type, alert_priority, priority, link.
 * Datadog does not sign the body: the API key in pitcrew's URL authenticates it, and optionally a
 * secret the user adds as a custom header (shared-secret.ts).
 */

type Phase = 'triggered' | 'warn' | 'no data' | 'recovered' | 'renotify' | 'null';

/** $ALERT_TRANSITION values (docs: Recovered, Triggered/Re-Triggered, No Data/Re-No Data, Warn/Re-Warn, Null, Renotify). */
const PHASES: Record<string, Phase> = {
  triggered: 'triggered',
  warn: 'warn',
  'no data': 'no data',
  recovered: 'recovered',
  renotify: 'renotify',
  null: 'null',
};

/** The transition in brackets at the head of $EVENT_TITLE: "[P1] [Triggered on {host:web-1}] CPU high". */
const TITLE_HEAD = /^\s*(?:\[P\d\]\s*)?\[(?:Re-)?(Triggered|Recovered|Warn|No Data|Renotify)([^\]]*)\]\s*/i;
const TITLE_SCOPE = /\bon \{([^}]*)\}/;

/** Fields that describe rather than classify: they go to annotations, never to labels. */
const ANNOTATION_FIELDS = new Set(['body', 'event_msg', 'text_only_msg', 'title', 'event_title', 'alert_title', 'alert_status', 'alert_query', 'link', 'event_url', 'snapshot', 'logs_sample']);
/** Fields read into something else (tags, org) or that would only repeat the event. */
const HANDLED_FIELDS = new Set(['tags', 'event_tags', 'org']);
/** Labels reach scripts as environment variables: a credential someone put in the payload must not. */
const SECRET_NAME = /secret|token|password|passwd|api[_-]?key|authorization/i;

const ACCEPTED = 'Recovered, Triggered, Re-Triggered, Warn, Re-Warn, No Data, Re-No Data, Renotify or Null';

export function parseDatadog(request: ToolRequest): ToolNotification {
  const secretError = checkSecretHeader(request, 'Datadog');
  if (secretError) return { kind: 'invalid', errors: [secretError] };
  const body = request.body;
  if (!isRecord(body)) {
    return invalid('/body', 'Expected the JSON object of a Datadog webhook (the default payload or one with $ALERT_TRANSITION): leave "Encode as form" unchecked in the Webhooks integration tile');
  }

  const title = text(body.title) ?? text(body.event_title) ?? text(body.alert_title);
  const transition = text(body.alert_transition);
  let phase: Phase | undefined;
  let transitionPath = '/body/alert_transition';
  if (transition !== undefined) {
    phase = PHASES[transition.toLowerCase().replace(/^re-/, '')];
  } else if (title !== undefined) {
    transitionPath = '/body/title';
    const head = TITLE_HEAD.exec(title);
    phase = head ? PHASES[head[1]!.toLowerCase()] : undefined;
  }
  if (phase === undefined) {
    return transition !== undefined
      ? invalid(transitionPath, `alert_transition is "${transition}": expected ${ACCEPTED} ($ALERT_TRANSITION)`)
      : invalid(transitionPath, 'Cannot tell whether the alert fires or recovers: add "alert_transition": "$ALERT_TRANSITION" to the webhook payload (a title starting with [Triggered], [Recovered], [Warn] or [No Data] works too)');
  }
  if (phase === 'renotify' || phase === 'null') {
    return { kind: 'control', description: `Datadog ${transition ?? phase} notification${title ? ` for "${title}"` : ''}: a reminder without a new state, not acted on` };
  }
  const state = phase === 'recovered' ? 'resolved' : 'firing';

  const alertId = text(body.alert_id);
  const cycleKey = text(body.alert_cycle_key);
  const eventId = text(body.id) ?? text(body.event_id);
  let fingerprint: string;
  if (cycleKey !== undefined) {
    // One cycle runs from the trigger to the recovery: a re-notification (Re-Triggered) of the same
    // cycle is the same firing, an escalation from Warn to Triggered is a new one.
    fingerprint = `datadog:${alertId ?? ''}:${cycleKey}:${phase}`;
  } else if (eventId !== undefined) {
    // Without $ALERT_CYCLE_KEY, only the event tells notifications apart: Datadog's retries repeat
    // it, every re-notification has its own.
    fingerprint = `datadog:event:${eventId}`;
  } else {
    return invalid('/body/id', 'Neither "id" ($ID) nor "alert_cycle_key" ($ALERT_CYCLE_KEY) is in the payload: keep "id": "$ID" of the default payload so that a re-sent notification is recognised');
  }

  const tags = parseTags(body.tags ?? body.event_tags);
  const labels: Record<string, string> = {};
  for (const [name, values] of tags) labels[name] = values.join(',');
  const annotations: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (HANDLED_FIELDS.has(name) || SECRET_NAME.test(name)) continue;
    const printed = labelText(value);
    if (printed === undefined || printed === '') continue;
    (ANNOTATION_FIELDS.has(name) ? annotations : labels)[name] = printed;
  }
  if (isRecord(body.org)) {
    const orgId = labelText(body.org.id);
    const orgName = labelText(body.org.name);
    if (orgId) labels.org_id = orgId;
    if (orgName) labels.org_name = orgName;
  }

  const alarmName = title === undefined ? undefined : title.replace(TITLE_HEAD, '').trim() || title;
  const hostName = hostOf(body, title, tags);
  const alert: ToolAlert = {
    alarmName,
    hostName,
    severity: phase === 'triggered' ? 'alert' : phase,
    state,
    fingerprint,
    incidentKey: alertId !== undefined ? `${alertId}:${groupOf(body.alert_scope)}` : `name:${alarmName ?? ''}:${hostName ?? '*'}`,
    at: epochMs(body.date) ?? epochMs(body.last_updated),
    labels,
    annotations,
    raw: body,
  };
  return { kind: 'alerts', alerts: [alert] };
}

/**
 * The host, in this order: a hostname field ($HOSTNAME), the host: tag of the scope that triggered
 * ($ALERT_SCOPE, or the "on {host:...}" of the title), the host: tag of $TAGS when there is exactly one.
 */
function hostOf(body: Record<string, unknown>, title: string | undefined, tags: Map<string, string[]>): string | undefined {
  const field = text(body.hostname) ?? text(body.host_name) ?? text(body.host);
  if (field !== undefined) return field;
  const scope = parseTags(body.alert_scope).get('host');
  if (scope?.length === 1) return scope[0];
  const titleScope = title === undefined ? undefined : TITLE_SCOPE.exec(title)?.[1];
  const fromTitle = titleScope === undefined ? undefined : parseTags(titleScope).get('host');
  if (fromTitle?.length === 1) return fromTitle[0];
  const tagged = tags.get('host');
  return tagged?.length === 1 ? tagged[0] : undefined;
}

/**
 * The monitor's group the notification is about, as Datadog's monitor API names groups
 * (`state.groups`): its $ALERT_SCOPE tags in name order, joined by ','; `*` for a monitor
 * without groups (an empty scope). With $ALERT_ID it is the alarm's key (observation.ts).
 */
export function groupOf(scope: unknown): string {
  const tags = (typeof scope === 'string' ? scope.split(',') : []).map((tag) => tag.trim()).filter((tag) => tag !== '');
  return tags.length === 0 ? '*' : [...new Set(tags)].sort().join(',');
}

/** $DATE and $LAST_UPDATED: epoch milliseconds as text (seconds are read too). */
function epochMs(value: unknown): number | null {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isFinite(number) || number <= 0) return null;
  return number < 1e11 ? Math.round(number * 1000) : Math.round(number);
}

/** "$TAGS" is "key:value,key:value,bare" (also accepted as an array of such strings); values may contain ':'. */
function parseTags(value: unknown): Map<string, string[]> {
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  const tags = new Map<string, string[]>();
  for (const item of items) {
    const tag = item.trim();
    if (tag === '') continue;
    const colon = tag.indexOf(':');
    const name = colon === -1 ? tag : tag.slice(0, colon);
    const tagValue = colon === -1 ? '' : tag.slice(colon + 1);
    const values = tags.get(name) ?? [];
    if (!values.includes(tagValue)) values.push(tagValue);
    tags.set(name, values);
  }
  return tags;
}

/** A field as text; Datadog writes "" for a variable without a value, which counts as absent. */
function text(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

