import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PitcrewError } from '../src/errors/catalogue.js';
import { observationOf } from '../src/integrations/notification.js';
import { parseZabbix } from '../src/integrations/zabbix/parse.js';
import { ZabbixImporter } from '../src/integrations/zabbix/import.js';
import { zabbixImportNeeds } from '../src/integrations/zabbix/import-needs.js';
import { firingBeforeResolved, importAll, lines, readOnlyFetch, loopbackFetch } from './support/import-run.js';
import { startZabbixEmulator, type ZabbixEmulator } from './support/zabbix-emulator.js';

/*
 * The Zabbix importer against the JSON-RPC emulator (test/support/zabbix-emulator.ts, built from
 * zabbix/zabbix ui/api_jsonrpc.php, CEvent.php, CProblem.php and the manual's "API" authentication
 * page for 6.0, 6.4, 7.0 and 7.4). Pages of two problems, so every import crosses pages.
 */

const TOKEN = 'c5e3a1b7d9f0246813579bdf02468ace13579bdf02468ace13579bdf02468ace';
const DAY = 86_400;
const NOW = Math.floor(Date.now() / 1000);
const at = (s: number) => new Date(s * 1000).toISOString();

let zabbix: ZabbixEmulator;

function setup(overrides: { now?: number; secret?: string } = {}) {
  return { config: { zabbixUrl: zabbix.url }, secret: overrides.secret ?? TOKEN, since: (NOW - 30 * DAY) * 1000, now: (overrides.now ?? NOW) * 1000 };
}

async function start(version: string) {
  zabbix = await startZabbixEmulator({ version, tokens: [TOKEN] });
}

afterEach(async () => {
  expect(zabbix.failures).toEqual([]);
  await zabbix.close();
});

describe('Zabbix import (7.0: token in the Authorization header)', () => {
  let ids: Record<'before' | 'p1' | 'p2' | 'p3' | 'p4' | 'fresh', string>;
  beforeEach(async () => {
    await start('7.0.5');
    ids = {} as typeof ids;
    ids.before = zabbix.problem({ name: 'Disk full on /var', host: 'web-1', severity: 4, clock: NOW - 40 * DAY });
    const gone = zabbix.problem({ name: 'Old and over', host: 'web-1', severity: 2, clock: NOW - 40 * DAY });
    zabbix.recover(gone, NOW - 35 * DAY);
    ids.p1 = zabbix.problem({ name: 'High CPU', host: 'web-1', severity: 3, clock: NOW - 10 * DAY });
    zabbix.recover(ids.p1, NOW - 9 * DAY);
    ids.p2 = zabbix.problem({ name: 'MySQL is down', host: 'db-1', severity: 5, clock: NOW - 5 * DAY });
    ids.p3 = zabbix.problem({ name: 'High CPU', host: 'web-2', severity: 3, clock: NOW - 2 * DAY });
    zabbix.recover(ids.p3, NOW - DAY);
    ids.p4 = zabbix.problem({ name: 'Swap low', host: 'db-1', severity: 2, clock: NOW - 3 * DAY });
    // Not settled yet at NOW: read by the next run.
    ids.fresh = zabbix.problem({ name: 'Ping lost', host: 'edge-1', severity: 4, clock: NOW - 10 });
  });

  it('reads the history of the look-back and the problems open from before it, at Zabbix clocks, across pages', async () => {
    const run = await importAll(new ZabbixImporter({ pageSize: 2 }), setup());
    expect(lines(run.observations)).toEqual(
      [
        `${ids.before} firing ${at(NOW - 40 * DAY)}`,
        `${ids.p1} firing ${at(NOW - 10 * DAY)}`,
        `${ids.p1} resolved ${at(NOW - 9 * DAY)}`,
        `${ids.p2} firing ${at(NOW - 5 * DAY)}`,
        `${ids.p3} firing ${at(NOW - 2 * DAY)}`,
        `${ids.p3} resolved ${at(NOW - DAY)}`,
        `${ids.p4} firing ${at(NOW - 3 * DAY)}`,
      ].sort(),
    );
    expect(firingBeforeResolved(run.observations)).toBe(true);
    const p2 = run.observations.find((o) => o.incidentKey === ids.p2)!;
    expect(p2).toEqual({ incidentKey: ids.p2, alarmName: 'MySQL is down', hostname: 'db-1', severity: 'Disaster', state: 'firing', at: (NOW - 5 * DAY) * 1000 });
    // Paging: event.get was asked for successive pages of two, each after the last problem read.
    const pages = zabbix.calls.filter((c) => c.method === 'event.get' && c.params.limit === 2);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.map((c) => c.params.eventid_from)).toEqual([...new Set(pages.map((c) => c.params.eventid_from))]);
    expect(zabbix.calls.filter((c) => c.method === 'problem.get')).not.toHaveLength(0);
    expect(zabbix.calls.filter((c) => c.method !== 'apiinfo.version').every((c) => c.credential === 'header')).toBe(true);
    expect(zabbix.calls.filter((c) => c.method === 'apiinfo.version').every((c) => c.credential === 'none')).toBe(true);
  });

  it('resumes from its cursor: the next run reads only what is new, resolutions of open problems included', async () => {
    const first = await importAll(new ZabbixImporter({ pageSize: 2 }), setup());
    zabbix.recover(ids.p2, NOW + 100);
    zabbix.recover(ids.before, NOW + 200);
    const p5 = zabbix.problem({ name: 'Certificate expires', host: 'web-1', severity: 2, clock: NOW + 300 });
    const later = NOW + 3600;
    const second = await importAll(new ZabbixImporter({ pageSize: 2 }), setup({ now: later }), first.cursor);
    expect(lines(second.observations)).toEqual(
      [`${ids.p2} resolved ${at(NOW + 100)}`, `${ids.before} resolved ${at(NOW + 200)}`, `${ids.fresh} firing ${at(NOW - 10)}`, `${p5} firing ${at(NOW + 300)}`].sort(),
    );
    const seen = new Set(lines(first.observations));
    expect(lines(second.observations).filter((line) => seen.has(line))).toEqual([]);
    // A third run with nothing new reads nothing.
    const third = await importAll(new ZabbixImporter({ pageSize: 2 }), setup({ now: later + 60 }), second.cursor);
    expect(third.observations).toEqual([]);
  });

  it('a restart between any two pages loses and repeats nothing: a new importer per page gives the same observations', async () => {
    const once = await importAll(new ZabbixImporter({ pageSize: 2 }), setup());
    const restarted = await importAll(() => new ZabbixImporter({ pageSize: 2 }), setup());
    expect(lines(restarted.observations)).toEqual(lines(once.observations));
    expect(new Set(lines(restarted.observations)).size).toBe(restarted.observations.length);
  });

  it('a wrong token is Zabbix\'s refusal in words, without the token', async () => {
    const wrong = 'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff';
    const error = await importAll(new ZabbixImporter({ pageSize: 2 }), setup({ secret: wrong })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PitcrewError);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect((error as PitcrewError).message).toMatch(/^Zabbix refused problem\.get at http:\/\/127\.0\.0\.1:\d+\/\S*api_jsonrpc\.php: Not authorised\..*API token/);
    expect((error as PitcrewError).message).not.toContain(wrong);
  });

  it('an imported problem has the key, name, host and severity its webhook notification gives (media-type.yaml body)', async () => {
    const run = await importAll(new ZabbixImporter({ pageSize: 2 }), setup());
    // What pitcrew's media type posts for {EVENT.ID} = p3, its problem and then its recovery.
    const body = (value: '0' | '1') => ({
      pitcrew_media_type: '1', event_source: '0', event_value: value, event_update_status: '0', event_id: ids.p3, event_recovery_id: value === '0' ? '9999' : '',
      event_name: 'High CPU', event_severity: 'Average', event_nseverity: '3', host_host: 'web-2', host_name: 'web-2 (visible)', trigger_id: '1', event_tags: [],
    });
    for (const [value, state] of [['1', 'firing'], ['0', 'resolved']] as const) {
      const parsed = parseZabbix({ rawBody: '', body: body(value), headers: {}, config: {}, secret: undefined, now: Date.now() });
      if (parsed.kind !== 'alerts') throw new Error(JSON.stringify(parsed));
      const webhook = observationOf(parsed.alerts[0]!);
      const imported = run.observations.find((o) => o.incidentKey === ids.p3 && o.state === state)!;
      // One incident: the parser's key ({EVENT.ID}) is the import's; name, host and severity agree.
      // (The webhook says no time: its {EVENT.DATE} is in the server's unsaid time zone.)
      expect({ ...imported, at: null }).toEqual(webhook);
      expect(webhook.incidentKey).toBe(ids.p3);
    }
  });

  it('imports through the runner\'s read-only fetch, its read methods only; a write method through it is refused before it leaves', async () => {
    const { fetch } = readOnlyFetch(zabbixImportNeeds);
    const run = await importAll(new ZabbixImporter({ pageSize: 2 }), setup(), null, fetch);
    expect(lines(run.observations)).toEqual(lines((await importAll(new ZabbixImporter({ pageSize: 2 }), setup())).observations));
    expect(new Set(zabbix.calls.map((c) => c.method))).toEqual(new Set(['apiinfo.version', 'problem.get', 'event.get']));
    const asked = zabbix.calls.length;
    for (const method of ['event.acknowledge', 'problem.update', 'user.login']) {
      const write = fetch(`${zabbix.url}/api_jsonrpc.php`, { method: 'POST', headers: { 'content-type': 'application/json-rpc', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ jsonrpc: '2.0', method, params: { eventids: [ids.p2], action: 1 }, id: 1 }) });
      await expect(write).rejects.toThrow(`pitcrew did not send POST ${zabbix.url}/api_jsonrpc.php: an import only reads from Zabbix`);
    }
    expect(zabbix.calls).toHaveLength(asked);
  });

  it('the emulator records a write as a failure (what the afterEach assertion would catch)', async () => {
    const response = await fetch(`${zabbix.url}/api_jsonrpc.php`, { method: 'POST', headers: { 'content-type': 'application/json-rpc', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ jsonrpc: '2.0', method: 'event.acknowledge', params: { eventids: [ids.p2], action: 1 }, id: 1 }) });
    expect(((await response.json()) as { error?: unknown }).error).toBeDefined();
    expect(zabbix.failures).toEqual(['a call that is not one of the reads the import may make: event.acknowledge']);
    zabbix.failures.length = 0;
  });
});

describe('Zabbix versions and where the token goes', () => {
  it('6.0 takes the token in the request\'s auth property (no Authorization header before 6.4)', async () => {
    await start('6.0.30');
    zabbix.problem({ name: 'High CPU', host: 'web-1', severity: 3, clock: NOW - DAY });
    const run = await importAll(new ZabbixImporter({ pageSize: 2 }), setup());
    expect(run.observations).toHaveLength(1);
    expect(zabbix.calls.filter((c) => c.method !== 'apiinfo.version').every((c) => c.credential === 'auth')).toBe(true);
  });

  it('7.4 refuses the auth property: the token goes only in the header', async () => {
    await start('7.4.2');
    zabbix.problem({ name: 'High CPU', host: 'web-1', severity: 3, clock: NOW - DAY });
    const { fetch, methods } = loopbackFetch();
    const run = await importAll(new ZabbixImporter({ pageSize: 2 }), setup(), null, fetch);
    expect(run.observations).toHaveLength(1);
    expect(zabbix.calls.filter((c) => c.method !== 'apiinfo.version').every((c) => c.credential === 'header')).toBe(true);
    // JSON-RPC is POST; each one is a read method (the emulator's failures would say otherwise).
    expect(new Set(methods)).toEqual(new Set(['POST']));
  });
});
