import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { signInAs } from '../support/browser.js';
import { assertToolsInstalled, PROMETHEUS, startTool, type ToolProcess } from '../support/prometheus.js';
import { startGrafanaEmulator } from '../support/grafana-emulator.js';
import { freePort } from '../support/process.js';
import { uiSession } from '../support/ui-session.js';
import { waitFor } from '../support/wait.js';

/*
 * Issue 39's pages in Chromium, with Debian's real Prometheus scraping a real gauge: an alert as
 * Alertmanager posts it (webhook version 4, https://prometheus.io/docs/alerting/latest/configuration/#webhook_config;
 * test/graph-snapshots.test.ts drives the same through real Alertmanager) fires a graph_snapshot
 * rule, the execution page shows the picture, its Copy link gives a signed link that opens without
 * a session and is refused once expired; the wizard's Preview draws the last hour without saving anything.
 */
const METRIC = 'pitcrew_ui_snapshot_load';
const STEP_MS = 60_000;

interface ImageSize { complete: boolean; naturalWidth: number; naturalHeight: number }
/** An <img>'s decoded width once it loaded (0 while it is not, or when it failed to decode). */
const loadedWidth = (img: unknown) => ((img as ImageSize).complete ? (img as ImageSize).naturalWidth : 0);

describe('graph snapshots in the web UI', () => {
  let prometheus: ToolProcess | undefined;
  let metrics: http.Server | undefined;
  let work: string;
  let integrationId: string;
  /** How far the service's clock is moved on, to see a link expire. */
  let clockShift = 0;
  const ui = uiSession({
    clock: () => Date.now() + clockShift,
    refusedStatuses: [403, 502],
    setup: async (env) => {
      assertToolsInstalled();
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-ui-snapshots-'));
      metrics = http.createServer((_request, response) => {
        response.setHeader('content-type', 'text/plain; version=0.0.4');
        response.end(`# TYPE ${METRIC} gauge\n${METRIC}{instance="web-1:9100"} ${20 + (Date.now() / 1000) % 10}\n`);
      });
      await new Promise<void>((resolve) => metrics!.listen(0, '127.0.0.1', resolve));
      const promPort = await freePort();
      fs.writeFileSync(path.join(work, 'prometheus.yml'), `global:
  scrape_interval: 1s
scrape_configs:
  - job_name: load
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:${(metrics.address() as AddressInfo).port}']
`);
      prometheus = startTool(PROMETHEUS, [
        `--config.file=${path.join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(work, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`,
      ]);
      const prometheusUrl = `http://127.0.0.1:${promPort}`;
      await waitFor(async () => {
        const answer = await fetch(`${prometheusUrl}/api/v1/query?query=${METRIC}`).then((r) => r.json() as Promise<{ data?: { result?: unknown[] } }>).catch(() => undefined);
        return (answer?.data?.result?.length ?? 0) > 0;
      }, 'Prometheus scraped the series', STEP_MS);
      const made = await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager', config: { prometheusUrl } });
      expect(made.statusCode, made.body).toBe(201);
      integrationId = made.json().id as string;
    },
  });
  afterAll(async () => {
    await prometheus?.kill();
    metrics?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('shows the snapshot a fired rule captured on the execution page, and its signed link opens until it expires', async () => {
    const { page, env, base } = ui;
    const created = await env.api('POST', '/api/v1/rules', {
      name: 'load graph', trigger: { type: 'alert', integrationId, alarmName: 'UiLoad' }, action: { type: 'graph_snapshot', graphs: [`${METRIC}{instance="{{ $labels.instance }}"}`], windowMinutes: 1 },
      target: { type: 'trigger_host' }, infrastructureType: 'On_Premise',
    });
    expect(created.statusCode, created.body).toBe(201);
    const ruleId = created.json().id as string;
    const labels = { alertname: 'UiLoad', instance: 'web-1:9100', severity: 'critical' };
    const posted = await env.app.server.inject({
      method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${integrationId}`,
      payload: {
        version: '4', groupKey: '{}:{alertname="UiLoad"}', truncatedAlerts: 0, status: 'firing', receiver: 'pitcrew', groupLabels: { alertname: 'UiLoad' },
        commonLabels: labels, commonAnnotations: {}, externalURL: 'http://alertmanager:9093',
        alerts: [{ status: 'firing', labels, annotations: {}, startsAt: new Date(Date.now() - 20_000).toISOString(), endsAt: '0001-01-01T00:00:00Z', generatorURL: '', fingerprint: '5e1f0a1b2c3d4e5f' }],
      },
    });
    expect(posted.statusCode, posted.body).toBe(202);
    let execution: { id: string; state: string; reason: string | null } | undefined;
    await waitFor(async () => {
      execution = ((await env.api('GET', `/api/v1/executions?ruleId=${ruleId}`)).json().items as Array<typeof execution>).find((e) => !['queued', 'dispatched', 'running'].includes(e!.state));
      return execution !== undefined;
    }, 'the capture ended', STEP_MS);
    expect(execution!.state, execution!.reason ?? '').toBe('succeeded');
    const view = (await env.api('GET', `/api/v1/executions/${execution!.id}`)).json() as { snapshots: Array<{ id: string; eventId: string; url: string; width: number; height: number }> };
    expect(view.snapshots).toHaveLength(1);
    const snapshot = view.snapshots[0]!;

    await signInAs(page, base, env.tenant.token, `/executions/${execution!.id}`);
    const panel = page.getByRole('region', { name: 'Graph snapshots' });
    const image = panel.getByRole('img', { name: `graph: ${METRIC}{instance="web-1:9100"}` });
    await image.waitFor();
    await expect.poll(() => image.evaluate(loadedWidth)).toBe(snapshot.width);
    expect(await image.evaluate((img) => (img as unknown as ImageSize).naturalHeight)).toBe(snapshot.height);
    expect(await panel.innerText()).toMatch(new RegExp(`${snapshot.width}×${snapshot.height} · `));
    expect(await panel.getByRole('link', { name: /graph:/ }).getAttribute('title')).toBe('Open full size');

    // The rule page shows its latest pictures, and its events the picture beside the execution that took it.
    await page.getByRole('link', { name: 'load graph' }).click();
    const latest = page.getByRole('region', { name: 'Latest graph snapshots' }).getByRole('img', { name: `graph: ${METRIC}{instance="web-1:9100"}` });
    await latest.waitFor();
    await expect.poll(() => latest.evaluate(loadedWidth)).toBe(snapshot.width);
    const thumb = page.locator(`tr#event-${snapshot.eventId}`).getByRole('img', { name: /^graph: / });
    await expect.poll(() => thumb.evaluate(loadedWidth)).toBe(snapshot.width);

    // Copy link: a signed link, as a chat notification carries it, opened in a fresh tab with no session.
    await page.goto(`${base}/executions/${execution!.id}`);
    await panel.getByRole('button', { name: 'Copy link' }).click();
    const shown = panel.getByRole('textbox', { name: `signed link to ${METRIC}{instance="web-1:9100"}` });
    await shown.waitFor();
    const signed = new URL(await shown.inputValue());
    expect(`${signed.origin}${signed.pathname}`).toBe(`${base}${snapshot.url}`);
    const days = (Number(signed.searchParams.get('exp')) * 1000 - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    const freshTab = async <T>(use: (tab: Page) => Promise<T>): Promise<T> => {
      // A context of its own: no session, and no cache (the image may be kept 5 minutes).
      const context = await page.context().browser()!.newContext();
      try {
        return await use(await context.newPage());
      } finally {
        await context.close();
      }
    };
    await freshTab(async (tab) => {
      const open = await tab.goto(signed.href);
      expect(open!.status()).toBe(200);
      expect(open!.headers()['content-type']).toBe('image/png');
      expect(await tab.evaluate('document.querySelector("img")?.naturalWidth')).toBe(snapshot.width);
    });
    // Eight days on, the same link is refused as expired.
    clockShift = 8 * 86_400_000;
    try {
      await freshTab(async (tab) => {
        const expired = await tab.goto(signed.href);
        expect(expired!.status()).toBe(403);
        expect(await tab.content()).toContain('expired');
      });
    } finally {
      clockShift = 0;
    }
    // Making it is in the audit log, the link itself masked.
    const entry = await env.store.db.selectFrom('audit_log').selectAll().where('action', '=', 'snapshot.link').executeTakeFirstOrThrow();
    expect(entry.target_id).toBe(snapshot.id);
    expect(JSON.stringify(entry)).not.toContain(signed.searchParams.get('sig')!);
  }, 3 * STEP_MS);

  it('previews the graph in the wizard: captured now for the last hour, nothing saved', async () => {
    const { page, env, base } = ui;
    const rulesBefore = (await env.api('GET', '/api/v1/rules')).json().items.length as number;
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill('preview load');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Infrastructure and target' }).waitFor();
    await page.getByRole('radio', { name: /^Graph snapshot/ }).check();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Graph snapshot' }).waitFor();
    await page.getByLabel('Integration').selectOption(integrationId);
    await page.getByLabel('Graphs, one per line').fill(`${METRIC}\nnot a query (`);
    await page.getByRole('button', { name: 'Preview' }).click();
    // A query Prometheus refuses: the reason names the tool, the query and its answer.
    await expect.poll(() => page.locator('.snapshot-preview .banner-error').innerText().catch(() => '')).toMatch(/^Prometheus refused query_range of not a query \( at .*HTTP 400/);
    await page.getByLabel('Graphs, one per line').fill(METRIC);
    await page.getByRole('button', { name: 'Preview' }).click();
    const image = page.getByRole('list', { name: 'Preview' }).getByRole('img', { name: `preview: ${METRIC}` });
    await image.waitFor();
    expect(await image.evaluate(loadedWidth)).toBe(720);
    expect((await env.api('GET', '/api/v1/rules')).json().items).toHaveLength(rulesBefore);
  }, 3 * STEP_MS);

  it('sets a Grafana integration’s address and write-only graph secret on its page, which captures then read with', async () => {
    const { page, env, base } = ui;
    const grafana = await startGrafanaEmulator();
    try {
      const token = 'glsa_UiTypedServiceAccountToken000_5e6f7a8b';
      grafana.tokens.add(token);
      grafana.dashboards.set('hosts', { title: 'Hosts', slug: 'hosts', panels: [{ id: 2, title: 'CPU' }] });
      // The emulator's panels query node_load1: a point a minute over the last hour.
      grafana.series.set('node_load1', Array.from({ length: 60 }, (_, i) => [Date.now() - (60 - i) * 60_000, 1.5] as [number, number]));
      const made = await env.api('POST', '/api/v1/integrations', { name: 'grafana graphs', type: 'grafana' });
      const id = made.json().id as string;
      await signInAs(page, base, env.tenant.token, `/integrations/${id}`);
      const graphs = page.getByRole('region', { name: 'Graphs' });
      await graphs.getByLabel('Grafana address').fill(grafana.url);
      await graphs.getByLabel('Graph secret').fill(token);
      await graphs.getByRole('button', { name: 'Save graph settings' }).click();
      await graphs.getByText('A graph secret is set (never shown).').waitFor();
      // Polled: the saved integration (the hint) can render a moment before the form's own
      // onSuccess empties the field (TanStack Query runs the hook's callbacks before mutate()'s).
      await expect.poll(() => graphs.getByLabel('Graph secret').inputValue()).toBe('');
      expect(await page.content()).not.toContain(token);
      expect((await env.api('GET', `/api/v1/integrations/${id}`)).json()).toMatchObject({ config: { grafanaUrl: grafana.url }, hasGraphSecret: true });
      const preview = await env.api('POST', '/api/v1/snapshots/preview', { integrationId: id, graphs: ['hosts/2'] });
      expect(preview.statusCode, preview.body).toBe(200);
      expect(grafana.requests.map((r) => r.authorization)).toContain(`Bearer ${token}`);

      await graphs.getByRole('button', { name: 'Remove graph secret' }).click();
      await graphs.getByText('Write-only: stored encrypted, never shown back.').waitFor();
      expect((await env.api('GET', `/api/v1/integrations/${id}`)).json().hasGraphSecret).toBe(false);
    } finally {
      await grafana.close();
    }
  }, 3 * STEP_MS);
});
