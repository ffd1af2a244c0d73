/**
 * Sources the bodies are built from:
 * - What monasca-notification posts: openstack/monasca-notification
 *   monasca_notification/plugins/webhook_notifier.py (send_notification builds the body) and
 *   monasca_notification/notification.py (alarm_timestamp = the transition's timestamp in ms / 1000,
 *   message = stateChangeReason, metrics as the alarm carries them). WEBHOOK_BODY below is the body
 *   its tests/test_webhook_notification.py expects, verbatim.
 * - Metrics as monasca-thresh puts them in an alarm ({id, name, dimensions}): openstack/monasca-api
 *   docs/monasca-api-spec.md (alarm state history example).
 * - Periodic re-sends (webhook period 60) rebuild the notification from the stored alarm, so the
 *   same alarm_timestamp: monasca_notification/periodic_engine.py.
 */
import { describe, expect, it } from 'vitest';
import { alertOf, errorsOf } from '../../../test/support/tool-notifications.js';
import type { ToolRequest } from '../notification.js';
import { parseMonasca } from './parse.js';

// tests/test_webhook_notification.py, test_webhook_good_http_response: the body as posted.
const WEBHOOK_BODY = {
  metrics: [{ dimensions: { hostname: 'foo1', service: 'bar1' } }],
  alarm_id: '0',
  state: 'ALARM',
  alarm_timestamp: 1429023453,
  tenant_id: '0',
  old_state: 'OK',
  alarm_description: 'test Alarm description',
  message: 'I am alarming!',
  alarm_definition_id: 0,
  alarm_name: 'test Alarm',
};

// The same body for an alarm as monasca-thresh builds it (metric ids and names, several metrics).
const THRESH_BODY = {
  alarm_id: 'bc7f388d-3522-47bd-b4ae-41567090ab72',
  alarm_definition_id: 'f9935bcc-9641-4cbf-8224-0993a947ea83',
  alarm_name: 'high cpu and load',
  alarm_description: 'Release the hounds',
  alarm_timestamp: 1426885489,
  state: 'ALARM',
  old_state: 'OK',
  message: 'Thresholds were exceeded for the sub-alarms: avg(cpu.system_perc) > 15.0 with the values: [16.5]',
  tenant_id: 'b38bd1e1ee2c4e08ab5ac9b3d8ffb1c5',
  metrics: [
    { id: null, name: 'cpu.system_perc', dimensions: { service: 'monitoring', component: 'agent' } },
    { id: null, name: 'load.avg_1_min', dimensions: { hostname: 'devstack', service: 'system' } },
  ],
};

function request(body: unknown): ToolRequest {
  return { rawBody: JSON.stringify(body), body, headers: { 'content-type': 'application/json' }, config: {}, secret: undefined, now: Date.now() };
}

describe('a Monasca webhook notification', () => {
  it('reads the body monasca-notification posts: one alert, the hostname dimension as the host', () => {
    const alert = alertOf(parseMonasca(request(WEBHOOK_BODY)));
    expect(alert).toMatchObject({
      alarmName: 'test Alarm',
      hostName: 'foo1',
      severity: undefined,
      state: 'firing',
      incidentKey: '0',
      at: 1429023453000,
      labels: { hostname: 'foo1', service: 'bar1', alarm_definition_id: '0', tenant_id: '0' },
      annotations: { alarm_description: 'test Alarm description', message: 'I am alarming!', old_state: 'OK', alarm_id: '0', alarm_timestamp: '2015-04-14T14:57:33.000Z' },
    });
    expect(alert.raw).toEqual(WEBHOOK_BODY);
  });

  it('takes the host from the first metric that has a hostname, and flattens every dimension to text', () => {
    const alert = alertOf(parseMonasca(request(THRESH_BODY)));
    expect(alert.hostName).toBe('devstack');
    expect(alert.labels).toEqual({
      service: 'monitoring', // the first metric's value stands
      component: 'agent',
      hostname: 'devstack',
      alarm_definition_id: 'f9935bcc-9641-4cbf-8224-0993a947ea83',
      tenant_id: 'b38bd1e1ee2c4e08ab5ac9b3d8ffb1c5',
      metric_name: 'cpu.system_perc,load.avg_1_min',
    });
    const odd = alertOf(parseMonasca(request({ ...THRESH_BODY, metrics: [{ name: 'x', dimensions: { hostname: 'h', ports: [80, 443], up: true, n: 3 } }] })));
    expect(odd.labels).toMatchObject({ ports: '[80,443]', up: 'true', n: '3' });
  });

  it('leaves the host out when no metric has a hostname dimension', () => {
    const alert = alertOf(parseMonasca(request({ ...THRESH_BODY, metrics: [{ name: 'http_status', dimensions: { url: 'https://example.org' } }] })));
    expect(alert.hostName).toBeUndefined();
    expect(alertOf(parseMonasca(request({ ...THRESH_BODY, metrics: [] }))).hostName).toBeUndefined();
  });

  it('resolves on OK and records UNDETERMINED as a control, never an alert', () => {
    expect(alertOf(parseMonasca(request({ ...THRESH_BODY, state: 'OK', old_state: 'ALARM' }))).state).toBe('resolved');
    expect(parseMonasca(request({ ...THRESH_BODY, state: 'UNDETERMINED', message: 'No data was present for the sub-alarms' }))).toEqual({
      kind: 'control',
      description: 'Monasca alarm high cpu and load is undetermined (no data): No data was present for the sub-alarms',
    });
  });

  it('keeps the fingerprint for a periodic re-send of the same transition, and changes it for a new one', () => {
    const fingerprint = (body: unknown) => alertOf(parseMonasca(request(body))).fingerprint;
    const first = fingerprint(THRESH_BODY);
    expect(fingerprint({ ...THRESH_BODY })).toBe(first);
    expect(fingerprint({ ...THRESH_BODY, alarm_timestamp: THRESH_BODY.alarm_timestamp + 600 })).not.toBe(first);
    expect(fingerprint({ ...THRESH_BODY, state: 'OK' })).not.toBe(first);
    expect(fingerprint({ ...THRESH_BODY, alarm_id: 'another-alarm' })).not.toBe(first);
  });

  // Issue 38: the alarm is the incident, from its ALARM transition to its OK one, at their timestamps.
  it('gives the incident: the alarm id for key, the state change\'s time', () => {
    const fired = alertOf(parseMonasca(request(THRESH_BODY)));
    const ok = alertOf(parseMonasca(request({ ...THRESH_BODY, state: 'OK', old_state: 'ALARM', alarm_timestamp: THRESH_BODY.alarm_timestamp + 300 })));
    expect([fired.incidentKey, fired.at]).toEqual([THRESH_BODY.alarm_id, 1426885489000]);
    expect([ok.incidentKey, ok.at]).toEqual([THRESH_BODY.alarm_id, 1426885789000]);
  });

  it('reads a body the caller did not parse', () => {
    const req = { ...request(WEBHOOK_BODY), body: undefined, headers: { 'content-type': 'text/plain' } };
    expect(alertOf(parseMonasca(req)).alarmName).toBe('test Alarm');
  });
});

describe('bodies that are not Monasca notifications', () => {
  it('says which field is missing or wrong, never throws', () => {
    const cases: [unknown, string[]][] = [
      [[1, 2], ['/body']],
      ['ALARM', ['/body']],
      [{ receiver: 'x', status: 'firing', alerts: [] }, ['/body/alarm_id', '/body/alarm_name', '/body/state', '/body/alarm_timestamp', '/body/metrics']],
      [{ ...WEBHOOK_BODY, alarm_timestamp: '2015-04-14' }, ['/body/alarm_timestamp']],
      [{ ...WEBHOOK_BODY, metrics: { hostname: 'x' } }, ['/body/metrics']],
      [{ ...WEBHOOK_BODY, metrics: ['cpu'] }, ['/body/metrics/0']],
      [{ ...WEBHOOK_BODY, metrics: [{ name: 'cpu', dimensions: 'hostname=x' }] }, ['/body/metrics/0/dimensions']],
      [{ ...WEBHOOK_BODY, state: 'FIRING' }, ['/body/state']],
    ];
    for (const [body, paths] of cases) {
      const errors = errorsOf(parseMonasca(request(body)));
      expect(errors.map((e) => e.path)).toEqual(paths);
      for (const error of errors) expect(error.message).toMatch(/\w{3,}.*\w{3,}/);
    }
    expect(errorsOf(parseMonasca({ ...request(null), body: undefined, rawBody: 'not json' }))[0]!.path).toBe('/body');
  });
});
