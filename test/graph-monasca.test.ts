import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MonascaGraphSource, parseMetric } from '../src/integrations/monasca/graph.js';
import { captureOf, failureOf, HOUR } from './support/graph-capture.js';
import { startKeystoneMonasca, type EmulatedProject, type KeystoneMonasca } from './support/keystone-monasca.js';

/*
 * Monasca's graph source (src/integrations/monasca/graph.ts) against the Keystone + Monasca
 * emulator (test/support/keystone-monasca.ts: "List measurements" of openstack/monasca-api
 * docs/monasca-api-spec.md, Keystone v3 token issue), over HTTP through the service's
 * egress-checked fetch. The emulator checks the token and keeps every call it does not serve.
 */

const USER = { username: 'graph-reader', password: 'reader-password-39', domain: 'Default', projects: ['ops'] };
const TO = Math.floor(Date.now() / 60_000) * 60_000;
/** The webhook body monasca-notification posts (monasca_notification/plugins/webhook_notifier.py). */
const WEBHOOK = {
  alarm_id: 'alarm-a', alarm_definition_id: 'def-cpu', alarm_name: 'high cpu', alarm_description: '', alarm_timestamp: (TO - 10 * 60_000) / 1000, state: 'ALARM', old_state: 'OK',
  message: 'Thresholds were exceeded for the sub-alarms: avg(cpu.system_perc) > 90.0', tenant_id: 't-ops',
  metrics: [{ id: null, name: 'cpu.system_perc', dimensions: { hostname: 'web-1', service: 'monitoring' } }],
};

let cloud: KeystoneMonasca;
let project: EmulatedProject;

/** One point a minute over the last two hours. */
function minutes(value: (i: number) => number): Array<[number, number]> {
  return Array.from({ length: 120 }, (_, i) => [TO - 2 * HOUR + i * 60_000, value(i)] as [number, number]);
}

beforeEach(async () => {
  cloud = await startKeystoneMonasca([USER]);
  project = cloud.projects.get('ops')!;
  project.measurements.push(
    { name: 'cpu.system_perc', dimensions: { hostname: 'web-1', service: 'monitoring' }, points: minutes((i) => 40 + (i % 60)) },
    { name: 'cpu.system_perc', dimensions: { hostname: 'web-2', service: 'monitoring' }, points: minutes(() => 12) },
    { name: 'disk.space_used_perc', dimensions: { hostname: 'db-1', device: '/dev/sda1' }, points: [] },
  );
});

afterEach(async () => {
  // Reads only: every Monasca call a GET, the token request the one POST, nothing the emulator does not serve.
  expect(cloud.unexpected).toEqual([]);
  expect(cloud.requests.filter((r) => r.method !== 'GET').every((r) => r.method === 'POST' && r.path === '/v3/auth/tokens')).toBe(true);
  await cloud.close();
});

const login = () => ({ version: 'v3', identityUrl: cloud.url, username: USER.username, password: USER.password, project: 'ops' });
const config = () => ({ monascaUrl: cloud.url });

describe('Monasca graph source', () => {
  it('pulls the alarm’s metric over the window with a token from the Keystone login, as numbers, across pages', async () => {
    cloud.measurementsPage = 25;
    const source = new MonascaGraphSource();
    const request = captureOf({ config: config(), secret: login(), to: TO, alert: { payload: WEBHOOK } });
    const graphs = await source.capture(request);
    expect(graphs).toHaveLength(1);
    const graph = graphs[0]!;
    if (graph.kind !== 'series') throw new Error('expected series');
    expect(graph.query).toBe('cpu.system_perc{hostname=web-1,service=monitoring}');
    expect(graph.series.map((s) => s.name)).toEqual(['cpu.system_perc{hostname="web-1", service="monitoring"}']);
    const expected = minutes((i) => 40 + (i % 60)).filter(([at]) => at >= TO - HOUR && at <= TO);
    expect(graph.series[0]!.points).toEqual(expected);
    expect(graph.series[0]!.labels).toEqual({ hostname: 'web-1', service: 'monitoring' });
    const reads = cloud.requests.filter((r) => r.path === '/v2.0/metrics/measurements');
    expect(reads.length).toBe(Math.ceil(expected.length / 25));
    expect(reads.every((r) => typeof r.token === 'string' && r.token.length > 0)).toBe(true);
    // The token is kept: a second capture asks Keystone for none.
    await source.capture(captureOf({ config: config(), secret: login(), to: TO, alert: { payload: WEBHOOK } }));
    expect(cloud.requests.filter((r) => r.path === '/v3/auth/tokens')).toHaveLength(1);
  });

  it('a rule’s graph with fewer dimensions draws every metric it matches, one series each', async () => {
    const [graph] = await new MonascaGraphSource().capture(captureOf({ config: config(), secret: login(), to: TO, graphs: ['cpu.system_perc{service=monitoring}'] }));
    expect(graph!.kind === 'series' && graph!.series.map((s) => s.labels.hostname)).toEqual(['web-1', 'web-2']);
    expect(parseMetric('cpu.system_perc{hostname:web-1}')).toEqual({ name: 'cpu.system_perc', dimensions: { hostname: 'web-1' }, query: 'cpu.system_perc{hostname:web-1}' });
  });

  it('a refused token and a refused login are Monasca’s and Keystone’s answers, without the secret', async () => {
    const token = await failureOf(new MonascaGraphSource().capture(captureOf({ config: config(), secret: 'b3a9f0e1c2d34e5f8a7b6c5d4e3f2a1b', to: TO, alert: { payload: WEBHOOK } })));
    expect(token.code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect(token.message).toMatch(/^Monasca refused GET http:\/\/127\.0\.0\.1:\d+\/v2\.0\/metrics\/measurements: HTTP 401: Authentication required; Unauthorized; Monasca refused the token/);
    expect(token.message).not.toContain('b3a9f0e1c2d34e5f8a7b6c5d4e3f2a1b');
    const wrong = await failureOf(new MonascaGraphSource().capture(captureOf({ config: config(), secret: { ...login(), password: 'not-the-password-99' }, to: TO, alert: { payload: WEBHOOK } })));
    expect(wrong.message).toMatch(/^Keystone refused the credentials of user graph-reader of project ops: .*answered HTTP 401\)$/);
    expect(wrong.message).not.toContain('not-the-password-99');
  });

  it('an invalid metric is Monasca’s 422 in words; a metric without measurements in the window is no data', async () => {
    const invalid = await failureOf(new MonascaGraphSource().capture(captureOf({ config: config(), secret: login(), to: TO, graphs: ['cpu;drop{hostname=web-1}'] })));
    expect(invalid.message).toMatch(/^Monasca refused GET http:\/\/127\.0\.0\.1:\d+\/v2\.0\/metrics\/measurements: HTTP 422: Invalid characters in metric name cpu;drop; Unprocessable Entity; Monasca cannot read the metric cpu;drop\{hostname=web-1\}/);
    const empty = await failureOf(new MonascaGraphSource().capture(captureOf({ config: config(), secret: login(), to: TO, graphs: ['disk.space_used_perc{hostname=db-1}'] })));
    expect(empty.message).toBe(`Monasca refused GET ${cloud.url}/v2.0/metrics/measurements: no measurements of disk.space_used_perc{hostname=db-1} between ${new Date(TO - HOUR).toISOString()} and ${new Date(TO).toISOString()}`);
  });

  it('an unreachable Monasca is the tool unavailable', async () => {
    const other = await startKeystoneMonasca([]);
    const address = other.url;
    await other.close();
    const error = await failureOf(new MonascaGraphSource().capture(captureOf({ config: { monascaUrl: address }, secret: 'some-kept-token-0000', to: TO, alert: { payload: WEBHOOK } })));
    expect(error.code).toBe('PITCREW_ERR_TOOL_UNAVAILABLE');
    expect(error.message).toMatch(/^Monasca did not answer GET http:\/\/127\.0\.0\.1:\d+\/v2\.0\/metrics\/measurements: /);
  });
});
