// Bodies built from Alertmanager's own definition of the webhook message:
// - github.com/prometheus/alertmanager notify/webhook/webhook.go `Message` (version "4", groupKey,
//   truncatedAlerts, embedding template.Data) and template/template.go `Data` / `Alert`
//   (commit 68fb2d5759b3a92c0bb2a1a13d4ef7ff5b06256d; notification_reason since v0.32, routeLabels since v0.34);
// - docs/configuration.md `<webhook_config>` (the JSON format the webhook receiver is sent).
// Field order follows Go's encoder: the embedded Data's fields, then version, groupKey, truncatedAlerts.
import { describe, expect, it } from 'vitest';
import { alertsOf, errorsOf } from '../../../test/support/tool-notifications.js';
import { observationOf, type ToolRequest } from '../notification.js';
import { hostFromAddress } from './alert.js';
import { checkAlertmanagerConfig, parseAlertmanager } from './parse.js';

interface AmAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

function amAlert(overrides: Partial<AmAlert> = {}): AmAlert {
  return {
    status: 'firing',
    labels: { alertname: 'NodeFilesystemAlmostFull', instance: 'web-1:9100', job: 'node', mountpoint: '/var', severity: 'critical' },
    annotations: { summary: 'Filesystem /var on web-1 is 95% full', runbook_url: 'https://runbooks.example.com/disk' },
    // Prometheus sends endsAt = now + 4 evaluation intervals while the alert fires.
    startsAt: '2024-05-01T10:00:00.123456789+02:00',
    endsAt: '2024-05-01T08:04:00Z',
    generatorURL: 'http://prometheus:9090/graph?g0.expr=node_filesystem_avail_bytes&g0.tab=1',
    fingerprint: '4f8c8e2a9b0d1c37',
    ...overrides,
  };
}

function amBody(alerts: AmAlert[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const firing = alerts.some((a) => a.status === 'firing');
  return {
    receiver: 'pitcrew',
    status: firing ? 'firing' : 'resolved',
    alerts,
    groupLabels: { alertname: 'NodeFilesystemAlmostFull' },
    commonLabels: { alertname: 'NodeFilesystemAlmostFull', job: 'node' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    version: '4',
    groupKey: '{}:{alertname="NodeFilesystemAlmostFull"}',
    truncatedAlerts: 0,
    ...extra,
  };
}

function request(body: unknown, config: Record<string, unknown> = {}): ToolRequest {
  return { rawBody: JSON.stringify(body), body, headers: { 'content-type': 'application/json' }, config, secret: undefined, now: Date.parse('2024-05-01T08:05:00Z') };
}

describe('parseAlertmanager', () => {
  it('reads a firing alert: name, host without port, severity, labels, annotations, raw with the group', () => {
    const alert = amAlert();
    const [read] = alertsOf(parseAlertmanager(request(amBody([alert]))));
    expect(read).toEqual({
      alarmName: 'NodeFilesystemAlmostFull',
      hostName: 'web-1',
      hostLabel: 'instance',
      severity: 'critical',
      state: 'firing',
      fingerprint: '4f8c8e2a9b0d1c37@2024-05-01T08:00:00.123Z:firing',
      incidentKey: '4f8c8e2a9b0d1c37',
      at: Date.parse('2024-05-01T08:00:00.123Z'),
      labels: alert.labels,
      annotations: alert.annotations,
      raw: { ...alert, receiver: 'pitcrew', groupKey: '{}:{alertname="NodeFilesystemAlmostFull"}', externalURL: 'http://alertmanager:9093' },
    });
  });

  it('makes each alert of a group its own, with its own status (not the group\'s)', () => {
    const body = amBody([
      amAlert(),
      amAlert({ status: 'resolved', fingerprint: 'aa01', labels: { alertname: 'NodeDown', instance: 'db-2:9100' }, endsAt: '2024-05-01T08:03:00Z' }),
    ]);
    expect(body.status).toBe('firing');
    const alerts = alertsOf(parseAlertmanager(request(body)));
    expect(alerts.map((a) => [a.alarmName, a.hostName, a.state, a.severity])).toEqual([
      ['NodeFilesystemAlmostFull', 'web-1', 'firing', 'critical'],
      ['NodeDown', 'db-2', 'resolved', undefined],
    ]);
  });

  it('gives a repeat notification the same fingerprint, its resolve and a new firing different ones', () => {
    const first = alertsOf(parseAlertmanager(request(amBody([amAlert()]))))[0]!;
    // repeat_interval: the same alert sent again, a later endsAt, the same startsAt.
    const repeat = alertsOf(parseAlertmanager(request(amBody([amAlert({ endsAt: '2024-05-01T12:04:00Z' })]))))[0]!;
    // The same instant written by a replica in UTC.
    const replica = alertsOf(parseAlertmanager(request(amBody([amAlert({ startsAt: '2024-05-01T08:00:00.123Z' })]))))[0]!;
    const resolved = alertsOf(parseAlertmanager(request(amBody([amAlert({ status: 'resolved' })]))))[0]!;
    const refired = alertsOf(parseAlertmanager(request(amBody([amAlert({ startsAt: '2024-05-01T11:00:00Z' })]))))[0]!;
    expect(repeat.fingerprint).toBe(first.fingerprint);
    expect(replica.fingerprint).toBe(first.fingerprint);
    expect(resolved.fingerprint).not.toBe(first.fingerprint);
    expect(refired.fingerprint).not.toBe(first.fingerprint);
    expect(refired.fingerprint).not.toBe(resolved.fingerprint);
  });

  // Issue 38: the incident is the label set (Alertmanager's fingerprint, as GET /api/v2/alerts
  // gives it too), from startsAt to the endsAt of its resolution (notify/webhook/webhook.go sends
  // template.Alert: a firing alert's endsAt is only when it would time out, "0001-01-01…" when unset).
  it('gives the incident: the label set\'s fingerprint for key, startsAt when firing, endsAt when resolved', () => {
    const [firing, resolved, unended] = alertsOf(parseAlertmanager(request(amBody([
      amAlert(),
      amAlert({ status: 'resolved', endsAt: '2024-05-01T08:03:00Z' }),
      amAlert({ status: 'resolved', endsAt: '0001-01-01T00:00:00Z' }),
    ]))));
    expect([firing!.incidentKey, firing!.at]).toEqual(['4f8c8e2a9b0d1c37', Date.parse('2024-05-01T08:00:00.123Z')]);
    expect([resolved!.incidentKey, resolved!.at]).toEqual(['4f8c8e2a9b0d1c37', Date.parse('2024-05-01T08:03:00Z')]);
    expect(unended!.at).toBeNull();
    const refired = alertsOf(parseAlertmanager(request(amBody([amAlert({ startsAt: '2024-05-01T11:00:00Z' })]))))[0]!;
    expect(refired.incidentKey).toBe(firing!.incidentKey);
    expect(observationOf(resolved!)).toEqual({ incidentKey: '4f8c8e2a9b0d1c37', alarmName: 'NodeFilesystemAlmostFull', hostname: 'web-1', severity: 'critical', state: 'resolved', at: Date.parse('2024-05-01T08:03:00Z') });
  });

  it('reads the host from the label config.hostLabel names', () => {
    const alert = amAlert({ labels: { alertname: 'HighLoad', instance: '10.0.0.7:9100', nodename: 'web-7' } });
    expect(alertsOf(parseAlertmanager(request(amBody([alert]), { hostLabel: 'nodename' })))[0]!.hostName).toBe('web-7');
    const without = amAlert({ labels: { alertname: 'HighLoad', instance: '10.0.0.7:9100' } });
    expect(alertsOf(parseAlertmanager(request(amBody([without]), { hostLabel: 'nodename' })))[0]!.hostName).toBeUndefined();
    expect(alertsOf(parseAlertmanager(request(amBody([amAlert({ labels: { alertname: 'X' } })]))))[0]!.hostName).toBeUndefined();
  });

  it('tolerates fields of newer versions (notification_reason, routeLabels) and keeps only receiver/groupKey/externalURL of the group', () => {
    const body = amBody([amAlert()], { notification_reason: 'new_alerts', routeLabels: { team: 'ops' }, truncatedAlerts: 3 });
    const [read] = alertsOf(parseAlertmanager(request(body)));
    expect(Object.keys(read!.raw).sort()).toEqual(['annotations', 'endsAt', 'externalURL', 'fingerprint', 'generatorURL', 'groupKey', 'labels', 'receiver', 'startsAt', 'status']);
  });

  it('keeps in raw the group\'s fields first and the alert\'s own over a group field of the same name, a "__proto__" key as a plain key', () => {
    // JSON.parse makes `__proto__` an own key. Fastify's parser refuses such a body before it gets here; the parser does not rely on that.
    const alert = JSON.parse('{"__proto__": {"polluted": true}}') as AmAlert;
    Object.assign(alert, amAlert(), { receiver: 'the alert\'s own' });
    const [read] = alertsOf(parseAlertmanager(request(amBody([alert]))));
    expect(Object.keys(read!.raw)).toEqual(['receiver', 'groupKey', 'externalURL', '__proto__', ...Object.keys(amAlert())]);
    expect(read!.raw.receiver).toBe('the alert\'s own');
    expect(Object.getPrototypeOf(read!.raw)).toBe(Object.prototype);
    expect(read!.raw.__proto__).toEqual({ polluted: true });
    expect((read!.raw as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('refuses another version, naming it', () => {
    const errors = errorsOf(parseAlertmanager(request(amBody([amAlert()], { version: '3' }))));
    expect(errors).toEqual([{ path: '/body/version', message: expect.stringContaining('version "3"') }]);
  });

  it('refuses a body without version, pointing at a custom payload', () => {
    const errors = errorsOf(parseAlertmanager(request({ text: 'disk full on web-1' })));
    expect(errors[0]!.path).toBe('/body/version');
    expect(errors[0]!.message).toContain('payload');
  });

  it('refuses what is not an object, and alerts that are not an array', () => {
    expect(errorsOf(parseAlertmanager(request(undefined)))[0]!.path).toBe('/body');
    expect(errorsOf(parseAlertmanager(request([amAlert()])))[0]!.message).toContain('got an array');
    expect(errorsOf(parseAlertmanager(request(amBody([], { alerts: {} }))))).toEqual([{ path: '/body/alerts', message: expect.stringContaining('expected the array') }]);
  });

  it('names every field of every alert that is not as Alertmanager sends it', () => {
    const body = amBody([amAlert(), { ...amAlert(), status: 'pending' as 'firing', fingerprint: '', startsAt: 'yesterday' }]);
    (body.alerts as unknown[]).push({ ...amAlert(), labels: 'a=b' });
    const errors = errorsOf(parseAlertmanager(request(body)));
    expect(errors.map((e) => e.path)).toEqual(['/body/alerts/1/status', '/body/alerts/1/fingerprint', '/body/alerts/1/startsAt', '/body/alerts/2/labels']);
    expect(errors[0]!.message).toBe('alerts[1].status: expected "firing" or "resolved", got "pending"');
  });

  it('accepts an empty group as no alerts', () => {
    expect(parseAlertmanager(request(amBody([])))).toEqual({ kind: 'alerts', alerts: [] });
  });

  it('flattens non-string label values to text and drops null ones', () => {
    const alert = { ...amAlert(), labels: { alertname: 'X', count: 3, nested: { a: 1 }, gone: null } } as unknown as AmAlert;
    expect(alertsOf(parseAlertmanager(request(amBody([alert]))))[0]!.labels).toEqual({ alertname: 'X', count: '3', nested: '{"a":1}' });
  });

  it('refuses, without throwing, a label or status nested deeper than JSON.stringify can write', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const alert = { ...amAlert(), status: deep, labels: { alertname: 'X', deep } };
    const errors = errorsOf(parseAlertmanager({ ...request(amBody([])), body: amBody([alert as unknown as AmAlert]) }));
    expect(errors.map((e) => e.path)).toEqual(['/body/alerts/0/status', '/body/alerts/0/labels/deep']);
  });

  it('refuses a config whose hostLabel is not a label name', () => {
    expect(errorsOf(parseAlertmanager(request(amBody([amAlert()]), { hostLabel: 'host-name' })))[0]!.path).toBe('/config/hostLabel');
    expect(checkAlertmanagerConfig({ hostLabel: 7 })).toEqual([{ path: '/body/config/hostLabel', message: expect.stringContaining('label name') }]);
    expect(checkAlertmanagerConfig({ hostLabel: 'nodename' })).toEqual([]);
    expect(checkAlertmanagerConfig({})).toEqual([]);
  });
});

describe('hostFromAddress', () => {
  it.each([
    ['web-1:9100', 'web-1'],
    ['web-1', 'web-1'],
    ['10.0.0.7:9100', '10.0.0.7'],
    ['[::1]:9100', '::1'],
    ['[2001:db8::7]', '2001:db8::7'],
    ['fe80::1', 'fe80::1'],
    ['2001:db8::7:9100', '2001:db8::7:9100'],
    ['https://shop.example.com:8443/health', 'shop.example.com'],
    ['http://[::1]:8080/', '::1'],
    [' web-1:9100 ', 'web-1'],
  ])('%s → %s', (input, host) => {
    expect(hostFromAddress(input)).toBe(host);
  });
});
