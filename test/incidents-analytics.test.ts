import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { hostKey } from '../src/engine/decide.js';
import { applyObservations } from '../src/incidents/apply.js';
import { percentile } from '../src/incidents/analytics.js';
import { ROLLUP_LOCK_CLASS } from '../src/incidents/rollup.js';
import { idAt } from '../src/store/ids.js';
import type { IncidentRow } from '../src/store/schema.js';
import { scriptRule, startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';
import { expectProblem } from './support/problems.js';

/*
 * GET /incidents/analytics and /incidents/candidates over a seeded set of incidents whose every
 * expected number is worked out by hand below (docs/incidents.md#analytics), on both databases.
 * The incidents are written as rows, as the ingest and the imports write them; the day rollup
 * (incident_days) is kept by the database's triggers and recomputed at the read.
 */

const NOW = Date.parse('2026-11-10T12:00:00Z');
const MIN = 60_000;
const at = (text: string) => Date.parse(`2026-${text}:00Z`);

interface Seed {
  key: string;
  integration: 'A' | 'B';
  alarm: string;
  severity: string | null;
  host: string | null;
  opened: string;
  minutes: number;
  by?: 'tool' | 'automation' | 'manual';
  open?: boolean;
}

/*
 * The period 2026-11-01 … 2026-11-10. Durations in minutes; the UTC day that counts is the day
 * the incident resolved.
 *
 * alarm (integration, severity)   incidents (host, resolved day, minutes, by)        n  mean    p50   p90   max
 * DiskFull (A, critical)          web-1 02 10; web-1 02 30 auto; web-2 04 20 (opened   4  30 min  25    51    60
 *                                 03 23:50: across midnight); web-1 05 60               sorted 10 20 30 60: p50 h=1.5 → 25, p90 h=2.7 → 30+0.7×30 = 51
 * CpuHigh (A, warning)            web-3 02 5; web-3 03 5 auto; web-1 04 5 auto;         4  5 min   5     5     5
 *                                 web-2 06 5
 * nginx down (B, critical)        db-1 03 120; db-1 07 60 (resolved 02:00); db-1 08     3  70 min  60    108   120
 *                                 30 auto                                                 sorted 30 60 120: p90 h=1.8 → 60+0.8×60 = 108
 * HostOutOfMemory (B, none)       no host, resolved 05 00:00:00 exactly; db-2 06 40;    3  40 min  40    40    40
 *                                 db-2 06 40
 * CertExpiring (A, critical)      lb-1 08 15; lb-1 09 45                                2  30 min  30    42    45
 *                                                                                         p50 h=0.5 → 15+0.5×30 = 30, p90 h=0.9 → 15+0.9×30 = 42
 * Outside: DiskFull resolved 10-31 23:30; DiskFull resolved 11-11 00:30; one open; another tenant's.
 */
const SEEDS: Seed[] = [
  { key: 'd1', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'WEB-1', opened: '11-02T10:00', minutes: 10 },
  { key: 'd2', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'web-1', opened: '11-02T20:00', minutes: 30, by: 'automation' },
  { key: 'd3', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'web-2', opened: '11-03T23:50', minutes: 20 },
  { key: 'd4', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'web-1', opened: '11-05T08:00', minutes: 60 },
  { key: 'c1', integration: 'A', alarm: 'CpuHigh', severity: 'warning', host: 'web-3', opened: '11-02T12:00', minutes: 5 },
  { key: 'c2', integration: 'A', alarm: 'CpuHigh', severity: 'warning', host: 'web-3', opened: '11-03T12:00', minutes: 5, by: 'automation' },
  { key: 'c3', integration: 'A', alarm: 'CpuHigh', severity: 'warning', host: 'web-1', opened: '11-04T12:00', minutes: 5, by: 'automation' },
  { key: 'c4', integration: 'A', alarm: 'CpuHigh', severity: 'warning', host: 'web-2', opened: '11-06T12:00', minutes: 5 },
  { key: 's1', integration: 'B', alarm: 'nginx down', severity: 'critical', host: 'db-1', opened: '11-03T01:00', minutes: 120 },
  { key: 's2', integration: 'B', alarm: 'nginx down', severity: 'critical', host: 'db-1', opened: '11-07T01:00', minutes: 60 },
  { key: 's3', integration: 'B', alarm: 'nginx down', severity: 'critical', host: 'db-1', opened: '11-08T01:00', minutes: 30, by: 'automation' },
  { key: 'm1', integration: 'B', alarm: 'HostOutOfMemory', severity: null, host: null, opened: '11-04T23:20', minutes: 40 },
  { key: 'm2', integration: 'B', alarm: 'HostOutOfMemory', severity: null, host: 'db-2', opened: '11-06T00:00', minutes: 40 },
  { key: 'm3', integration: 'B', alarm: 'HostOutOfMemory', severity: null, host: 'db-2', opened: '11-06T03:00', minutes: 40 },
  { key: 'e1', integration: 'A', alarm: 'CertExpiring', severity: 'critical', host: 'lb-1', opened: '11-08T10:00', minutes: 15 },
  { key: 'e2', integration: 'A', alarm: 'CertExpiring', severity: 'critical', host: 'lb-1', opened: '11-09T10:00', minutes: 45 },
  // Outside the period, or not resolved.
  { key: 'x1', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'web-9', opened: '10-31T23:00', minutes: 30 },
  { key: 'x2', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'web-9', opened: '11-10T23:50', minutes: 40 },
  { key: 'x3', integration: 'A', alarm: 'DiskFull', severity: 'critical', host: 'web-9', opened: '11-09T08:00', minutes: 0, open: true },
];

const PERIOD = 'from=2026-11-01&to=2026-11-10';

function rowOf(tenantId: string, integrationId: string, seed: Seed): IncidentRow {
  const opened = at(seed.opened);
  const resolved = seed.open ? null : opened + Math.round(seed.minutes * MIN);
  return {
    id: idAt(opened), tenant_id: tenantId, integration_id: integrationId, incident_key: seed.key, state: seed.open ? 'open' : 'resolved',
    alarm_name: seed.alarm, severity: seed.severity, hostname: seed.host, host_key: seed.host ? hostKey(seed.host) : '',
    opened_at: opened, resolved_at: resolved, last_seen_at: resolved ?? opened, last_fired_at: opened, last_fingerprint: null, occurrences: 1,
    resolved_by: seed.open ? null : seed.by ?? 'tool', resolved_by_user: null, last_fix_at: null, rule_ids: '[]', execution_ids: '[]', execution_count: 0,
    last_alert_id: null, alert_count: 0, last_event_id: null, event_count: 0,
  };
}

describe.each(testDialects())('incident analytics on %s', (dialect) => {
  let env: TestEnv;
  const integrations = { A: '', B: '' };
  const rules = { nginx: '', cpu: '', diskWarning: '', certOff: '', deleted: '' };
  let other: { tenantId: string; token: string };

  const get = async (path: string, token?: string) => {
    const response = await env.api('GET', `/api/v1/incidents/${path}`, undefined, token);
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => NOW });
    for (const name of ['A', 'B'] as const) {
      const made = await env.api('POST', '/api/v1/integrations', { name: `prometheus ${name}`, type: 'alertmanager' });
      expect(made.statusCode, made.body).toBe(201);
      integrations[name] = made.json().id;
    }
    const alertRule = async (integration: 'A' | 'B', trigger: Record<string, unknown>, createdAt: string, extra: Record<string, unknown> = {}) => {
      const made = await env.api('POST', '/api/v1/rules', scriptRule({ trigger: { type: 'alert', integrationId: integrations[integration], ...trigger }, ...extra }));
      expect(made.statusCode, made.body).toBe(201);
      const id = made.json().id as string;
      await env.store.db.updateTable('rules').set({ created_at: Date.parse(createdAt) }).where('id', '=', id).execute();
      return id;
    };
    rules.cpu = await alertRule('A', { alarmName: 'Cpu*' }, '2026-10-01T00:00:00Z', { name: 'cpu' });
    rules.nginx = await alertRule('B', { alarmName: 'nginx*' }, '2026-11-07T12:00:00Z', { name: 'nginx' });
    rules.diskWarning = await alertRule('A', { alarmName: 'DiskFull', severity: ['warning'] }, '2026-11-02T00:00:00Z', { name: 'disk warnings' });
    rules.certOff = await alertRule('A', { alarmName: 'Cert*' }, '2026-11-20T00:00:00Z', { name: 'certs', enabled: false });
    rules.deleted = await alertRule('A', { alarmName: 'DiskFull' }, '2026-11-03T00:00:00Z', { name: 'gone' });
    expect((await env.api('DELETE', `/api/v1/rules/${rules.deleted}`)).statusCode).toBe(204);

    await env.store.db.insertInto('incidents').values(SEEDS.map((seed) => rowOf(env.tenant.tenantId, integrations[seed.integration], seed))).execute();

    // Another tenant: the same alarms on the same days, ten times over.
    other = await env.addTenant('other');
    const theirs = SEEDS.flatMap((seed) => Array.from({ length: 10 }, (_, i) => rowOf(other.tenantId, integrations[seed.integration], { ...seed, key: `${seed.key}-${i}`, host: 'their-host' })));
    await env.store.db.insertInto('incidents').values(theirs).execute();
  });

  afterAll(async () => {
    await env?.close();
  });

  it('counts, ranks and measures the period by hand', async () => {
    const view = await get(`analytics?${PERIOD}`);
    expect(view.period).toEqual({ from: '2026-11-01', to: '2026-11-10', days: 10 });
    // 16 resolved; automation: d2, c2, c3, s3. All minutes: 120 + 20 + 210 + 120 + 60 = 530 → 31,800 s / 16.
    expect(view).toMatchObject({ resolved: 16, automated: 4, automatedShare: 0.25, meanSeconds: 1987.5 });
    // Ties: CpuHigh and DiskFull 4 each, by name; HostOutOfMemory before nginx down ("H" < "n").
    expect(view.frequent).toEqual([
      { alarmName: 'CpuHigh', count: 4 },
      { alarmName: 'DiskFull', count: 4 },
      { alarmName: 'HostOutOfMemory', count: 3 },
      { alarmName: 'nginx down', count: 3 },
      { alarmName: 'CertExpiring', count: 2 },
    ]);
    // DiskFull and CertExpiring both average 30 min: the one with more incidents first.
    expect(view.slowest).toEqual([
      { alarmName: 'nginx down', count: 3, meanSeconds: 4200, p50Seconds: 3600, p90Seconds: 6480, maxSeconds: 7200 },
      { alarmName: 'HostOutOfMemory', count: 3, meanSeconds: 2400, p50Seconds: 2400, p90Seconds: 2400, maxSeconds: 2400 },
      { alarmName: 'DiskFull', count: 4, meanSeconds: 1800, p50Seconds: 1500, p90Seconds: 3060, maxSeconds: 3600 },
      { alarmName: 'CertExpiring', count: 2, meanSeconds: 1800, p50Seconds: 1800, p90Seconds: 2520, maxSeconds: 2700 },
      { alarmName: 'CpuHigh', count: 4, meanSeconds: 300, p50Seconds: 300, p90Seconds: 300, maxSeconds: 300 },
    ]);
    expect(view.mttrByDay).toEqual([
      { day: '2026-11-02', count: 3, automated: 1, meanSeconds: 900 }, // d1 10, d2 30, c1 5: 45 / 3 min
      { day: '2026-11-03', count: 2, automated: 1, meanSeconds: 3750 }, // c2 5, s1 120: 62.5 min
      { day: '2026-11-04', count: 2, automated: 1, meanSeconds: 750 }, // d3 20 (opened the 3rd), c3 5: 12.5 min
      { day: '2026-11-05', count: 2, automated: 0, meanSeconds: 3000 }, // m1 40 (at 00:00:00.000 exactly), d4 60
      { day: '2026-11-06', count: 3, automated: 0, meanSeconds: 1700 }, // c4 5, m2 40, m3 40: 85 / 3 min
      { day: '2026-11-07', count: 1, automated: 0, meanSeconds: 3600 }, // s2
      { day: '2026-11-08', count: 2, automated: 1, meanSeconds: 1350 }, // s3 30, e1 15
      { day: '2026-11-09', count: 1, automated: 0, meanSeconds: 2700 }, // e2
    ]);
    // web-1: d1 (as WEB-1), d2, d4, c3; ties of 2 by host key; m1 has no host and is not counted.
    expect(view.hosts).toEqual([
      { hostname: 'web-1', count: 4 },
      { hostname: 'db-1', count: 3 },
      { hostname: 'db-2', count: 2 },
      { hostname: 'lb-1', count: 2 },
      { hostname: 'web-2', count: 2 },
      { hostname: 'web-3', count: 2 },
    ]);
    expect((await get(`analytics?${PERIOD}&limit=2`)).hosts).toEqual([{ hostname: 'web-1', count: 4 }, { hostname: 'db-1', count: 3 }]);
  });

  it('before and after each alert rule: split at the moment it was created', async () => {
    const view = await get(`analytics?${PERIOD}`);
    expect(view.rules).toEqual([
      // Created before the period: every CpuHigh incident is after.
      { ruleId: rules.cpu, ruleName: 'cpu', enabled: true, integrationId: integrations.A, alarmName: 'CpuHigh', createdAt: '2026-10-01T00:00:00.000Z', before: { count: 0, meanSeconds: null }, after: { count: 4, meanSeconds: 300 } },
      // Created 11-07 12:00: s1 (120) and s2 (60, resolved 02:00 that day) before, s3 (30) after.
      { ruleId: rules.nginx, ruleName: 'nginx', enabled: true, integrationId: integrations.B, alarmName: 'nginx down', createdAt: '2026-11-07T12:00:00.000Z', before: { count: 2, meanSeconds: 5400 }, after: { count: 1, meanSeconds: 1800 } },
      // Off, and created after the period: all before. (The warning-only DiskFull rule covers none of these critical ones; the deleted rule is gone.)
      { ruleId: rules.certOff, ruleName: 'certs', enabled: false, integrationId: integrations.A, alarmName: 'CertExpiring', createdAt: '2026-11-20T00:00:00.000Z', before: { count: 2, meanSeconds: 1800 }, after: { count: 0, meanSeconds: null } },
    ]);
  });

  it('filters: one host (any case), one integration, one alarm, one severity', async () => {
    const host = await get(`analytics?${PERIOD}&hostname=WEB-1`);
    // d1 10, d2 30 (auto), d4 60; c3 5 (auto).
    expect(host).toMatchObject({ resolved: 4, automated: 2, automatedShare: 0.5, hosts: [{ hostname: 'web-1', count: 4 }] });
    expect(host.slowest).toEqual([
      // sorted 10 30 60: p50 30, p90 h=1.8 → 30 + 0.8 × 30 = 54 min.
      { alarmName: 'DiskFull', count: 3, meanSeconds: 2000, p50Seconds: 1800, p90Seconds: 3240, maxSeconds: 3600 },
      { alarmName: 'CpuHigh', count: 1, meanSeconds: 300, p50Seconds: 300, p90Seconds: 300, maxSeconds: 300 },
    ]);
    expect(host.mttrByDay.map((d: { day: string; count: number }) => [d.day, d.count])).toEqual([['2026-11-02', 2], ['2026-11-04', 1], ['2026-11-05', 1]]);
    expect(host.rules).toMatchObject([{ ruleId: rules.cpu, before: { count: 0 }, after: { count: 1, meanSeconds: 300 } }]);

    expect((await get(`analytics?${PERIOD}&integrationId=${integrations.B}`)).frequent).toEqual([{ alarmName: 'HostOutOfMemory', count: 3 }, { alarmName: 'nginx down', count: 3 }]);
    expect((await get(`analytics?${PERIOD}&alarmName=DiskFull`)).hosts).toEqual([{ hostname: 'web-1', count: 3 }, { hostname: 'web-2', count: 1 }]);
    const critical = await get(`analytics?${PERIOD}&severity=critical`);
    expect(critical).toMatchObject({ resolved: 9, frequent: [{ alarmName: 'DiskFull', count: 4 }, { alarmName: 'nginx down', count: 3 }, { alarmName: 'CertExpiring', count: 2 }] });
    // Filters that match nothing: an empty answer, not an error.
    expect(await get(`analytics?${PERIOD}&hostname=nowhere`)).toMatchObject({ resolved: 0, automatedShare: null, frequent: [], slowest: [], hosts: [], rules: [] });
  });

  it('the default period is the 30 days ending today (UTC): the incident of 10-31 is in, the one resolving tomorrow is not', async () => {
    const view = await get('analytics');
    expect(view.period).toEqual({ from: '2026-10-12', to: '2026-11-10', days: 30 });
    expect(view.resolved).toBe(17);
    expect(view.mttrByDay[0]).toEqual({ day: '2026-10-31', count: 1, automated: 0, meanSeconds: 1800 });
  });

  it('automation candidates: frequent, slow and not covered by an enabled rule, with what the wizard needs', async () => {
    const { period, items } = await get(`candidates?${PERIOD}`);
    expect(period).toEqual({ from: '2026-11-01', to: '2026-11-10', days: 10 });
    // CpuHigh and nginx down have enabled rules; CertExpiring has 2 incidents (< 3). DiskFull (4 × 30 min) and
    // HostOutOfMemory (3 × 40 min) both total 120 min: the one with more incidents first. The warning-only rule leaves DiskFull's critical alerts uncovered.
    expect(items).toEqual([
      {
        integrationId: integrations.A, alarmName: 'DiskFull', count: 4, meanSeconds: 1800, totalSeconds: 7200, severities: ['critical'], kind: 'disk', rulesOff: [],
        why: 'fired 4 times in 10 days, resolved in 30 min on average, no rule acts on it',
        typicalHostname: 'web-1', // 3 of its 4 incidents, the latest named web-1
        suggestion: {
          name: 'DiskFull: disk cleanup',
          trigger: { type: 'alert', integrationId: integrations.A, alarmName: 'DiskFull' },
          target: { type: 'trigger_host' },
          starterRunbook: { slug: 'disk-cleanup', name: 'disk cleanup', flavour: 'autofix', why: expect.any(String), labelDefaults: [], prelude: '' },
          labels: [], // no alert of it was taken: its incidents were imported
          flapping: { enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600 },
          actionLimit: { max: 3, windowSeconds: 3600, onLimit: 'escalate' },
        },
      },
      expect.objectContaining({
        integrationId: integrations.B, alarmName: 'HostOutOfMemory', count: 3, meanSeconds: 2400, totalSeconds: 7200, severities: [], kind: 'memory',
        why: 'fired 3 times in 10 days, resolved in 40 min on average, no rule acts on it', typicalHostname: 'db-2',
        suggestion: expect.objectContaining({ starterRunbook: expect.objectContaining({ slug: 'top-memory', flavour: 'diagnostics' }) }),
      }),
    ]);
    const two = await get(`candidates?${PERIOD}&minCount=2&minMeanSeconds=1800`);
    expect(two.items.map((c: { alarmName: string }) => c.alarmName)).toEqual(['DiskFull', 'HostOutOfMemory', 'CertExpiring']);
    expect(two.items[2]).toMatchObject({ rulesOff: [{ id: rules.certOff, name: 'certs' }], why: 'fired 2 times in 10 days, resolved in 30 min on average, no rule acts on it; rule "certs" matches it but is off' });
    expect((await get(`candidates?${PERIOD}&minMeanSeconds=2000`)).items.map((c: { alarmName: string }) => c.alarmName)).toEqual(['HostOutOfMemory']);
  });

  it('gives the wizard the label names of the alarm’s newest alert, and the starter variables they name', async () => {
    const incidentOf = async (tenantId: string, key: string) =>
      (await env.store.db.selectFrom('incidents').select('id').where('tenant_id', '=', tenantId).where('incident_key', '=', key).executeTakeFirstOrThrow()).id;
    const alert = async (tenantId: string, key: string, receivedAt: string, labels: Record<string, string>) => ({
      id: idAt(at(receivedAt)), tenant_id: tenantId, integration_id: integrations.A, received_at: at(receivedAt), source: 'alertmanager', state: 'firing',
      fingerprint: key, alarm_name: 'CertExpiring', host_name: 'lb-1', severity: 'critical', labels: JSON.stringify(labels), annotations: '{}', events: '[]',
      incident_id: await incidentOf(tenantId, key),
    });
    // The newest incident's newest alert names the endpoint; the older ones name a file; another tenant's is newer still.
    await env.store.db.insertInto('alerts').values([
      await alert(env.tenant.tenantId, 'e1', '11-08T10:00', { alertname: 'CertExpiring', filepath: '/etc/ssl/a.pem' }),
      await alert(env.tenant.tenantId, 'e2', '11-09T10:00', { alertname: 'CertExpiring', filepath: '/etc/ssl/a.pem' }),
      await alert(env.tenant.tenantId, 'e2', '11-09T10:05', { alertname: 'CertExpiring', instance: 'lb-1:443', job: 'blackbox' }),
      await alert(other.tenantId, 'e2-0', '11-09T11:00', { alertname: 'CertExpiring', cert_file: '/etc/ssl/b.pem' }),
    ]).execute();
    // Each incident's row names its newest alert, as the ingest keeps it (migration 0032).
    await sql`update incidents set last_alert_id = (select max(id) from alerts where alerts.incident_id = incidents.id)`.execute(env.store.db);
    const [cert] = (await get(`candidates?${PERIOD}&alarmName=CertExpiring&minCount=1`)).items;
    expect(cert.suggestion.labels).toEqual(['alertname', 'instance', 'job']);
    expect(cert.suggestion.starterRunbook).toMatchObject({
      slug: 'cert-expiry',
      labelDefaults: [{ variable: 'CertEndpoints', labels: ['LABEL_instance'] }],
      prelude: '# from the alert\'s labels unless set (pitcrew one-click automation)\n: "${CertEndpoints:=${LABEL_instance:-}}"\n',
    });
    const [theirs] = (await get(`candidates?${PERIOD}&alarmName=CertExpiring&minCount=1`, other.token)).items;
    expect(theirs.suggestion.starterRunbook.labelDefaults).toEqual([{ variable: 'CertFiles', labels: ['LABEL_cert_file'] }]);
  });

  it('one tenant never sees another\'s incidents', async () => {
    const mine = await get(`analytics?${PERIOD}`);
    const theirs = await get(`analytics?${PERIOD}`, other.token);
    expect(mine.resolved).toBe(16);
    expect(theirs).toMatchObject({ resolved: 160, automated: 40, hosts: [{ hostname: 'their-host', count: 160 }], rules: [] });
    expect(theirs.frequent[0]).toEqual({ alarmName: 'CpuHigh', count: 40 });
    // Our rules do not cover their alarms: all five are candidates, by total time (minutes): nginx down 2,100;
    // DiskFull and HostOutOfMemory 1,200 (40 incidents before 30); CertExpiring 600; CpuHigh 200 (5 min each: at the threshold).
    expect((await get(`candidates?${PERIOD}`, other.token)).items.map((c: { alarmName: string }) => c.alarmName)).toEqual(['nginx down', 'DiskFull', 'HostOutOfMemory', 'CertExpiring', 'CpuHigh']);
  });

  it('keeps up as incidents are resolved, re-dated and deleted, whoever writes them', async () => {
    const integration = integrations.A;
    const before = await get(`analytics?${PERIOD}&alarmName=Late`);
    expect(before.resolved).toBe(0);
    // The imports' writer resolves an incident: opened 11-09 10:00, resolved 11-09 10:50.
    await applyObservations(env.store.db, env.tenant.tenantId, integration, [
      { incidentKey: 'late', alarmName: 'Late', hostname: 'web-5', severity: null, state: 'firing', at: at('11-09T10:00') },
    ], at('11-09T10:00'));
    expect((await get(`analytics?${PERIOD}&alarmName=Late`)).resolved).toBe(0); // open: not counted
    await applyObservations(env.store.db, env.tenant.tenantId, integration, [
      { incidentKey: 'late', alarmName: 'Late', hostname: 'web-5', severity: null, state: 'resolved', at: at('11-09T10:50') },
    ], at('11-09T10:50'));
    expect((await get(`analytics?${PERIOD}&alarmName=Late`)).mttrByDay).toEqual([{ day: '2026-11-09', count: 1, automated: 0, meanSeconds: 3000 }]);

    // Re-dated to another day: both days change.
    await env.store.db.updateTable('incidents').set({ resolved_at: at('11-10T10:30') }).where('incident_key', '=', 'late').execute();
    expect((await get(`analytics?${PERIOD}&alarmName=Late`)).mttrByDay).toEqual([{ day: '2026-11-10', count: 1, automated: 0, meanSeconds: 88_200 }]);
    // Deleted (as retention does).
    await env.store.db.deleteFrom('incidents').where('incident_key', '=', 'late').execute();
    expect((await get(`analytics?${PERIOD}&alarmName=Late`)).resolved).toBe(0);
    // And the rollup holds what the incidents hold, day by day, once the background has recomputed
    // the days outside the period too (a request recomputes only the days it reads).
    await waitFor(async () => (await env.store.db.selectFrom('incident_days_stale').select('day').where('tenant_id', '=', env.tenant.tenantId).execute()).length === 0, 'the background to recompute every stale day');
    const days = await env.store.db.selectFrom('incident_days').selectAll().where('tenant_id', '=', env.tenant.tenantId).orderBy('day').orderBy('alarm_name').execute();
    expect(days.map((d) => [d.alarm_name, Number(d.resolved)])).not.toContainEqual(['Late', 1]);
    expect(days.reduce((sum, d) => sum + Number(d.resolved), 0)).toBe(SEEDS.filter((s) => !s.open).length);
  });

  // SQLite cannot interleave them: a recomputation holds the write lock (rollup.ts).
  if (dialect === 'postgres') {
    it('a change made while its day is recomputed leaves its own mark, and the analytics count it (migration 0044)', async () => {
      const tenant = await env.addTenant('recomputed meanwhile');
      await env.store.db.insertInto('incidents').values(rowOf(tenant.tenantId, integrations.A, { key: 'meanwhile', integration: 'A', alarm: 'Meanwhile', severity: null, host: 'web-9', opened: '11-05T10:00', minutes: 30 })).execute();
      expect((await get(`analytics?${PERIOD}&alarmName=Meanwhile`, tenant.token)).resolved).toBe(1);
      // The tenant's rollup lock held throughout, as a recomputation holds it: the background leaves the tenant alone.
      await env.store.db.transaction().execute(async (held) => {
        await sql`select pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, hashtext(${tenant.tenantId}))`.execute(held);
        // Its day is marked (committed): a writer's trigger sees the mark.
        await env.store.db.insertInto('incident_days_stale').values({ tenant_id: tenant.tenantId, day: Math.floor(at('11-05T10:30') / 86_400_000) }).execute();
        // A recomputation has deleted the mark, not yet committed, and read the incidents, when a writer deletes the incident.
        await env.store.db.transaction().execute(async (recomputing) => {
          await recomputing.deleteFrom('incident_days_stale').where('tenant_id', '=', tenant.tenantId).execute();
          await env.store.db.deleteFrom('incidents').where('tenant_id', '=', tenant.tenantId).execute();
        });
      });
      expect(await env.store.db.selectFrom('incident_days_stale').select('day').where('tenant_id', '=', tenant.tenantId).execute()).toHaveLength(1);
      expect((await get(`analytics?${PERIOD}&alarmName=Meanwhile`, tenant.token)).resolved).toBe(0);
    });
  }

  it('p50 and p90 from the database are the pure definition\'s, to the millisecond, over many values', async () => {
    const minutes = Array.from({ length: 37 }, (_, i) => ((i * 7919) % 97) + i / 7);
    await env.store.db.insertInto('incidents').values(minutes.map((m, i) => rowOf(env.tenant.tenantId, integrations.A, {
      key: `spread-${i}`, integration: 'A', alarm: 'Spread', severity: null, host: 'h', opened: `11-0${1 + (i % 9)}T0${i % 10}:00`, minutes: m,
    }))).execute();
    const [spread] = (await get(`analytics?${PERIOD}&alarmName=Spread`)).slowest;
    const sorted = minutes.map((m) => Math.round(m * MIN)).sort((a, b) => a - b);
    expect(spread.p50Seconds).toBeCloseTo(percentile(sorted, 0.5) / 1000, 3);
    expect(spread.p90Seconds).toBeCloseTo(percentile(sorted, 0.9) / 1000, 3);
    await env.store.db.deleteFrom('incidents').where('alarm_name', '=', 'Spread').execute();
  });

  it('a period that names no day, or one backwards, is a 400 that says what to give', async () => {
    const bad = expectProblem(await env.api('GET', '/api/v1/incidents/analytics?from=last-week'), 400, 'PITCREW_ERR_VALIDATION');
    expect(bad.detail).toMatch(/from "last-week" is not a date: give a day as 2026-11-30/);
    expect(bad.errors).toEqual([{ path: '/querystring/from', message: expect.any(String) }]);
    const backwards = expectProblem(await env.api('GET', '/api/v1/incidents/candidates?from=2026-11-10&to=2026-11-01'), 400, 'PITCREW_ERR_VALIDATION');
    expect(backwards.detail).toMatch(/swap them/);
    expectProblem(await env.api('GET', '/api/v1/incidents/analytics?limit=0'), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('GET', '/api/v1/incidents/analytics?integrationId=nope'), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('GET', '/api/v1/incidents/analytics', undefined, 'not-a-token'), 401, 'PITCREW_ERR_UNAUTHENTICATED');
  });

  it('filter values are values, never SQL: a name with quotes matches nothing', async () => {
    const view = await get(`analytics?${PERIOD}&alarmName=${encodeURIComponent("x' or '1'='1")}&hostname=${encodeURIComponent("a'--")}`);
    expect(view.resolved).toBe(0);
  });
});
