import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PitcrewError } from '../src/errors/catalogue.js';
import { PagerDutyImporter } from '../src/integrations/pagerduty/import.js';
import { observationOf } from '../src/integrations/notification.js';
import { parsePagerDuty } from '../src/integrations/pagerduty/parse.js';
import { pagerdutyImportNeeds } from '../src/integrations/pagerduty/import-needs.js';
import { firingBeforeResolved, importAll, lines, readOnlyFetch } from './support/import-run.js';
import { startPagerDutyEmulator, type PagerDutyEmulator } from './support/pagerduty-emulator.js';

/*
 * The PagerDuty importer against the emulator of GET /incidents and GET /log_entries
 * (test/support/pagerduty-emulator.ts, from PagerDuty/api-schema's REST OpenAPI document). The
 * emulator answers at most two records a page; the import reads windows of at most 7 days.
 */

const KEY = 'u+AbCdEfGhIjKlMnOpQr';
const DAY = 86_400_000;
const NOW = Date.now() - (Date.now() % 1000);
const SINCE = NOW - 30 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

let pd: PagerDutyEmulator;
let ids: Record<'old' | 'cpu' | 'disk' | 'swap1' | 'swap2' | 'mysql' | 'edge' | 'fresh', string>;

function setup(overrides: { now?: number; secret?: string } = {}) {
  return { config: { apiUrl: pd.url, hostField: 'service.summary' }, secret: overrides.secret ?? KEY, since: SINCE, now: overrides.now ?? NOW };
}

beforeEach(async () => {
  pd = await startPagerDutyEmulator();
  pd.keys.add(KEY);
  ids = {} as typeof ids;
  ids.old = pd.incident({ title: 'Queue backlog', service: 'worker-1', created: NOW - 40 * DAY });
  pd.resolve(ids.old, NOW - 20 * DAY);
  ids.cpu = pd.incident({ title: 'CPU high', service: 'web-1', created: NOW - 10 * DAY });
  pd.acknowledge(ids.cpu, NOW - 10 * DAY + 3_600_000);
  pd.resolve(ids.cpu, NOW - 9 * DAY);
  ids.disk = pd.incident({ title: 'Disk full', service: 'db-1', urgency: 'low', created: NOW - 5 * DAY });
  // Three in one window: two pages of incidents in it.
  ids.swap1 = pd.incident({ title: 'Swap low', service: 'db-2', created: NOW - 4 * DAY });
  pd.resolve(ids.swap1, NOW - 3.5 * DAY);
  ids.swap2 = pd.incident({ title: 'Swap low', service: 'db-2', created: NOW - 3 * DAY });
  ids.mysql = pd.incident({ title: 'MySQL down', service: 'db-1', created: NOW - 2 * DAY });
  pd.resolve(ids.mysql, NOW - DAY);
  // Exactly where the first 7-day window ends and the second begins.
  ids.edge = pd.incident({ title: 'Ping lost', service: 'edge-1', created: SINCE + 7 * DAY });
  ids.fresh = pd.incident({ title: 'Ping lost', service: 'edge-2', created: NOW - 10_000 });
});

afterEach(async () => {
  expect(pd.failures).toEqual([]);
  await pd.close();
});

describe('PagerDuty import', () => {
  it('reads the incidents of the look-back and their resolutions at PagerDuty\'s times, across pages and windows', async () => {
    const run = await importAll(new PagerDutyImporter(), setup());
    expect(lines(run.observations)).toEqual(
      [
        `${ids.old} resolved ${iso(NOW - 20 * DAY)}`,
        `${ids.cpu} firing ${iso(NOW - 10 * DAY)}`,
        `${ids.cpu} resolved ${iso(NOW - 9 * DAY)}`,
        `${ids.disk} firing ${iso(NOW - 5 * DAY)}`,
        `${ids.swap1} firing ${iso(NOW - 4 * DAY)}`,
        `${ids.swap1} resolved ${iso(NOW - 3.5 * DAY)}`,
        `${ids.swap2} firing ${iso(NOW - 3 * DAY)}`,
        `${ids.mysql} firing ${iso(NOW - 2 * DAY)}`,
        `${ids.mysql} resolved ${iso(NOW - DAY)}`,
        `${ids.edge} firing ${iso(SINCE + 7 * DAY)}`,
      ].sort(),
    );
    expect(firingBeforeResolved(run.observations.filter((o) => o.incidentKey !== ids.old))).toBe(true);
    expect(run.observations.find((o) => o.incidentKey === ids.disk)).toEqual({ incidentKey: ids.disk, alarmName: 'Disk full', hostname: 'db-1', severity: 'low', state: 'firing', at: NOW - 5 * DAY });
    const incidents = pd.requests.filter((r) => r.path === '/incidents');
    expect(incidents.every((r) => r.query.get('time_zone') === 'UTC' && r.query.getAll('statuses[]').length === 3)).toBe(true);
    // Windows of at most 7 days, and offset paging inside one.
    expect(new Set(incidents.map((r) => r.query.get('since'))).size).toBe(5);
    expect(incidents.some((r) => r.query.get('offset') !== '0')).toBe(true);
    expect(pd.requests.filter((r) => r.path === '/log_entries').every((r) => r.query.getAll('include[]').includes('incidents') && r.query.get('is_overview') === 'true')).toBe(true);
    expect(pd.requests.every((r) => r.method === 'GET' && r.status === 200)).toBe(true);
  });

  it('resumes from its cursor: the next run reads only what is new', async () => {
    const first = await importAll(new PagerDutyImporter(), setup());
    pd.resolve(ids.disk, NOW + 1000);
    const later = pd.incident({ title: 'CPU high', service: 'web-1', created: NOW + 2000 });
    const second = await importAll(new PagerDutyImporter(), setup({ now: NOW + 3_600_000 }), first.cursor);
    expect(lines(second.observations)).toEqual([`${ids.fresh} firing ${iso(NOW - 10_000)}`, `${ids.disk} resolved ${iso(NOW + 1000)}`, `${later} firing ${iso(NOW + 2000)}`].sort());
    const third = await importAll(new PagerDutyImporter(), setup({ now: NOW + 3_700_000 }), second.cursor);
    expect(third.observations).toEqual([]);
  });

  it('a restart between pages repeats nothing', async () => {
    const once = await importAll(new PagerDutyImporter(), setup());
    const restarted = await importAll(() => new PagerDutyImporter(), setup());
    expect(lines(restarted.observations)).toEqual(lines(once.observations));
  });

  it('a wrong key is PagerDuty\'s 401 in words, without the key', async () => {
    const wrong = 'y_NbAaXxYyZz12345678';
    const error = await importAll(new PagerDutyImporter(), setup({ secret: wrong })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PitcrewError);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect((error as PitcrewError).message).toBe(`PagerDuty refused GET ${pd.url}/incidents: HTTP 401; check the REST API key (PagerDuty → Integrations → API Access Keys; a read-only key is enough)`);
    expect((error as PitcrewError).message).not.toContain(wrong);
  });

  it('an imported incident has the key, name, host and severity its v3 webhook gives', async () => {
    const run = await importAll(new PagerDutyImporter(), setup());
    // The v3 webhook of the same incident (PagerDuty/developer-docs docs/webhooks/01-Overview.md shape).
    const webhookBody = (eventType: string) => ({
      event: {
        id: `01DEN${eventType.length}`, event_type: eventType, resource_type: 'incident', occurred_at: iso(eventType === 'incident.resolved' ? NOW - DAY : NOW - 2 * DAY),
        data: { id: ids.mysql, type: 'incident', number: 1004, title: 'MySQL down', status: eventType === 'incident.resolved' ? 'resolved' : 'triggered', urgency: 'high', service: { id: 'PS4100', summary: 'db-1', type: 'service_reference' } },
      },
    });
    for (const [eventType, state] of [['incident.triggered', 'firing'], ['incident.resolved', 'resolved']] as const) {
      const body = webhookBody(eventType);
      const parsed = parsePagerDuty({ rawBody: JSON.stringify(body), body, headers: {}, config: { hostField: 'service.summary' }, secret: undefined, now: NOW });
      if (parsed.kind !== 'alerts') throw new Error(JSON.stringify(parsed));
      const webhook = observationOf(parsed.alerts[0]!);
      const imported = run.observations.find((o) => o.incidentKey === ids.mysql && o.state === state)!;
      // One incident: the parser's key (event.data.id) is the import's, and so are name, host (hostField), urgency and time.
      expect(imported).toEqual(webhook);
      expect(webhook.incidentKey).toBe(ids.mysql);
    }
  });

  it('imports through the runner\'s read-only fetch, GETs only; a write through it is refused before it leaves', async () => {
    const { fetch, methods } = readOnlyFetch(pagerdutyImportNeeds);
    const run = await importAll(new PagerDutyImporter(), setup(), null, fetch);
    expect(lines(run.observations)).toEqual(lines((await importAll(new PagerDutyImporter(), setup())).observations));
    expect(new Set(methods)).toEqual(new Set(['GET']));
    const asked = pd.requests.length;
    const resolve = fetch(`${pd.url}/incidents/${ids.disk}`, { method: 'PUT', headers: { authorization: `Token token=${KEY}`, accept: 'application/vnd.pagerduty+json;version=2', 'content-type': 'application/json' }, body: '{"incident":{"type":"incident","status":"resolved"}}' });
    await expect(resolve).rejects.toThrow(`pitcrew did not send PUT ${pd.url}/incidents/${ids.disk}: an import only reads from PagerDuty`);
    expect(pd.requests).toHaveLength(asked);
  });

  it('the emulator records a write as a failure (what the afterEach assertion would catch)', async () => {
    const response = await fetch(`${pd.url}/incidents/${ids.disk}`, { method: 'PUT', headers: { authorization: `Token token=${KEY}`, accept: 'application/vnd.pagerduty+json;version=2', 'content-type': 'application/json' }, body: '{"incident":{"type":"incident","status":"resolved"}}' });
    expect(response.status).toBe(403);
    expect(pd.failures).toEqual([`PUT /incidents/${ids.disk}: a write with a read-only key`]);
    pd.failures.length = 0;
  });
});
