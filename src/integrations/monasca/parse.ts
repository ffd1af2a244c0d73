import { createHash } from 'node:crypto';
import type { FieldError } from '../../errors/catalogue.js';
import type { ToolAlert, ToolNotification, ToolRequest } from '../notification.js';
import { invalid, isRecord, labelText } from '../values.js';

/**
 * `monasca`: an OpenStack Monasca Webhook notification (issue 17), as monasca-notification posts
 * it (openstack/monasca-notification, monasca_notification/plugins/webhook_notifier.py):
 *
 *   {alarm_id, alarm_definition_id, alarm_name, alarm_description, alarm_timestamp (seconds),
 *    state, old_state, message (the state change reason), tenant_id,
 *    metrics: [{id, name, dimensions: {hostname, service, ...}}]}
 *
 * with `content-type: application/json` (and `X-Auth-Token`, monasca-notification's own Keystone
 * token, when its keystone.auth_required is set). The body is not signed: the integration URL's
 * API key is what authenticates it.
 *
 * One notification is one alarm (one state transition), so one ToolAlert. ALARM fires, OK
 * resolves, UNDETERMINED (no data) is a control: recorded, never acted on.
 *
 * Host: the `hostname` dimension of the first metric that has one. Fingerprint: alarm_id + state
 * + alarm_timestamp: a webhook with period 60 re-sends the same transition (same timestamp) every
 * minute, and those re-sends are duplicates; the next transition has a new timestamp.
 */
export function parseMonasca(request: ToolRequest): ToolNotification {
  const body = bodyObject(request);
  if (!body) {
    return invalid('/body', 'the body is not a Monasca webhook notification: expected a JSON object with alarm_id, alarm_name, state, alarm_timestamp and metrics');
  }
  const errors: FieldError[] = [];
  for (const key of ['alarm_id', 'alarm_name', 'state'] as const) {
    if (typeof body[key] !== 'string' || body[key] === '') errors.push({ path: `/body/${key}`, message: `${key} is required in a Monasca webhook notification (a string)` });
  }
  if (typeof body.alarm_timestamp !== 'number' || !Number.isFinite(body.alarm_timestamp)) {
    errors.push({ path: '/body/alarm_timestamp', message: 'alarm_timestamp is required: the time of the state change in seconds since the epoch' });
  }
  if (!Array.isArray(body.metrics)) {
    errors.push({ path: '/body/metrics', message: 'metrics is required: the list of the alarm\'s metrics with their dimensions' });
  }
  if (errors.length > 0) return { kind: 'invalid', errors };

  const alarmName = body.alarm_name as string;
  const state = body.state as string;
  if (state === 'UNDETERMINED') {
    return { kind: 'control', description: `Monasca alarm ${alarmName} is undetermined (no data): ${labelText(body.message) ?? 'no reason given'}` };
  }
  if (state !== 'ALARM' && state !== 'OK') {
    return invalid('/body/state', `state must be ALARM, OK or UNDETERMINED, not ${state}`);
  }

  const metrics = body.metrics as unknown[];
  const labels: Record<string, string> = {};
  let hostName: string | undefined;
  const metricNames: string[] = [];
  for (const [index, metric] of metrics.entries()) {
    if (!isRecord(metric)) return invalid(`/body/metrics/${index}`, 'each metric must be an object with name and dimensions');
    if (metric.dimensions !== undefined && metric.dimensions !== null && !isRecord(metric.dimensions)) {
      return invalid(`/body/metrics/${index}/dimensions`, 'dimensions must be an object of name to value');
    }
    const name = labelText(metric.name);
    if (name !== undefined && !metricNames.includes(name)) metricNames.push(name);
    const dimensions = isRecord(metric.dimensions) ? metric.dimensions : {};
    if (hostName === undefined) hostName = labelText(dimensions.hostname);
    // An alarm's metrics usually share their match_by dimensions; where they differ, the first metric's value stands.
    for (const [key, value] of Object.entries(dimensions)) {
      const flat = labelText(value);
      if (flat !== undefined && !(key in labels)) labels[key] = flat;
    }
  }
  for (const [key, value] of [
    ['alarm_definition_id', body.alarm_definition_id],
    ['tenant_id', body.tenant_id],
    ['metric_name', metricNames.length > 0 ? metricNames.join(',') : undefined],
  ] as const) {
    const flat = labelText(value);
    if (flat !== undefined && !(key in labels)) labels[key] = flat;
  }

  const annotations: Record<string, string> = {};
  for (const key of ['alarm_description', 'message', 'old_state', 'alarm_id'] as const) {
    const flat = labelText(body[key]);
    if (flat !== undefined && flat !== '') annotations[key] = flat;
  }
  const changedAt = new Date((body.alarm_timestamp as number) * 1000);
  if (!Number.isNaN(changedAt.getTime())) annotations.alarm_timestamp = changedAt.toISOString();

  const toolAlert: ToolAlert = {
    alarmName,
    hostName,
    hostLabel: 'hostname',
    // The webhook body carries no severity: it is the alarm definition's (readable with the API client in keystone.ts).
    severity: undefined,
    state: state === 'ALARM' ? 'firing' : 'resolved',
    fingerprint: createHash('sha256').update(JSON.stringify([body.alarm_id, state, body.alarm_timestamp])).digest('hex'),
    // The alarm (one per alarm definition and match_by dimensions, so per host), and when it changed state.
    incidentKey: body.alarm_id as string,
    at: Number.isNaN(changedAt.getTime()) ? null : changedAt.getTime(),
    labels,
    annotations,
    raw: body,
  };
  return { kind: 'alerts', alerts: [toolAlert] };
}

/** The body as an object, parsed here when the caller did not (a proxy that changed the content type). */
function bodyObject(request: ToolRequest): Record<string, unknown> | undefined {
  if (request.body !== undefined) return isRecord(request.body) ? request.body : undefined;
  try {
    const parsed: unknown = JSON.parse(request.rawBody);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}




/** A Monasca integration's settings: `monascaUrl`, the Monasca API pitcrew reads alarm definitions from (optional). */
export function checkMonascaConfig(config: Record<string, unknown>, at = '/body/config'): FieldError[] {
  const { monascaUrl, ...rest } = config;
  const errors: FieldError[] = Object.keys(rest).map((name) => ({ path: `${at}/${name}`, message: `${name} is not a setting of a Monasca integration (monascaUrl is)` }));
  if (monascaUrl === undefined) return errors;
  let url: URL | undefined;
  try {
    url = typeof monascaUrl === 'string' ? new URL(monascaUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    errors.push({ path: `${at}/monascaUrl`, message: 'monascaUrl must be the http or https URL of the Monasca API, e.g. http://monasca:8070' });
  }
  return errors;
}
