// Bodies of tools without their own integration type, as the tools send them:
// - Uptime Kuma's webhook notification: github.com/louislam/uptime-kuma
//   server/notification-providers/webhook.js (commit 0c35ce1ae950bdbc72f0ec4c5b120c3296601d6d) posts
//   {heartbeat, monitor, msg}; heartbeat.status 0 = DOWN, 1 = UP (2 PENDING, 3 MAINTENANCE).
//   The heartbeat and monitor fields below are a subset of what its models' toJSON() give.
// - Prometheus Alertmanager's webhook (notify/webhook/webhook.go, docs/configuration.md
//   <webhook_config>), read through a mapping to show `alerts` and relative paths.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { alertsOf, errorsOf } from '../../../test/support/tool-notifications.js';
import type { ToolRequest } from '../notification.js';
import { checkGenericMapping } from './mapping.js';
import { canonicalJson, parseGeneric } from './parse.js';
import { parsePath, valueAt } from './path.js';

function kumaBody(status: 0 | 1, time = '2024-05-01 10:00:03.114'): Record<string, unknown> {
  return {
    heartbeat: { monitorID: 12, status, time, msg: status === 0 ? 'connect ECONNREFUSED 10.0.0.5:443' : '200 - OK', important: true, duration: 60, timezone: 'Europe/Paris', timezoneOffset: '+02:00', localDateTime: time.slice(0, 19) },
    monitor: { id: 12, name: 'shop frontend', url: 'https://shop.example.com', method: 'GET', hostname: 'web-5', port: null, type: 'http', interval: 60, active: true, tags: [{ name: 'env', value: 'prod' }] },
    msg: status === 0 ? '[shop frontend] [🔴 Down] connect ECONNREFUSED 10.0.0.5:443' : '[shop frontend] [✅ Up] 200 - OK',
  };
}

const kumaMapping = { name: 'monitor.name', host: 'monitor.hostname', state: 'heartbeat.status', stateValues: { firing: ['0'], resolved: ['1'] } };

function amBody(alerts: Record<string, unknown>[]): Record<string, unknown> {
  return { receiver: 'pitcrew', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0 };
}
const amAlert = (status: string, instance: string, fingerprint: string) => ({
  status, labels: { alertname: 'NodeDown', instance, severity: 'page' }, annotations: { summary: 'down' },
  startsAt: '2024-05-01T08:00:00Z', endsAt: '0001-01-01T00:00:00Z', generatorURL: 'http://prometheus:9090/graph', fingerprint,
});
const amMapping = { alerts: 'alerts', name: 'labels.alertname', host: 'labels.instance', severity: 'labels.severity', state: 'status', fingerprint: 'fingerprint' };

/** The same JSON with every object's keys in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reverseKeys(v)]));
}

function request(body: unknown, mapping: unknown, rawBody = JSON.stringify(body) ?? ''): ToolRequest {
  return { rawBody, body, headers: { 'content-type': 'application/json' }, config: { mapping }, secret: undefined, now: 0 };
}

describe('parseGeneric', () => {
  it('reads an Uptime Kuma notification through a mapping: name, host, state from its own words, labels from every scalar', () => {
    const body = kumaBody(0);
    const [alert] = alertsOf(parseGeneric(request(body, kumaMapping)));
    expect(alert).toMatchObject({ alarmName: 'shop frontend', hostName: 'web-5', severity: undefined, state: 'firing', annotations: {}, raw: body });
    expect(alert!.labels).toMatchObject({ heartbeat_status: '0', heartbeat_important: 'true', monitor_name: 'shop frontend', monitor_tags_0_name: 'env', monitor_tags_0_value: 'prod', msg: body.msg });
    expect(alert!.labels).not.toHaveProperty('monitor_port');
    const digest = createHash('sha256').update(canonicalJson(body)).digest('hex');
    expect(alert!.fingerprint).toBe(`sha256:${digest}:firing`);
    expect(alertsOf(parseGeneric(request(kumaBody(1), kumaMapping)))[0]!.state).toBe('resolved');
  });

  it('fingerprints the content when no path is given: the same body re-sent matches, key order aside; a resolve or another firing differs', () => {
    const first = alertsOf(parseGeneric(request(kumaBody(0), kumaMapping)))[0]!;
    const reordered = reverseKeys(kumaBody(0)) as Record<string, unknown>;
    expect(Object.keys(reordered)[0]).toBe('msg');
    expect(Object.keys(reordered.heartbeat as object)[0]).toBe('localDateTime');
    expect(alertsOf(parseGeneric(request(reordered, kumaMapping)))[0]!.fingerprint).toBe(first.fingerprint);
    expect(alertsOf(parseGeneric(request(kumaBody(1), kumaMapping)))[0]!.fingerprint).not.toBe(first.fingerprint);
    expect(alertsOf(parseGeneric(request(kumaBody(0, '2024-05-01 11:30:00.000'), kumaMapping)))[0]!.fingerprint).not.toBe(first.fingerprint);
  });

  it('makes each element of mapping.alerts an alert, with paths relative to it, and the tool id + state as fingerprint', () => {
    const body = amBody([amAlert('firing', 'web-1:9100', 'aa11'), amAlert('resolved', 'db-1:9100', 'bb22')]);
    const alerts = alertsOf(parseGeneric(request(body, amMapping)));
    expect(alerts.map((a) => [a.alarmName, a.hostName, a.severity, a.state, a.fingerprint])).toEqual([
      ['NodeDown', 'web-1:9100', 'page', 'firing', 'aa11:firing'],
      ['NodeDown', 'db-1:9100', 'page', 'resolved', 'bb22:resolved'],
    ]);
    expect(alerts[0]!.labels).toMatchObject({ status: 'firing', labels_alertname: 'NodeDown', annotations_summary: 'down', fingerprint: 'aa11' });
    expect(alerts[0]!.raw).toEqual((body.alerts as unknown[])[0]);
  });

  // Issue 38: the incident is the tool's id for the alert when the mapping names one, else the alarm on its host.
  it('gives the incident: the mapped id for key (the same for the firing and its resolve), else a hash of name and host', () => {
    const mapped = alertsOf(parseGeneric(request(amBody([amAlert('firing', 'web-1:9100', 'aa11'), amAlert('resolved', 'web-1:9100', 'aa11')]), amMapping)));
    expect(mapped.map((a) => [a.incidentKey, a.at])).toEqual([['aa11', null], ['aa11', null]]);
    const [down] = alertsOf(parseGeneric(request(kumaBody(0), kumaMapping)));
    const [up] = alertsOf(parseGeneric(request(kumaBody(1), kumaMapping)));
    expect(down!.incidentKey).toBe(`sha256:${createHash('sha256').update(canonicalJson(['shop frontend', 'web-5'])).digest('hex')}`);
    expect(up!.incidentKey).toBe(down!.incidentKey);
  });

  it('reads a body that is itself the array ("$"), and a state absent from the mapping as firing', () => {
    const body = [{ check: 'disk', node: 'web-2' }, { check: 'load', node: 'web-3' }];
    const alerts = alertsOf(parseGeneric(request(body, { alerts: '$', name: 'check', host: 'node' })));
    expect(alerts.map((a) => [a.alarmName, a.hostName, a.state])).toEqual([['disk', 'web-2', 'firing'], ['load', 'web-3', 'firing']]);
    const [scalar] = alertsOf(parseGeneric(request(['disk full on web-2'], { alerts: '$', name: 'check' })));
    expect([scalar!.alarmName, scalar!.labels, scalar!.raw]).toEqual([undefined, { value: 'disk full on web-2' }, { value: 'disk full on web-2' }]);
  });

  it('uses the default state words, without case', () => {
    const words: [string, 'firing' | 'resolved'][] = [['PROBLEM', 'firing'], ['Alarm', 'firing'], ['triggered', 'firing'], ['OK', 'resolved'], ['Recovery', 'resolved'], ['resolved', 'resolved']];
    for (const [word, state] of words) {
      expect(alertsOf(parseGeneric(request({ event: { status: word } }, { state: 'event.status' })))[0]!.state).toBe(state);
    }
  });

  it('refuses an unknown state word, listing the known ones and saying where to add it', () => {
    const errors = errorsOf(parseGeneric(request({ alerts: [{ s: 'PENDING' }] }, { alerts: 'alerts', state: 's' })));
    expect(errors).toEqual([{ path: '/body/alerts/0/s', message: expect.stringMatching(/^alerts\[0\]\.s: mapping\.state points here, expected one of "firing".*got "PENDING"; add the word to mapping\.stateValues$/) }]);
    expect(errorsOf(parseGeneric(request(kumaBody(1), { ...kumaMapping, stateValues: { firing: ['0'], resolved: ['3'] } })))[0]!.path).toBe('/body/heartbeat/status');
  });

  it('refuses a mapping.alerts that is not an array in the body, an object where text is expected, a missing fingerprint', () => {
    expect(errorsOf(parseGeneric(request({ alerts: { a: 1 } }, { alerts: 'alerts', name: 'a' })))).toEqual([{ path: '/body/alerts', message: expect.stringContaining('expected an array of alerts, got an object') }]);
    expect(errorsOf(parseGeneric(request(kumaBody(0), { name: 'monitor' })))).toEqual([{ path: '/body/monitor', message: expect.stringContaining('mapping.name points here, expected text or a number, got an object') }]);
    expect(errorsOf(parseGeneric(request(kumaBody(0), { name: 'monitor.name', fingerprint: 'heartbeat.id' })))[0]!.path).toBe('/body/heartbeat/id');
  });

  it('refuses a body that is not JSON or nests too deep, without throwing', () => {
    expect(errorsOf(parseGeneric(request(undefined, kumaMapping)))[0]!.message).toContain('application/json');
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(errorsOf(parseGeneric(request(deep, kumaMapping, '(too deep to print)')))[0]!.message).toContain('nest more than 64');
  });

  it('refuses to run with a broken mapping, naming the config field', () => {
    expect(errorsOf(parseGeneric(request(kumaBody(0), { host: 'a..b' })))).toEqual([{ path: '/config/mapping/host', message: expect.stringContaining('name is missing') }]);
  });
});

describe('checkGenericMapping', () => {
  it('accepts a usable mapping', () => {
    expect(checkGenericMapping({ mapping: kumaMapping })).toEqual([]);
    expect(checkGenericMapping({ mapping: amMapping })).toEqual([]);
    expect(checkGenericMapping({ mapping: { host: '$.data["kubernetes.io/hostname"]' } })).toEqual([]);
  });

  it('names each bad field with a fix', () => {
    const cases: [unknown, string, string][] = [
      [undefined, '/body/config/mapping', 'expected an object'],
      [{}, '/body/config/mapping', 'at least one of'],
      [{ alerts: 'alerts' }, '/body/config/mapping', 'at least one of'],
      [{ hostname: 'host', name: 'n' }, '/body/config/mapping/hostname', 'not a mapping field'],
      [{ host: 42 }, '/body/config/mapping/host', 'expected a JSON path as a string'],
      [{ host: 'a[x]' }, '/body/config/mapping/host', 'after "["'],
      [{ host: '$' }, '/body/config/mapping/host', 'whole alert'],
      [{ name: 'n', stateValues: ['ok'] }, '/body/config/mapping/stateValues', 'expected {"firing"'],
      [{ name: 'n', stateValues: { firing: [] } }, '/body/config/mapping/stateValues/firing', 'non-empty list'],
      [{ name: 'n', stateValues: { firing: [{}] } }, '/body/config/mapping/stateValues/firing', 'non-empty list'],
      [{ name: 'n', stateValues: { down: ['1'] } }, '/body/config/mapping/stateValues/down', 'only "firing" and "resolved"'],
      [{ name: 'n', stateValues: { resolved: ['OK', 'problem'] } }, '/body/config/mapping/stateValues', '"problem" cannot mean both'],
    ];
    for (const [mapping, path, text] of cases) {
      const errors = checkGenericMapping(mapping === undefined ? {} : { mapping });
      expect(errors, JSON.stringify(mapping)).toEqual([{ path, message: expect.stringContaining(text) }]);
    }
  });
});

describe('paths', () => {
  it.each([
    ['host', ['host']],
    ['data.host', ['data', 'host']],
    ['alerts[0].host', ['alerts', 0, 'host']],
    ['alerts.0.host', ['alerts', '0', 'host']],
    ['$.a[1][2]', ['a', 1, 2]],
    ['$', []],
    ['tags["kubernetes.io/hostname"]', ['tags', 'kubernetes.io/hostname']],
    ["tags['a b']", ['tags', 'a b']],
  ])('%s', (text, segments) => {
    expect(parsePath(text)).toEqual(segments);
  });

  it.each(['', '.a', 'a.', 'a..b', 'a[', 'a[-1]', 'a]b', 'a["\\q"]', '[0]x'])('refuses %j', (text) => {
    expect(typeof parsePath(text)).toBe('string');
  });

  it('finds values, and nothing where a step is missing', () => {
    const body = { alerts: [{ host: 'web-1' }], data: { host: 'db-1' } };
    expect(valueAt(body, ['alerts', 0, 'host'])).toBe('web-1');
    expect(valueAt(body, ['alerts', '0', 'host'])).toBe('web-1');
    expect(valueAt(body, ['alerts', 3, 'host'])).toBeUndefined();
    expect(valueAt(body, ['data', 'host', 'x'])).toBeUndefined();
    expect(valueAt(body, ['toString'])).toBeUndefined();
  });
});
