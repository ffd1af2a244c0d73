import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PitcrewError } from '../src/errors/catalogue.js';
import { DatadogImporter } from '../src/integrations/datadog/import.js';
import { parseDatadog } from '../src/integrations/datadog/parse.js';
import { observationOf } from '../src/integrations/notification.js';
import { datadogImportNeeds } from '../src/integrations/datadog/import-needs.js';
import { firingBeforeResolved, importAll, lines, readOnlyFetch } from './support/import-run.js';
import { startDatadogEmulator, type DatadogEmulator, type EmulatedMonitor } from './support/datadog-emulator.js';

/*
 * The Datadog importer against the emulator of GET /api/v1/monitor and GET /api/v2/events
 * (test/support/datadog-emulator.ts, from Datadog's API reference, its TypeScript client's models
 * and recorded cassettes). The emulator answers at most two items a page.
 */

const API_KEY = '9f86d081884c7d659a2feaa0c55ad015';
const APP_KEY = 'a3f1c2e4b5d6978812345678deadbeefcafe0001';
const DAY = 86_400_000;
const NOW = Date.now() - (Date.now() % 1000);
const iso = (ms: number) => new Date(ms).toISOString();

let datadog: DatadogEmulator;
let cpu: EmulatedMonitor, disk: EmulatedMonitor, heartbeat: EmulatedMonitor;

function setup(overrides: { now?: number; secret?: unknown } = {}) {
  return { config: { apiUrl: datadog.url }, secret: overrides.secret ?? { apiKey: API_KEY, applicationKey: APP_KEY }, since: NOW - 30 * DAY, now: overrides.now ?? NOW };
}

beforeEach(async () => {
  datadog = await startDatadogEmulator();
  datadog.apiKeys.add(API_KEY);
  datadog.applicationKeys.set(APP_KEY, ['monitors_read', 'events_read']);
  cpu = { id: 1001, name: 'CPU high', overall_state: 'Alert', overall_state_modified: iso(NOW - 40 * DAY), groups: { 'host:web-1': { status: 'Alert', last_triggered_ts: (NOW - 40 * DAY) / 1000 }, 'host:web-2': { status: 'OK', last_triggered_ts: (NOW - 10 * DAY) / 1000, last_resolved_ts: (NOW - 9 * DAY) / 1000 } } };
  disk = { id: 1002, name: 'Disk full', overall_state: 'Alert', overall_state_modified: iso(NOW - 5 * DAY), groups: { 'device:/dev/sda1,host:db-2': { status: 'Alert', last_triggered_ts: (NOW - 5 * DAY) / 1000 } } };
  heartbeat = { id: 1003, name: 'Heartbeat missing', overall_state: 'OK', overall_state_modified: iso(NOW - 2 * DAY), groups: {} };
  const quiet: EmulatedMonitor = { id: 1004, name: 'Quiet', overall_state: 'OK', overall_state_modified: iso(NOW - 90 * DAY), groups: {} };
  const stale: EmulatedMonitor = { id: 1005, name: 'Queue stuck', overall_state: 'Warn', overall_state_modified: iso(NOW - 50 * DAY), groups: {} };
  datadog.monitors.push(cpu, disk, heartbeat, quiet, stale);
  datadog.alert({ monitor: cpu, group: ['host:web-2'], transition: 'Triggered', at: NOW - 10 * DAY, priority: 'P2' });
  datadog.alert({ monitor: cpu, group: ['host:web-2'], transition: 'Renotify', at: NOW - 10 * DAY + 3_600_000 });
  datadog.alert({ monitor: cpu, group: ['host:web-2'], transition: 'Recovered', at: NOW - 9 * DAY });
  // monitor_groups as Datadog lists the group's tags, not sorted.
  datadog.alert({ monitor: disk, group: ['host:db-2', 'device:/dev/sda1'], transition: 'Warn', at: NOW - 6 * DAY });
  datadog.alert({ monitor: disk, group: ['host:db-2', 'device:/dev/sda1'], transition: 'Triggered', at: NOW - 5 * DAY });
  datadog.alert({ monitor: heartbeat, group: [], transition: 'No Data', at: NOW - 3 * DAY });
  datadog.alert({ monitor: heartbeat, group: [], transition: 'Recovered', at: NOW - 2 * DAY });
  datadog.otherEvent({ title: '[Synthetics] pipeline test', at: NOW - 4 * DAY });
  datadog.alert({ monitor: cpu, group: ['host:web-3'], transition: 'Triggered', at: NOW - 10_000 });
});

afterEach(async () => {
  expect(datadog.failures).toEqual([]);
  await datadog.close();
});

describe('Datadog import', () => {
  it('reads the alert events of the look-back, and the groups alerting from before it, across pages', async () => {
    const run = await importAll(new DatadogImporter({ pageSize: 100 }), setup());
    expect(lines(run.observations)).toEqual(
      [
        `1001:host:web-1 firing ${iso(NOW - 40 * DAY)}`,
        `1005:* firing ${iso(NOW - 50 * DAY)}`,
        `1001:host:web-2 firing ${iso(NOW - 10 * DAY)}`,
        `1001:host:web-2 resolved ${iso(NOW - 9 * DAY)}`,
        `1002:device:/dev/sda1,host:db-2 firing ${iso(NOW - 6 * DAY)}`,
        `1002:device:/dev/sda1,host:db-2 firing ${iso(NOW - 5 * DAY)}`,
        `1003:* firing ${iso(NOW - 3 * DAY)}`,
        `1003:* resolved ${iso(NOW - 2 * DAY)}`,
      ].sort(),
    );
    expect(firingBeforeResolved(run.observations.filter((o) => o.incidentKey !== '1001:host:web-1'))).toBe(true);
    expect(run.observations.find((o) => o.incidentKey === '1001:host:web-2' && o.state === 'firing')).toEqual({ incidentKey: '1001:host:web-2', alarmName: 'CPU high', hostname: 'web-2', severity: 'alert', state: 'firing', at: NOW - 10 * DAY });
    expect(run.observations.find((o) => o.incidentKey === '1003:*' && o.state === 'firing')).toMatchObject({ alarmName: 'Heartbeat missing', hostname: null, severity: 'no data' });
    // Pages: the events list followed page[cursor] to an empty page; the monitors list paged by page_size.
    const eventPages = datadog.requests.filter((r) => r.path === '/api/v2/events');
    expect(eventPages.length).toBeGreaterThanOrEqual(5);
    expect(eventPages.slice(1).every((r) => r.query['page[cursor]'] !== undefined)).toBe(true);
    expect(eventPages.every((r) => r.query['filter[query]'] === 'source:alert' && r.query.sort === 'timestamp' && r.query['filter[from]'] === String(NOW - 30 * DAY))).toBe(true);
    expect(datadog.requests.filter((r) => r.path === '/api/v1/monitor').map((r) => r.query.page)).toEqual(['0', '1', '2', '3']);
    expect(datadog.requests.every((r) => r.method === 'GET' && r.status === 200)).toBe(true);
  });

  it('resumes from its cursor: the next run reads only the events since, the boundary event once', async () => {
    const first = await importAll(new DatadogImporter({ pageSize: 100 }), setup());
    const end = NOW - 60_000; // where the first window ended (a minute before now)
    datadog.alert({ monitor: disk, group: ['host:db-2', 'device:/dev/sda1'], transition: 'Recovered', at: end });
    datadog.alert({ monitor: cpu, group: ['host:web-1'], transition: 'Recovered', at: NOW + 1000 });
    const second = await importAll(new DatadogImporter({ pageSize: 100 }), setup({ now: NOW + 3_600_000 }), first.cursor);
    expect(lines(second.observations)).toEqual(
      [`1001:host:web-3 firing ${iso(NOW - 10_000)}`, `1002:device:/dev/sda1,host:db-2 resolved ${iso(end)}`, `1001:host:web-1 resolved ${iso(NOW + 1000)}`].sort(),
    );
    // Only events: the monitors list is read by a first import alone.
    expect(datadog.requests.filter((r) => r.path === '/api/v1/monitor')).toHaveLength(4);
    const third = await importAll(new DatadogImporter({ pageSize: 100 }), setup({ now: NOW + 3_700_000 }), second.cursor);
    expect(third.observations).toEqual([]);
  });

  it('a restart between pages repeats nothing', async () => {
    const once = await importAll(new DatadogImporter(), setup());
    const restarted = await importAll(() => new DatadogImporter(), setup());
    expect(lines(restarted.observations)).toEqual(lines(once.observations));
  });

  it('a wrong application key, or one without events_read, is Datadog\'s 403 in words, without the keys', async () => {
    const wrong = { apiKey: API_KEY, applicationKey: 'ffffffffffffffffffffffffffffffffffffffff' };
    const error = await importAll(new DatadogImporter(), setup({ secret: wrong })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PitcrewError);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect((error as PitcrewError).message).toBe(`Datadog refused GET ${datadog.url}/api/v2/events: HTTP 403: Forbidden; check the API key, and that the application key is of this organisation and has the monitors_read and events_read scopes`);
    datadog.applicationKeys.set('0123456789abcdef0123456789abcdef01234567', ['monitors_read']);
    const unscoped = await importAll(new DatadogImporter(), setup({ secret: { apiKey: API_KEY, applicationKey: '0123456789abcdef0123456789abcdef01234567' } })).catch((e: unknown) => e);
    expect((unscoped as Error).message).toBe(`Datadog refused GET ${datadog.url}/api/v2/events: HTTP 403: Forbidden; check the API key, and that the application key is of this organisation and has the monitors_read and events_read scopes`);
    expect(JSON.stringify([error, unscoped, (error as Error).message])).not.toContain(API_KEY);
  });

  it('the site decides the API address; a site that is not Datadog\'s is refused before any call', async () => {
    // A fetch that connects nowhere: the address asked for is what counts.
    const urls: string[] = [];
    const fetch = async (url: string): Promise<Response> => {
      urls.push(url);
      throw new Error('connect ECONNREFUSED');
    };
    const error = await new DatadogImporter().importPage({ ...setup(), config: { site: 'datadoghq.eu' }, cursor: null, fetch, signal: AbortSignal.timeout(5000) }).catch((e: unknown) => e);
    expect(urls[0]).toMatch(/^https:\/\/api\.datadoghq\.eu\/api\/v2\/events\?/);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_UNAVAILABLE');
    expect((error as PitcrewError).message).toBe('Datadog did not answer GET https://api.datadoghq.eu/api/v2/events: connect ECONNREFUSED; check the address and that pitcrew can reach it');
    const refused = await new DatadogImporter().importPage({ ...setup(), config: { site: 'evil.example.com' }, cursor: null, fetch, signal: AbortSignal.timeout(5000) }).catch((e: unknown) => e);
    expect((refused as PitcrewError).code).toBe('PITCREW_ERR_VALIDATION');
    expect(urls).toHaveLength(1);
  });

  it('an imported alert has the key, name, host and severity its webhook notification gives', async () => {
    const run = await importAll(new DatadogImporter(), setup());
    // The webhook of the same alert (datadog/parse.ts; $ALERT_ID the monitor, $ALERT_SCOPE its group).
    const body = {
      id: '5764589284732911111', title: '[Triggered on {host:db-2,device:/dev/sda1}] Disk full', alert_id: '1002', alert_transition: 'Triggered',
      alert_scope: 'host:db-2,device:/dev/sda1', hostname: 'db-2', alert_cycle_key: '7165411293721411111', date: String(NOW - 5 * DAY),
    };
    const parsed = parseDatadog({ rawBody: JSON.stringify(body), body, headers: {}, config: {}, secret: undefined, now: NOW });
    if (parsed.kind !== 'alerts') throw new Error(JSON.stringify(parsed));
    const webhook = observationOf(parsed.alerts[0]!);
    const imported = run.observations.find((o) => o.at === NOW - 5 * DAY)!;
    // One incident: the parser's key ($ALERT_ID and $ALERT_SCOPE, its tags sorted) is the import's, and so are name, host, severity and time.
    expect(imported).toEqual(webhook);
    expect(webhook.incidentKey).toBe('1002:device:/dev/sda1,host:db-2');
  });

  it('imports through the runner\'s read-only fetch, GETs only; a write through it is refused before it leaves', async () => {
    const { fetch, methods } = readOnlyFetch(datadogImportNeeds);
    const run = await importAll(new DatadogImporter({ pageSize: 100 }), setup(), null, fetch);
    expect(lines(run.observations)).toEqual(lines((await importAll(new DatadogImporter({ pageSize: 100 }), setup())).observations));
    expect(new Set(methods)).toEqual(new Set(['GET']));
    const asked = datadog.requests.length;
    const mute = fetch(`${datadog.url}/api/v1/monitor/1001/mute`, { method: 'POST', headers: { 'dd-api-key': API_KEY, 'dd-application-key': APP_KEY } });
    await expect(mute).rejects.toThrow(`pitcrew did not send POST ${datadog.url}/api/v1/monitor/1001/mute: an import only reads from Datadog`);
    expect(datadog.requests).toHaveLength(asked);
  });

  it('the emulator records a write as a failure (what the afterEach assertion would catch)', async () => {
    await fetch(`${datadog.url}/api/v1/monitor/1001/mute`, { method: 'POST', headers: { 'dd-api-key': API_KEY, 'dd-application-key': APP_KEY } });
    expect(datadog.failures).toEqual(['POST /api/v1/monitor/1001/mute: not one of the reads the import may make']);
    datadog.failures.length = 0;
  });
});
