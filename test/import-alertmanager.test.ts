import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { applyObservations } from '../src/incidents/apply.js';
import type { ObservationSink } from '../src/imports/sink.js';
import { alertLabels, labelSetFingerprint } from '../src/integrations/alertmanager/fingerprint.js';
import { alertmanagerImportNeeds } from '../src/integrations/alertmanager/import.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { readOnlyFetch } from './support/import-run.js';
import { createObservationTable, storedObservations, tableSink, type StoredObservation } from './support/observation-table.js';
import { alertingTo, assertToolsInstalled, PROMETHEUS, startAlertmanager, startServing, type ToolProcess } from './support/prometheus.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 38.2 with the real tools: Debian's Prometheus evaluates two alerts (one for two instances,
 * with a label value beyond ASCII), real Alertmanager holds them and notifies the integration's URL.
 * The fingerprint pitcrew computes from a Prometheus `ALERTS` series is the one Alertmanager gives
 * the same alert; an import reads the history from Prometheus (`query_range` over ALERTS, the raw
 * samples at each span's ends: a span that fired and resolved before the import is both, at
 * Alertmanager's startsAt and endsAt) and what is open from Alertmanager's GET /api/v2/alerts, and a
 * second import applies only what changed. Each alert is one incident (GET /api/v1/incidents),
 * whether pitcrew heard of it by the webhook, by the import, or both.
 */
const STEP_MS = 60_000;
const DISK = 'PitcrewImportDiskFull';
const FLAP = 'PitcrewImportFlap';

const rules = (diskInstances: string[], flapping: boolean) => `groups:
  - name: pitcrew-import
    interval: 1s
    rules:
      - alert: ${DISK}
        expr: ${diskInstances.map((i) => `label_replace(vector(1), "instance", "${i}", "", "")`).join(' or ') || 'vector(1) > 2'}
        for: 0s
        labels:
          severity: critical
          team: "opérations"
      - alert: ${FLAP}
        expr: ${flapping ? 'label_replace(vector(1), "instance", "db-1:9100", "", "")' : 'vector(1) > 2'}
        labels:
          severity: warning
`;

interface AmAlert {
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
  endsAt: string;
}

/** The observations kept in the test's table (for the checks below) and applied to incidents, in the import's transaction. */
const tableAndIncidents: ObservationSink = async (db, tenantId, integrationId, observations, receivedAt, options) => {
  await tableSink(db, tenantId, integrationId, observations, receivedAt, options);
  await applyObservations(db, tenantId, integrationId, observations, receivedAt, options);
};

describe.each(testDialects())('importing from a real Prometheus and Alertmanager on %s', (dialect) => {
  let database: TestDatabase;
  let integrationId: string;
  let env: TestEnv;
  let work: string;
  const tools: Record<string, ToolProcess> = {};
  let prometheusUrl: string;
  let alertmanagerUrl: string;

  beforeAll(async () => {
    assertToolsInstalled();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-import-am-'));
    database = await createTestDatabase(dialect);
    const store = database.open();
    await createObservationTable(store);
    await store.close();
    env = await startTestEnv(dialect, { database, importSink: tableAndIncidents, listen: true });

    // The tools' ports are known once each is serving (startServing), so the integration gets its URLs after.
    const made = await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager', config: { prometheusStepSeconds: 1 } });
    expect(made.statusCode, made.body).toBe(201);
    integrationId = made.json().id as string;
    const webhookUrl = `${env.listening!.httpUrl}/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${integrationId}`;
    const alertmanager = await startAlertmanager(work, webhookUrl, { groupBy: ['alertname', 'instance'], repeatInterval: '1h' }, STEP_MS);
    tools.alertmanager = alertmanager.tool;
    alertmanagerUrl = alertmanager.url;

    // Nothing fires at first: the alerts start once the rule group runs (its first evaluations after a start are not all stored).
    fs.writeFileSync(path.join(work, 'rules.yml'), rules([], false));
    fs.writeFileSync(path.join(work, 'prometheus.yml'), `global:
  evaluation_interval: 1s
rule_files:
  - ${JSON.stringify(path.join(work, 'rules.yml'))}
${alertingTo(alertmanagerUrl)}`);
    const prometheus = await startServing(PROMETHEUS, (port) => [
      `--config.file=${path.join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(work, 'prometheus-data')}`,
      `--web.listen-address=127.0.0.1:${port}`, '--web.enable-lifecycle',
      // Alerts valid in Alertmanager for 4 × 5 s: a reload's pause in Prometheus's sending (its Alertmanager is found
      // again up to 5 s later) does not time them out there; a resolution is sent again until Alertmanager has it.
      '--rules.alert.resend-delay=5s',
    ], STEP_MS);
    tools.prometheus = prometheus.tool;
    prometheusUrl = prometheus.url;
    const configured = await env.api('PATCH', `/api/v1/integrations/${integrationId}`, { config: { alertmanagerUrl, prometheusUrl, prometheusStepSeconds: 1 } });
    expect(configured.statusCode, configured.body).toBe(200);
    await waitFor(async () => {
      const answer = (await (await fetch(`${prometheusUrl}/api/v1/query?query=ALERTS_FOR_STATE`)).json()) as { status: string };
      const groups = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: { groups: Array<{ lastEvaluation: string }> } };
      return answer.status === 'success' && groups.data.groups.some((g) => Date.parse(g.lastEvaluation) > Date.now() - 900 && !g.lastEvaluation.startsWith('0001'));
    }, 'the rule group evaluated', STEP_MS);
    await reload(['web-1:9100', 'web-2:9100'], true);
  }, 3 * STEP_MS);

  afterAll(async () => {
    await Promise.all(Object.values(tools).map((tool) => tool.kill()));
    await env?.close();
    await database?.drop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  const logs = () => Object.entries(tools).map(([name, tool]) => `--- ${name} ---\n${tool.output().slice(-4000)}`).join('\n');
  /** What Alertmanager holds open now. */
  const openInAlertmanager = async (): Promise<AmAlert[]> => ((await (await fetch(`${alertmanagerUrl}/api/v2/alerts`)).json()) as AmAlert[]).filter((a) => Date.parse(a.endsAt) > Date.now());
  /**
   * What Prometheus has firing at the last whole second: the last step an import reads (its range
   * ends on the step grid, 1 s here), so a change seen here is one the next import sees. At the
   * current instant it could fall after that step, and the import would see it only the time after.
   */
  const firingInPrometheus = async (): Promise<Array<Record<string, string>>> => {
    const time = String(Math.floor(Date.now() / 1000));
    const answer = (await (await fetch(`${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: 'ALERTS{alertstate="firing"}', time })}`)).json()) as { data: { result: Array<{ metric: Record<string, string> }> } };
    return answer.data.result.map((series) => series.metric);
  };
  async function reload(diskInstances: string[], flapping: boolean): Promise<void> {
    fs.writeFileSync(path.join(work, 'rules.yml'), rules(diskInstances, flapping));
    const reloaded = await fetch(`${prometheusUrl}/-/reload`, { method: 'POST' });
    expect(reloaded.status, await reloaded.text()).toBe(200);
  }
  async function importNow(id: string): Promise<{ state: string; imported: number; error?: string }> {
    const started = await env.api('POST', `/api/v1/integrations/${id}/import`);
    expect(started.statusCode, started.body).toBe(202);
    const importId = started.json().importId as string;
    return waitFor(async () => {
      const item = (await env.api('GET', `/api/v1/integrations/${id}/imports`)).json().items.find((i: { id: string }) => i.id === importId);
      return item && ['succeeded', 'failed'].includes(item.state) ? item : undefined;
    }, `import ${importId} ended`, STEP_MS);
  }
  const observed = (rows: StoredObservation[]) => rows.filter((row) => row.state !== 'open_keys');

  it('computes from a Prometheus ALERTS series the fingerprint Alertmanager gives the alert, then imports history and what is open, then only what changed', async () => {
    onTestFailed(() => console.error(logs()));
    const held = await waitFor(async () => {
      const open = await openInAlertmanager();
      return open.length === 3 ? open : undefined;
    }, 'three alerts in Alertmanager', STEP_MS);

    // The same fingerprint, computed by pitcrew from Prometheus's series and by Alertmanager.
    const series = await waitFor(async () => {
      const firing = await firingInPrometheus();
      return firing.length === 3 ? firing : undefined;
    }, 'three alerts firing in Prometheus', STEP_MS);
    const byLabels = new Map(held.map((alert) => [JSON.stringify(Object.entries(alert.labels).sort()), alert]));
    for (const metric of series) {
      const alert = byLabels.get(JSON.stringify(Object.entries(alertLabels(metric)).sort()));
      expect(alert, `Alertmanager has the alert of ${JSON.stringify(metric)}`).toBeDefined();
      expect(labelSetFingerprint(alertLabels(metric))).toBe(alert!.fingerprint);
    }
    expect(held.find((a) => a.labels.alertname === DISK)!.labels.team).toBe('opérations');
    const fingerprintOf = (alertname: string, instance: string) => held.find((a) => a.labels.alertname === alertname && a.labels.instance === instance)!;
    const disk1 = fingerprintOf(DISK, 'web-1:9100');
    const disk2 = fingerprintOf(DISK, 'web-2:9100');
    const flap = fingerprintOf(FLAP, 'db-1:9100');

    // The flapping alert resolves before anything is imported: only Prometheus's history has it.
    await reload(['web-1:9100', 'web-2:9100'], false);
    await waitFor(async () => (await openInAlertmanager()).length === 2 && (await firingInPrometheus()).length === 2, 'the flapping alert resolved', STEP_MS);

    const id = integrationId;
    const patched = await env.api('PATCH', `/api/v1/integrations/${id}`, { import: { enabled: false, lookbackDays: 1, requestsPerSecond: 50 } });
    expect(patched.statusCode, patched.body).toBe(200);

    const first = await importNow(id);
    expect(first, JSON.stringify(first)).toMatchObject({ state: 'succeeded', imported: 4 });
    const rows = await storedObservations(env.store.db, id);
    const of = (key: string) => observed(rows).filter((row) => row.key === key).sort((a, b) => a.at! - b.at!);
    for (const [alert, host] of [[disk1, 'web-1'], [disk2, 'web-2']] as const) {
      const [firing, ...rest] = of(alert.fingerprint);
      expect(rest).toEqual([]);
      expect(firing).toMatchObject({ state: 'firing', alarmName: DISK, hostname: host, severity: 'critical' });
      // The evaluation it fired at, from the raw samples: Alertmanager's startsAt.
      expect(firing!.at).toBe(Date.parse(alert.startsAt));
    }
    const flapped = of(flap.fingerprint);
    expect(flapped.map((row) => [row.state, row.alarmName, row.hostname, row.severity])).toEqual([['firing', FLAP, 'db-1', 'warning'], ['resolved', FLAP, 'db-1', 'warning']]);
    expect(flapped[0]!.at).toBe(Date.parse(flap.startsAt));
    expect(flapped[1]!.at!).toBeGreaterThan(flapped[0]!.at!);
    expect(rows.filter((row) => row.state === 'open_keys').map((row) => row.openKeys)).toEqual([[disk1.fingerprint, disk2.fingerprint].sort()]);

    // web-2 recovers; the next import says so (Prometheus's history) and fires nothing again.
    await reload(['web-1:9100'], false);
    await waitFor(async () => (await openInAlertmanager()).length === 1 && (await firingInPrometheus()).length === 1, 'web-2 resolved', STEP_MS);
    const second = await importNow(id);
    expect(second).toMatchObject({ state: 'succeeded', imported: 1 });
    const after = await storedObservations(env.store.db, id);
    const added = after.slice(rows.length);
    expect(added.filter((row) => row.state !== 'open_keys').map((row) => [row.key, row.state, row.hostname])).toEqual([[disk2.fingerprint, 'resolved', 'web-2']]);
    expect(added.filter((row) => row.state === 'open_keys').map((row) => row.openKeys)).toEqual([[disk1.fingerprint]]);
    const resolvedAt = added.find((row) => row.state === 'resolved')!.at!;
    expect(resolvedAt).toBeGreaterThan(of(disk2.fingerprint)[0]!.at!);
    expect(resolvedAt).toBeLessThanOrEqual(Date.now());

    const status = (await env.api('GET', `/api/v1/integrations/${id}`)).json().import.status;
    expect(status).toMatchObject({ state: 'succeeded', imported: 1, importedTotal: 5, lastError: null });

    // One incident per alert, from its notifications and its import alike, at Alertmanager's times.
    const incidents = await waitFor(async () => {
      const items = (await env.api('GET', `/api/v1/incidents?integrationId=${id}`)).json().items as Array<Record<string, unknown>>;
      return items.length === 3 && items.filter((i) => i.state === 'resolved').length === 2 ? items : undefined;
    }, 'the incidents of the three alerts', STEP_MS).catch(async (error: Error) => {
      throw new Error(`${error.message}; so far: ${JSON.stringify((await env.api('GET', `/api/v1/incidents?integrationId=${id}`)).json().items)}`);
    });
    const incident = (alert: AmAlert) => incidents.find((i) => i.fingerprint === alert.fingerprint)!;
    expect(incident(disk1)).toMatchObject({ state: 'open', alarmName: DISK, hostname: 'web-1', severity: 'critical', occurrences: 1, openedAt: new Date(Date.parse(disk1.startsAt)).toISOString() });
    expect(incident(disk2)).toMatchObject({ state: 'resolved', hostname: 'web-2', occurrences: 1, openedAt: new Date(Date.parse(disk2.startsAt)).toISOString(), resolvedAt: new Date(resolvedAt).toISOString(), resolvedBy: 'tool' });
    expect(incident(flap)).toMatchObject({ state: 'resolved', alarmName: FLAP, hostname: 'db-1', occurrences: 1, openedAt: new Date(Date.parse(flap.startsAt)).toISOString(), resolvedAt: new Date(flapped[1]!.at!).toISOString() });
    // The notifications of the same alerts were taken too (the alert log): they and the import are the same incidents.
    const alerts = (await env.api('GET', `/api/v1/integrations/${id}/alerts`)).json().items as Array<{ fingerprint: string }>;
    expect(alerts.length).toBeGreaterThanOrEqual(3);
  }, 6 * STEP_MS);

  it('says which tool answered what when an address is wrong', async () => {
    const made = await env.api('POST', '/api/v1/integrations', { name: 'wrong-path', type: 'alertmanager', config: { prometheusUrl: `${prometheusUrl}/not-prometheus` } });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    await env.api('PATCH', `/api/v1/integrations/${id}`, { import: { enabled: false, lookbackDays: 1 } });
    const run = await importNow(id);
    expect(run.state).toBe('failed');
    expect(run.error).toMatch(new RegExp(`^Prometheus refused GET ${prometheusUrl.replaceAll('.', '\\.')}/not-prometheus/api/v1/query_range: HTTP 404`));
  }, STEP_MS);

  it('reads through the runner\'s read-only fetch; a silence, Alertmanager\'s one write, is refused before it leaves', async () => {
    const { fetch: guarded, methods } = readOnlyFetch(alertmanagerImportNeeds);
    expect((await guarded(`${alertmanagerUrl}/api/v2/alerts`, { method: 'GET', headers: {} })).status).toBe(200);
    expect((await guarded(`${prometheusUrl}/api/v1/query?query=ALERTS`, { method: 'GET', headers: {} })).status).toBe(200);
    const silence = { matchers: [{ name: 'alertname', value: DISK, isRegex: false }], startsAt: new Date().toISOString(), endsAt: new Date(Date.now() + 3_600_000).toISOString(), createdBy: 'pitcrew', comment: 'an import never writes' };
    await expect(guarded(`${alertmanagerUrl}/api/v2/silences`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(silence) }))
      .rejects.toThrow(`pitcrew did not send POST ${alertmanagerUrl}/api/v2/silences: an import only reads from Alertmanager`);
    await expect(guarded(`${alertmanagerUrl}/api/v2/silence/00000000-0000-0000-0000-000000000000`, { method: 'DELETE', headers: {} })).rejects.toThrow(/pitcrew did not send DELETE/);
    expect(methods).toEqual(['GET', 'GET']);
    expect(await (await fetch(`${alertmanagerUrl}/api/v2/silences`)).json()).toEqual([]);
  }, STEP_MS);
});
