import { assertNever } from '../errors/assert-never.js';
import { readHostLabel } from './alertmanager/alert.js';
import { readGenericMapping } from './generic/mapping.js';
import { parseGeneric } from './generic/parse.js';
import { withValueAt } from './generic/path.js';
import type { IntegrationType } from './schema.js';
import { DEFAULT_SECRET_HEADER } from './shared-secret.js';

/** The host every sample names: the quick start's agent (README), so a rule on trigger_host finds it. */
export const SAMPLE_HOST = 'web-1';

/** Where a sample's shared secret comes from: the shell, as the API key does; the service never shows the secret. */
export const SECRET_VARIABLE = '${PITCREW_INTEGRATION_SECRET}';

/** What the tool would send: its body, and the headers beside Content-Type. */
export interface SampleDelivery {
  body: unknown;
  headers: Record<string, string>;
}

/**
 * A notification of one firing alert about web-1, in the tool's own body (each built from the tool's
 * documentation and code, cited below, and read by the tool's parser in samples.test.ts), for the
 * integration's ready curl command. None where nobody but the tool can make one that passes: SNS
 * signs every message with AWS's key, and Grafana and PagerDuty sign with the integration's secret.
 */
export function sampleDelivery(type: IntegrationType, config: Record<string, unknown>, hasSecret: boolean): SampleDelivery | undefined {
  const plain = (body: unknown): SampleDelivery => ({ body, headers: {} });
  switch (type) {
    case 'alertmanager':
      return plain(alertmanagerBody(config));
    case 'grafana':
      return hasSecret ? undefined : plain(grafanaBody(config));
    case 'monasca':
      return plain(MONASCA_BODY);
    case 'zabbix':
      return withSecretHeader(ZABBIX_BODY, config, hasSecret);
    case 'datadog':
      return withSecretHeader(DATADOG_BODY, config, hasSecret);
    case 'pagerduty':
      return hasSecret ? undefined : plain(pagerDutyBody(config));
    case 'cloudwatch_sns':
      return undefined;
    case 'generic': {
      const body = genericBody(config);
      return body === undefined ? undefined : plain(body);
    }
    default:
      return assertNever(type);
  }
}

/** Datadog and Zabbix cannot sign: with a secret, they send it in a header (shared-secret.ts). */
function withSecretHeader(body: unknown, config: Record<string, unknown>, hasSecret: boolean): SampleDelivery {
  if (!hasSecret) return { body, headers: {} };
  const configured = typeof config.secretHeader === 'string' ? config.secretHeader.trim() : '';
  return { body, headers: { [configured || DEFAULT_SECRET_HEADER]: SECRET_VARIABLE } };
}

/** The labels of the sample alert, with the host also under the label the integration reads it from (config.hostLabel). */
function alertLabels(config: Record<string, unknown>, labels: Record<string, string>): Record<string, string> {
  const hostLabel = readHostLabel(config, '/config');
  return typeof hostLabel === 'string' && hostLabel !== 'instance' ? { ...labels, [hostLabel]: SAMPLE_HOST } : labels;
}

/**
 * Alertmanager's webhook message, version 4: template.Data (receiver, status, alerts, groupLabels,
 * commonLabels, commonAnnotations, externalURL) plus version, groupKey and truncatedAlerts
 * (prometheus/alertmanager notify/webhook/webhook.go `Message`; docs/configuration.md <webhook_config>).
 */
function alertmanagerBody(config: Record<string, unknown>): Record<string, unknown> {
  const labels = alertLabels(config, { alertname: 'NodeFilesystemAlmostFull', instance: `${SAMPLE_HOST}:9100`, job: 'node', mountpoint: '/var', severity: 'critical' });
  const annotations = { summary: `Filesystem /var on ${SAMPLE_HOST} is 95% full` };
  return {
    receiver: 'pitcrew',
    status: 'firing',
    alerts: [{
      status: 'firing', labels, annotations,
      // Prometheus sends endsAt a few evaluation intervals ahead while the alert fires.
      startsAt: '2024-05-01T08:00:00.123Z', endsAt: '2024-05-01T08:04:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=node_filesystem_avail_bytes&g0.tab=1', fingerprint: '4f8c8e2a9b0d1c37',
    }],
    groupLabels: { alertname: labels.alertname }, commonLabels: labels, commonAnnotations: annotations,
    externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{alertname="NodeFilesystemAlmostFull"}', truncatedAlerts: 0,
  };
}

/**
 * Grafana alerting's webhook contact point, version 1: Alertmanager's message plus orgId, title, state
 * and message, its alerts with silenceURL, dashboardURL, panelURL and values (grafana/alerting
 * receivers/webhook/v1/webhook.go; grafana.com docs "Configure the webhook notifier", its JSON payload).
 */
function grafanaBody(config: Record<string, unknown>): Record<string, unknown> {
  const labels = alertLabels(config, { alertname: 'High memory usage', grafana_folder: 'Hosts', instance: `${SAMPLE_HOST}:9100`, severity: 'warning' });
  const annotations = { summary: `High memory usage on ${SAMPLE_HOST}`, description: `${SAMPLE_HOST} uses 93% of its memory` };
  return {
    receiver: 'pitcrew', status: 'firing', orgId: 1,
    alerts: [{
      status: 'firing', labels, annotations,
      // Go's zero time while the alert fires.
      startsAt: '2024-05-01T09:51:03.157076+02:00', endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'https://grafana.example.com/alerting/grafana/ddlx7ql2xmqyoc/view?orgId=1', fingerprint: 'c6eadffa33fcdf37',
      silenceURL: 'https://grafana.example.com/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DHigh+memory+usage&orgId=1',
      dashboardURL: '', panelURL: '', values: { B: 93.27, C: 1 },
    }],
    groupLabels: { alertname: labels.alertname, grafana_folder: 'Hosts' }, commonLabels: labels, commonAnnotations: annotations,
    externalURL: 'https://grafana.example.com/', version: '1', groupKey: '{}/{__grafana_autogenerated__="true"}:{alertname="High memory usage"}',
    truncatedAlerts: 0, title: '[FIRING:1] High memory usage Hosts', state: 'alerting', message: '**Firing**\n\nValue: B=93.27, C=1\n',
  };
}

/**
 * monasca-notification's webhook body (openstack/monasca-notification plugins/webhook_notifier.py):
 * one alarm transition, its metrics with their dimensions, alarm_timestamp in seconds.
 */
const MONASCA_BODY = {
  alarm_id: 'bc7f388d-3522-47bd-b4ae-41567090ab72', alarm_definition_id: 'f9935bcc-9641-4cbf-8224-0993a947ea83',
  alarm_name: 'high cpu', alarm_description: 'CPU above 90% for 5 minutes', alarm_timestamp: 1714550400,
  state: 'ALARM', old_state: 'OK', message: 'Thresholds were exceeded for the sub-alarms: avg(cpu.system_perc) > 90.0 with the values: [96.5]',
  tenant_id: 'b38bd1e1ee2c4e08ab5ac9b3d8ffb1c5',
  metrics: [{ id: null, name: 'cpu.system_perc', dimensions: { hostname: SAMPLE_HOST, service: 'system' } }],
};

/** What pitcrew's Zabbix media type posts (zabbix/media-type.yaml, its script's `fields`), macros resolved for a problem. */
const ZABBIX_BODY = {
  pitcrew_media_type: '1', event_source: '0', event_value: '1', event_update_status: '0', event_update_action: '',
  event_id: '12345', event_recovery_id: '', event_name: 'Free disk space is less than 10% on volume /var', event_severity: 'High',
  event_nseverity: '4', event_date: '2024.05.01', event_time: '08:00:00', event_recovery_date: '', event_recovery_time: '',
  event_opdata: 'Space used: 95%', host_host: SAMPLE_HOST, host_name: SAMPLE_HOST, host_ip: '10.0.0.11', trigger_id: '23456',
  item_lastvalue: '95 %', zabbix_url: 'https://zabbix.example.com', event_tags: [{ tag: 'scope', value: 'capacity' }],
};

/**
 * Datadog's default webhook payload (docs.datadoghq.com/integrations/webhooks: body $EVENT_MSG,
 * last_updated, event_type, title $EVENT_TITLE, date, org, id $ID) as rendered for a monitor grouped by host.
 */
const DATADOG_BODY = {
  body: `%%%\n**system.disk.in_use** over **host:${SAMPLE_HOST}** was **> 0.9** on average during the **last 5m**.\n%%%`,
  last_updated: '1714550400000', event_type: 'query_alert_monitor', title: `[Triggered on {host:${SAMPLE_HOST}}] Disk almost full`,
  date: '1714550400000', org: { id: '123456', name: 'Acme' }, id: '5764589284732918234',
};

/**
 * A PagerDuty v3 webhook, incident.triggered (PagerDuty/developer-docs docs/webhooks/01-Overview.md,
 * "Webhook Payload"). An incident names no host: the sample puts web-1 where config.hostField reads it.
 */
function pagerDutyBody(config: Record<string, unknown>): Record<string, unknown> {
  const reference = (kind: string, id: string, summary: string) => ({ html_url: `https://acme.pagerduty.com/${kind}/${id}`, id, self: `https://api.pagerduty.com/${kind}/${id}`, summary });
  const data: Record<string, unknown> = {
    id: 'PGR0VU2', type: 'incident', self: 'https://api.pagerduty.com/incidents/PGR0VU2', html_url: 'https://acme.pagerduty.com/incidents/PGR0VU2',
    number: 2, status: 'triggered', incident_key: 'd3640fbd41094207a1c11e58e46b1662', created_at: '2024-05-01T08:00:00Z',
    title: `Disk almost full on ${SAMPLE_HOST}`, urgency: 'high', priority: null,
    service: { ...reference('services', 'PF9KMXH', SAMPLE_HOST), type: 'service_reference' },
    escalation_policy: { ...reference('escalation_policies', 'PUS0KTE', 'Default'), type: 'escalation_policy_reference' },
    teams: [], assignees: [{ ...reference('users', 'PTUXL6G', 'User 123'), type: 'user_reference' }],
  };
  const hostField = typeof config.hostField === 'string' ? config.hostField.trim() : '';
  const withHost = hostField === '' ? data : (withValueAt(data, hostField.split('.'), SAMPLE_HOST) ?? data);
  return {
    event: {
      id: '5ac64822-4adc-4fda-ade0-410becf0de4f', event_type: 'incident.triggered', resource_type: 'incident', occurred_at: '2024-05-01T08:00:00.169Z',
      agent: null, client: null, data: withHost,
    },
  };
}

/**
 * A generic integration reads any JSON through its mapping: the sample is the JSON that mapping
 * reads as one firing alert about web-1, or none when the mapping cannot be filled (paths that cross).
 */
function genericBody(config: Record<string, unknown>): unknown {
  const mapping = readGenericMapping(config, '/config');
  if (Array.isArray(mapping)) return undefined;
  const fields: Array<[typeof mapping.name, unknown]> = [
    [mapping.name, 'disk_full'], [mapping.host, SAMPLE_HOST], [mapping.severity, 'critical'],
    [mapping.state, mapping.stateValues.firing[0]], [mapping.fingerprint, 'sample-1'],
  ];
  let alert: unknown = {};
  for (const [path, value] of fields) if (path !== undefined && alert !== undefined) alert = withValueAt(alert, path, value);
  const body = mapping.alerts === undefined || alert === undefined ? alert : withValueAt(undefined, mapping.alerts, [alert]);
  if (body === undefined) return undefined;
  // Checked by the parser itself: a mapping whose paths overlap may build a body it reads otherwise.
  const read = parseGeneric({ rawBody: JSON.stringify(body), body, headers: {}, config, secret: undefined, now: Date.now() });
  return read.kind === 'alerts' && read.alerts.length === 1 && read.alerts[0]!.hostName === (mapping.host ? SAMPLE_HOST : undefined) ? body : undefined;
}
