import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RollupRefresher } from '../src/incidents/rollup-refresher.js';
import { refreshIncidentDays } from '../src/incidents/rollup.js';
import { idAt } from '../src/store/ids.js';
import type { IncidentRow } from '../src/store/schema.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

/*
 * The analytics' day rollups (incident_days, incident_host_days) recomputed in the background
 * (incidents/rollup-refresher.ts, docs/incidents.md#analytics), on both databases: without any
 * analytics call, the days the triggers mark stale are recomputed to exactly what the incidents
 * hold; a change after that is in the very next answer; two nodes recomputing at once agree.
 */

const NOW = Date.parse('2026-11-10T12:00:00Z');
const MIN = 60_000;
const at = (text: string) => Date.parse(`2026-${text}:00Z`);
const day = (text: string) => Math.floor(Date.parse(`2026-${text}T00:00:00Z`) / 86_400_000);

function incident(tenantId: string, integrationId: string | null, key: string, alarm: string, severity: string | null, host: string | null, opened: string, minutes: number, by: 'tool' | 'automation' | 'manual' = 'tool'): IncidentRow {
  const openedAt = at(opened);
  const resolvedAt = openedAt + minutes * MIN;
  return {
    id: idAt(openedAt), tenant_id: tenantId, integration_id: integrationId, incident_key: key, state: 'resolved',
    alarm_name: alarm, severity, hostname: host, host_key: host ?? '',
    opened_at: openedAt, resolved_at: resolvedAt, last_seen_at: resolvedAt, last_fired_at: openedAt, last_fingerprint: null, occurrences: 1,
    resolved_by: by, resolved_by_user: null, last_fix_at: null, rule_ids: '[]', execution_ids: '[]', execution_count: 0,
    last_alert_id: null, alert_count: 0, last_event_id: null, event_count: 0,
  };
}

describe.each(testDialects())('incident rollups recomputed in the background on %s', (dialect) => {
  let env: TestEnv;
  let integration: string;

  /** The days marked stale, once each: on PostgreSQL each change leaves a mark of its own (migration 0044). */
  const stale = async (tenantId = env.tenant.tenantId) =>
    (await env.store.db.selectFrom('incident_days_stale').select('day').distinct().where('tenant_id', '=', tenantId).orderBy('day').execute()).map((row) => Number(row.day));
  const days = async (tenantId = env.tenant.tenantId) =>
    (await env.store.db.selectFrom('incident_days').selectAll().where('tenant_id', '=', tenantId).orderBy('day').orderBy('alarm_name').execute())
      .map((r) => [Number(r.day), r.integration_id, r.alarm_name, r.severity, Number(r.resolved), Number(r.automated), Number(r.total_ms) / MIN, Number(r.max_ms) / MIN]);
  const hostDays = async (tenantId = env.tenant.tenantId) =>
    (await env.store.db.selectFrom('incident_host_days').selectAll().where('tenant_id', '=', tenantId).orderBy('day').orderBy('host_key').execute())
      .map((r) => [Number(r.day), r.host_key, Number(r.resolved)]);
  const analytics = async (query: string) => {
    const response = await env.api('GET', `/api/v1/incidents/analytics?${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => NOW, rollupIntervalMs: 50 });
    const made = await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager' });
    expect(made.statusCode, made.body).toBe(201);
    integration = made.json().id;
  });

  afterAll(async () => {
    await env?.close();
  });

  it('recomputes the marked days without any analytics call, to exactly what the incidents hold', async () => {
    const tenant = env.tenant.tenantId;
    await env.store.db.insertInto('incidents').values([
      // 11-02: DiskFull twice (10 min on web-1, 30 min on web-2 by automation), CpuHigh once (5 min on web-1).
      incident(tenant, integration, 'd1', 'DiskFull', 'critical', 'web-1', '11-02T10:00', 10),
      incident(tenant, integration, 'd2', 'DiskFull', 'critical', 'web-2', '11-02T11:00', 30, 'automation'),
      incident(tenant, integration, 'c1', 'CpuHigh', 'warning', 'web-1', '11-02T12:00', 5),
      // 11-04: opened 11-03 23:50, resolved 11-04 00:10 (the resolution's day counts); a webhook's alarm without host or severity, 45 min.
      incident(tenant, integration, 'd3', 'DiskFull', 'critical', 'web-1', '11-03T23:50', 20, 'manual'),
      incident(tenant, null, 'w1', 'nginx down', null, null, '11-04T08:00', 45),
    ]).execute();
    expect((await stale()).sort()).toEqual([day('11-02'), day('11-04')]);

    await waitFor(async () => (await stale()).length === 0, 'the background to recompute the stale days');
    expect(await days()).toEqual([
      [day('11-02'), integration, 'CpuHigh', 'warning', 1, 0, 5, 5],
      [day('11-02'), integration, 'DiskFull', 'critical', 2, 1, 40, 30],
      [day('11-04'), integration, 'DiskFull', 'critical', 1, 0, 20, 20],
      [day('11-04'), '', 'nginx down', '', 1, 0, 45, 45],
    ]);
    expect(await hostDays()).toEqual([
      [day('11-02'), 'web-1', 2],
      [day('11-02'), 'web-2', 1],
      [day('11-04'), 'web-1', 1],
    ]);
    // The dashboard's call finds nothing left to recompute, and reads the same numbers.
    const view = await analytics('from=2026-11-01&to=2026-11-10');
    expect(view).toMatchObject({ resolved: 5, automated: 1, meanSeconds: (10 + 30 + 5 + 20 + 45) * 60 / 5 });
    expect(view.hosts).toEqual([{ hostname: 'web-1', count: 3 }, { hostname: 'web-2', count: 1 }]);
  });

  it('a change after the background ran is in the very next answer, and in the rollup soon after', async () => {
    const tenant = env.tenant.tenantId;
    await waitFor(async () => (await stale()).length === 0, 'nothing stale to begin with');
    // Resolved on 11-02 (60 min on web-2), and the 20-minute DiskFull of 11-04 re-dated to 11-05 (its 20 min become 24 h 20 min).
    await env.store.db.insertInto('incidents').values(incident(tenant, integration, 'd4', 'DiskFull', 'critical', 'web-2', '11-02T14:00', 60)).execute();
    await env.store.db.updateTable('incidents').set({ resolved_at: at('11-05T00:10') }).where('incident_key', '=', 'd3').execute();
    const view = await analytics('from=2026-11-01&to=2026-11-10&alarmName=DiskFull');
    expect(view.mttrByDay).toEqual([
      { day: '2026-11-02', count: 3, automated: 1, meanSeconds: (10 + 30 + 60) * 60 / 3 },
      { day: '2026-11-05', count: 1, automated: 0, meanSeconds: (24 * 60 + 20) * 60 },
    ]);
    // A day no request reads (10-20, outside the period): the background alone recomputes it.
    await env.store.db.insertInto('incidents').values(incident(tenant, integration, 'old', 'CpuHigh', 'warning', 'web-3', '10-20T09:00', 7)).execute();
    await waitFor(async () => (await stale()).length === 0, 'the background to recompute 10-20');
    expect((await days()).filter((row) => row[0] === day('10-20'))).toEqual([[day('10-20'), integration, 'CpuHigh', 'warning', 1, 0, 7, 7]]);
    expect((await hostDays()).filter((row) => row[0] === day('11-02'))).toEqual([[day('11-02'), 'web-1', 2], [day('11-02'), 'web-2', 2]]);
  });

  it('two nodes recomputing at once agree with the incidents: many days marked, both backgrounds on them', async () => {
    const other = await env.addTenant('other');
    const rows: IncidentRow[] = [];
    // 40 days of 10-01 … 11-09, three incidents a day: (d % 7 + 1) minutes on host h-(d % 3), then 2 and 3 minutes more on h-0.
    for (let d = 0; d < 40; d++) {
      const date = new Date(Date.parse('2026-10-01T06:00:00Z') + d * 86_400_000).toISOString().slice(5, 16);
      rows.push(incident(other.tenantId, integration, `m${d}-a`, 'Many', 'info', `h-${d % 3}`, date, (d % 7) + 1));
      rows.push(incident(other.tenantId, integration, `m${d}-b`, 'Many', 'info', 'h-0', date, (d % 7) + 3, 'automation'));
      rows.push(incident(other.tenantId, integration, `m${d}-c`, 'Many', 'info', 'h-0', date, (d % 7) + 4));
    }
    // A second node: on PostgreSQL its own pool on the same database (several nodes share one PostgreSQL,
    // docs/configuration.md); SQLite has one node, so a second pass on its one connection.
    const node2Store = dialect === 'postgres' ? env.database.open() : undefined;
    const node2 = new RollupRefresher({ db: (node2Store ?? env.store).db, dialect, logger: { info: () => undefined, error: () => undefined } });
    try {
      await env.store.db.insertInto('incidents').values(rows).execute();
      expect(await stale(other.tenantId)).toHaveLength(40);
      await Promise.all([node2.refreshAll(), env.app.context.rollups.refreshAll()]);
      await waitFor(async () => (await stale(other.tenantId)).length === 0, 'both backgrounds to be done');
    } finally {
      await node2.stop();
      await node2Store?.close();
    }
    const expected = Array.from({ length: 40 }, (_, d) => {
      const minutes = [(d % 7) + 1, (d % 7) + 3, (d % 7) + 4];
      return [day('10-01') + d, integration, 'Many', 'info', 3, 1, minutes[0]! + minutes[1]! + minutes[2]!, minutes[2]];
    });
    expect(await days(other.tenantId)).toEqual(expected);
    const hosts = (await hostDays(other.tenantId));
    expect(hosts.filter((row) => row[1] === 'h-0').map((row) => row[2])).toEqual(Array.from({ length: 40 }, (_, d) => (d % 3 === 0 ? 3 : 2)));
    expect(hosts.filter((row) => row[1] !== 'h-0')).toHaveLength(40 - 14);
  });

  it('an alarm seen without a severity and with an empty one is one rollup row, its numbers added up', async () => {
    // The day index orders null and '' apart (migration 0034); the rollup's key has '' for both (its primary key): one row.
    const other = await env.addTenant('blank severity');
    await env.store.db.insertInto('incidents').values([
      incident(other.tenantId, null, 'b1', 'Blank', null, 'web-1', '11-06T10:00', 12, 'automation'),
      incident(other.tenantId, null, 'b2', 'Blank', '', 'web-1', '11-06T11:00', 30),
      incident(other.tenantId, null, 'b3', 'Blank', '', 'web-2', '11-06T12:00', 6),
      incident(other.tenantId, integration, 'b4', 'Blank', null, 'web-2', '11-06T13:00', 8),
    ]).execute();
    await waitFor(async () => (await stale(other.tenantId)).length === 0, 'the background to recompute 11-06');
    // Ordered here by integration: the databases order '' and an id each their own way.
    expect((await days(other.tenantId)).sort((a, b) => String(a[1]).localeCompare(String(b[1])))).toEqual([
      [day('11-06'), '', 'Blank', '', 3, 1, 12 + 30 + 6, 30],
      [day('11-06'), integration, 'Blank', '', 1, 0, 8, 8],
    ]);
    expect(await hostDays(other.tenantId)).toEqual([[day('11-06'), 'web-1', 2], [day('11-06'), 'web-2', 2]]);
  });

  it('with the background stopped, a request recomputes the stale days it reads, and only those', async () => {
    await env.app.context.rollups.stop();
    const tenant = env.tenant.tenantId;
    await env.store.db.insertInto('incidents').values([
      incident(tenant, integration, 'late-1', 'Late', null, 'web-9', '11-09T10:00', 50),
      incident(tenant, integration, 'late-0', 'Late', null, 'web-9', '10-25T10:00', 5),
    ]).execute();
    expect((await stale()).sort()).toEqual([day('10-25'), day('11-09')]);
    const view = await analytics('from=2026-11-01&to=2026-11-10&alarmName=Late');
    expect(view.mttrByDay).toEqual([{ day: '2026-11-09', count: 1, automated: 0, meanSeconds: 3000 }]);
    expect(await stale()).toEqual([day('10-25')]);
  });

  it('a request finding many stale days reads them from the incidents, exactly, and leaves them to the background', async () => {
    // The background is stopped (the test before): 11-03 recomputed as it would, then three more days marked stale.
    const other = await env.addTenant('many stale days');
    const made = await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager' }, other.token);
    expect(made.statusCode, made.body).toBe(201);
    const integration: string = made.json().id;
    const stored = async (...rows: IncidentRow[]) => { await env.store.db.insertInto('incidents').values(rows).execute(); };
    await stored(incident(other.tenantId, integration, 'f1', 'Disk', 'critical', 'web-1', '11-03T10:00', 10));
    await refreshIncidentDays(env.store.db, dialect, other.tenantId, { wait: true });
    await stored(
      incident(other.tenantId, integration, 's1', 'Disk', 'critical', 'web-1', '11-05T10:00', 20, 'automation'),
      incident(other.tenantId, integration, 's2', 'Disk', 'critical', 'web-2', '11-06T10:00', 40),
      incident(other.tenantId, null, 's3', 'Disk', null, 'web-2', '11-07T10:00', 6),
      incident(other.tenantId, null, 's4', 'Disk', '', null, '11-07T11:00', 9),
    );
    expect(await stale(other.tenantId)).toEqual([day('11-05'), day('11-06'), day('11-07')]);
    const asTenant = async (query: string) => {
      const response = await env.api('GET', `/api/v1/incidents/analytics?${query}`, undefined, other.token);
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };
    const view = await asTenant('from=2026-11-01&to=2026-11-10');
    expect(view).toMatchObject({ resolved: 5, automated: 1, meanSeconds: (10 + 20 + 40 + 6 + 9) * 60 / 5 });
    expect(view.slowest).toEqual([{ alarmName: 'Disk', count: 5, meanSeconds: 17 * 60, p50Seconds: 10 * 60, p90Seconds: 32 * 60, maxSeconds: 40 * 60 }]);
    expect(view.mttrByDay).toEqual([
      { day: '2026-11-03', count: 1, automated: 0, meanSeconds: 600 },
      { day: '2026-11-05', count: 1, automated: 1, meanSeconds: 1200 },
      { day: '2026-11-06', count: 1, automated: 0, meanSeconds: 2400 },
      { day: '2026-11-07', count: 2, automated: 0, meanSeconds: 450 },
    ]);
    // web-1 once fresh (11-03), once stale; web-2 twice stale: the rollup's days and the incidents' added up.
    expect(view.hosts).toEqual([{ hostname: 'web-1', count: 2 }, { hostname: 'web-2', count: 2 }]);
    // Filters on the rollup's keys: the webhook's (no integration) with no severity, null and '' alike.
    expect((await asTenant(`from=2026-11-01&to=2026-11-10&integrationId=${integration}`)).resolved).toBe(3);
    expect((await asTenant('from=2026-11-01&to=2026-11-10&severity=critical')).mttrByDay.map((d: { day: string }) => d.day)).toEqual(['2026-11-03', '2026-11-05', '2026-11-06']);
    // Nothing was written: the days stay the background's.
    expect(await stale(other.tenantId)).toEqual([day('11-05'), day('11-06'), day('11-07')]);
    await refreshIncidentDays(env.store.db, dialect, other.tenantId, { wait: true });
    expect(await stale(other.tenantId)).toEqual([]);
    expect(await asTenant('from=2026-11-01&to=2026-11-10')).toEqual(view);
  });

  it('marks exactly the days a change can move: a resolution, a re-dated or regrouped resolved incident (old day and new), a deletion', async () => {
    // The background is stopped (two tests before). Each step begins with nothing marked.
    const other = await env.addTenant('stale marks');
    const incidents = () => env.store.db.updateTable('incidents').where('tenant_id', '=', other.tenantId).where('incident_key', '=', 'm1');
    const marked = async () => {
      const days = await stale(other.tenantId);
      await refreshIncidentDays(env.store.db, dialect, other.tenantId, { wait: true });
      return days;
    };
    const open: IncidentRow = { ...incident(other.tenantId, integration, 'm1', 'Disk', 'critical', 'web-1', '11-06T10:00', 0), state: 'open', resolved_at: null, resolved_by: null };
    await env.store.db.insertInto('incidents').values(open).execute();
    expect(await marked()).toEqual([]);
    await incidents().set({ last_seen_at: at('11-06T11:00'), severity: 'warning' }).execute();
    expect(await marked()).toEqual([]);
    await incidents().set({ state: 'resolved', resolved_at: at('11-07T10:00'), resolved_by: 'tool' }).execute();
    expect(await marked()).toEqual([day('11-07')]);
    // What the rollups do not read leaves no mark; a new day, or a new group on the same day, marks both days.
    await incidents().set({ last_seen_at: at('11-07T11:00'), occurrences: 2 }).execute();
    expect(await marked()).toEqual([]);
    await incidents().set({ resolved_at: at('11-08T10:00') }).execute();
    expect(await marked()).toEqual([day('11-07'), day('11-08')]);
    await incidents().set({ alarm_name: 'DiskFull' }).execute();
    expect(await marked()).toEqual([day('11-08')]);
    // A day marked already takes no second mark on SQLite (on PostgreSQL each change leaves its own: migration 0044).
    await incidents().set({ severity: 'critical' }).execute();
    await incidents().set({ resolved_by: 'manual' }).execute();
    const marks = await env.store.db.selectFrom('incident_days_stale').select('day').where('tenant_id', '=', other.tenantId).execute();
    expect(marks.length).toBe(dialect === 'sqlite' ? 1 : 2);
    expect(await marked()).toEqual([day('11-08')]);
    await env.store.db.deleteFrom('incidents').where('tenant_id', '=', other.tenantId).execute();
    expect(await marked()).toEqual([day('11-08')]);
    expect((await env.api('GET', '/api/v1/incidents/analytics?from=2026-11-01&to=2026-11-10', undefined, other.token)).json()).toMatchObject({ resolved: 0 });
  });
});
