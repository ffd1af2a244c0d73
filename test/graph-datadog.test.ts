import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatadogGraphSource, narrowed } from '../src/integrations/datadog/graph.js';
import { captureOf, failureOf, HOUR } from './support/graph-capture.js';
import { startDatadogEmulator, type DatadogEmulator } from './support/datadog-emulator.js';
import { pngSize } from './support/png.js';

/*
 * Datadog's graph source (src/integrations/datadog/graph.ts) against the Datadog emulator
 * (test/support/datadog-emulator.ts: "Get a monitor's details", "Query timeseries points", "Take
 * graph snapshots" and the snapshot's delayed image, keys and scopes checked), over HTTP through
 * the service's egress-checked fetch.
 */

const KEYS = { apiKey: 'dd0a1b2c3d4e5f60718293a4b5c6d7e8', applicationKey: 'ddapp0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2' };
const TO = Math.floor(Date.now() / 60_000) * 60_000;
const MONITOR = { id: 4242, name: 'CPU high on {{host.name}}', overall_state: 'Alert', overall_state_modified: new Date(TO - 600_000).toISOString(), groups: {} };
/** The webhook as parse.ts reads it: the default payload with $ALERT_ID, $ALERT_SCOPE, $ALERT_TRANSITION. */
const WEBHOOK = { id: '7215891234567', title: '[Triggered on {host:web-1}] CPU high', alert_id: '4242', alert_scope: 'host:web-1', alert_transition: 'Triggered', date: String(TO - 600_000) };

let dd: DatadogEmulator;

beforeEach(async () => {
  dd = await startDatadogEmulator();
  dd.apiKeys.add(KEYS.apiKey);
  dd.applicationKeys.set(KEYS.applicationKey, ['monitors_read', 'timeseries_query']);
  dd.monitors.push(MONITOR);
  const points = (value: number) => Array.from({ length: 120 }, (_, i) => [TO - 2 * HOUR + i * 60_000, value + (i % 7)] as [number, number]);
  dd.series.push({ metric: 'system.cpu.user', tags: ['host:web-1', 'env:prod'], points: points(91) }, { metric: 'system.cpu.user', tags: ['host:web-2', 'env:prod'], points: points(20) });
});

afterEach(async () => {
  // GETs only, each a read the emulator serves.
  expect(dd.failures).toEqual([]);
  expect(dd.requests.every((r) => r.method === 'GET')).toBe(true);
  await dd.close();
});

const source = () => new DatadogGraphSource({ pollMs: 20, attempts: 5 });
const config = () => ({ apiUrl: dd.url });

describe('Datadog graph source', () => {
  it('snapshots the monitor’s query for the alerting group, waiting for the image Datadog stores after a delay', async () => {
    const request = captureOf({ config: config(), secret: KEYS, to: TO, alert: { payload: WEBHOOK, alarmName: 'CPU high' } });
    const [graph, ...rest] = await source().capture(request);
    expect(rest).toEqual([]);
    expect(graph).toMatchObject({ kind: 'image', title: 'CPU high on {{host.name}}', query: 'avg:system.cpu.user{host:web-1} by {host}', contentType: 'image/png', width: 600, height: 300 });
    expect(pngSize((graph as { bytes: Uint8Array }).bytes)).toEqual({ width: 600, height: 300 });
    expect(dd.requests.map((r) => `${r.path.replace(/\/[0-9a-f]+\.png$/, '/<id>.png').replace(/org_321813\/[\d-]+/, 'org_321813/<day>')} ${r.status}`)).toEqual([
      '/api/v1/monitor/4242 200',
      '/api/v1/query 200',
      '/api/v1/graph/snapshot 200',
      '/snapshot/view/dd-snapshots-prod/org_321813/<day>/<id>.png 403',
      '/snapshot/view/dd-snapshots-prod/org_321813/<day>/<id>.png 403',
      '/snapshot/view/dd-snapshots-prod/org_321813/<day>/<id>.png 200',
    ]);
    const snapshot = dd.requests.find((r) => r.path === '/api/v1/graph/snapshot')!;
    expect(snapshot.query).toEqual({ metric_query: 'avg:system.cpu.user{host:web-1} by {host}', start: String((TO - HOUR) / 1000), end: String(TO / 1000), title: 'CPU high on {{host.name}}', width: '600', height: '300' });
    // The keys go to the API only, never to the storage the image is on.
    expect(dd.requests.filter((r) => r.path.startsWith('/snapshot/')).every((r) => !r.keys)).toBe(true);
    expect(narrowed('avg:system.cpu.user{env:prod} by {host}', 'host:web-1')).toBe('avg:system.cpu.user{env:prod,host:web-1} by {host}');
  });

  it('a rule’s metric query is drawn as it is, without asking for the monitor', async () => {
    const [graph] = await source().capture(captureOf({ config: config(), secret: KEYS, to: TO, graphs: ['max:system.cpu.user{env:prod} by {host}'] }));
    expect(graph).toMatchObject({ query: 'max:system.cpu.user{env:prod} by {host}', title: 'max:system.cpu.user{env:prod} by {host}' });
    expect(dd.requests.some((r) => r.path.startsWith('/api/v1/monitor'))).toBe(false);
  });

  it('refused keys are Datadog’s 403 in words, without the keys', async () => {
    const error = await failureOf(source().capture(captureOf({ config: config(), secret: { ...KEYS, applicationKey: 'ddappNotTheKey000000000000000000000000000' }, to: TO, alert: { payload: WEBHOOK } })));
    expect(error.code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect(error.message).toMatch(/^Datadog refused GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/monitor\/4242: HTTP 403: Forbidden; Datadog refused the keys/);
    expect(error.message).not.toMatch(/ddappNotTheKey|dd0a1b2c3d4e5f6/);
  });

  it('an invalid query is Datadog’s parse error; a query without points in the window is no data; neither is snapshotted', async () => {
    const invalid = await failureOf(source().capture(captureOf({ config: config(), secret: KEYS, to: TO, graphs: ['avg:system.cpu.user{host:web-1'] })));
    expect(invalid.message).toMatch(/^Datadog refused GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query: HTTP 400: Error parsing query: unable to parse avg:system\.cpu\.user\{host:web-1: .*; Datadog cannot read the query avg:system\.cpu\.user\{host:web-1: check the rule’s graph$/);
    const empty = await failureOf(source().capture(captureOf({ config: config(), secret: KEYS, to: TO, graphs: ['avg:system.cpu.user{host:db-9}'] })));
    expect(empty.message).toBe(`Datadog refused GET ${dd.url}/api/v1/query: no data for avg:system.cpu.user{host:db-9} between ${new Date(TO - HOUR).toISOString()} and ${new Date(TO).toISOString()}`);
    expect(dd.requests.some((r) => r.path === '/api/v1/graph/snapshot')).toBe(false);
  });

  it('an image that never comes is a bounded wait that fails in words', async () => {
    dd.snapshotMisses = 100;
    const error = await failureOf(source().capture(captureOf({ config: config(), secret: KEYS, to: TO, graphs: ['avg:system.cpu.user{host:web-1}'] })));
    expect(error.message).toMatch(/^Datadog refused GET http:\/\/127\.0\.0\.1:\d+\/snapshot\/view\/dd-snapshots-prod\/org_321813\/[\d-]+\/[0-9a-f]+\.png: the snapshot was not ready after 5 tries over 0\.1 s: its storage still answered HTTP 403$/);
    expect(dd.requests.filter((r) => r.path.startsWith('/snapshot/'))).toHaveLength(5);
  });
});
