import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/identity/tokens.js';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { saveScreenshot, signInAs } from '../support/browser.js';
import { systemdStandIn, type SystemdStandIn } from '../support/systemd-stand-in.js';
import { uiSession } from '../support/ui-session.js';
import { waitFor } from '../support/wait.js';

/*
 * The incident dashboard (issue 38.3 and 38.4) in Chromium, against a real server, a real agent
 * and a real integration URL: an Alertmanager alarm opens an incident that appears live,
 * Troubleshoot now streams a runbook's output from the agent while it runs, resolved incidents
 * are charted with the API's numbers, and the one-click automation creates a rule that fixes the
 * alarm's next occurrence (the starter "restart a systemd service" as the wizard fills it in,
 * its ServiceName taken from the alert's `service` label, run by the agent against a systemd
 * stand-in: support/systemd-stand-in.ts).
 *
 * Alertmanager bodies as its webhook sends them (prometheus/alertmanager notify/webhook/webhook.go
 * `Message`, version "4"; template/template.go `Alert`), as test/incidents.test.ts posts them.
 */

const HOST = 'ui-web-1';
const MIN = 60_000;

function amAlert(alertname: string, fingerprint: string, status: 'firing' | 'resolved', startsAt: number, endsAt: number, extra: Record<string, string> = {}) {
  return {
    status,
    labels: { alertname, instance: `${HOST}:9100`, job: 'node', severity: 'critical', ...extra },
    annotations: { summary: `${alertname} on ${HOST}` },
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(endsAt).toISOString(),
    generatorURL: 'http://prometheus:9090/graph',
    fingerprint,
  };
}

describe('the incident dashboard in the web UI', () => {
  let agent: AgentProcess;
  let systemd: SystemdStandIn;
  let integrationId: string;
  const gate = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-ui-incidents-'));
  const ui = uiSession({
    setup: async (env) => {
      systemd = systemdStandIn();
      // The service the one-click rule restarts: it says it is ready, then serves until stopped.
      systemd.addUnit('shop.service', 'echo "shop serving"\n: > "$READY"\nwhile :; do sleep 1; done\n');
      const { httpsUrl, fingerprint } = env.listening!;
      agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: HOST, fingerprint, launcher: systemd.launcher });
      await waitOnline(env.api, HOST);
      integrationId = (await env.api('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager' })).json().id;
    },
  });
  afterAll(async () => {
    await agent?.stop();
    systemd?.close();
    fs.rmSync(gate, { recursive: true, force: true });
  });

  /** A notification to the integration's own URL, over HTTP, as Alertmanager sends it. */
  const notify = async (alerts: unknown[]) => {
    const { env } = ui;
    const response = await fetch(`${ui.base}/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${integrationId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receiver: 'pitcrew', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0 }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    return (await response.json()) as { alerts: Array<{ events: Array<{ executionIds: string[] }> }> };
  };
  const incidents = async (query: string) => (await ui.env.api('GET', `/api/v1/incidents?${query}`)).json().items as Array<{ id: string; state: string; resolvedBy: string | null; ruleIds: string[]; executionIds: string[] }>;
  const row = (page: Page, alarm: string) => page.locator('tr[data-incident]', { hasText: alarm });
  /** Whether a canvas holds paint: uPlot drew on it. */
  const painted = (page: Page, chart: string) =>
    page.locator(`[data-chart="${chart}"] canvas`).first().evaluate((element) => {
      // The test's types have no DOM: the canvas as far as it is read here.
      const canvas = element as unknown as { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } };
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
      return false;
    });

  it('shows an alarm as an open incident live, and Troubleshoot now streams its runbook’s output from the agent while it runs', async () => {
    const { page, env, base } = ui;
    const go = path.join(gate, 'go');
    const runbook = (await env.api('POST', '/api/v1/runbooks', {
      name: 'look around',
      script: `echo "looking at $HostName for $AlarmName"\nwhile [ ! -f '${go}' ]; do sleep 0.1; done\necho "done looking"\n`,
    })).json();
    await signInAs(page, base, env.tenant.token, '/incidents');
    await page.getByText('No open incident').waitFor();

    // The page is not reloaded: the incident arrives with the list's own refresh.
    await notify([amAlert('HighMemoryUsage', 'a1', 'firing', Date.now() - 2 * MIN, Date.now() + 4 * MIN)]);
    const incident = row(page, 'HighMemoryUsage');
    await expect.poll(() => incident.innerText()).toMatch(new RegExp(`HighMemoryUsage\\s+${HOST}\\s+critical\\s+\\d min`));
    expect(await incident.innerText()).toContain('nothing yet');

    await incident.getByRole('button', { name: 'Troubleshoot now' }).click();
    const panel = page.locator('.incident-panel');
    await panel.getByLabel('Diagnostics runbook').selectOption({ label: 'look around' });
    expect(await panel.getByLabel('On host').inputValue()).toBe(HOST);
    await panel.getByRole('button', { name: 'Run' }).click();
    // The first line shows while the run waits for the gate: it can only have come by the live stream.
    const stdout = panel.locator('pre[data-stream="stdout"]');
    const shown = async () => (await stdout.innerText()).trimEnd();
    await expect.poll(shown).toBe(`looking at ${HOST} for HighMemoryUsage`);
    const [open] = await incidents('state=open');
    expect(open!.executionIds).toHaveLength(1);
    // Polled: the agent's output goes out live as it comes, while its `started` is still on its way
    // to the database (a group commit), so the first line can show a moment before `running` reads back.
    const execution = async () => (await env.api('GET', `/api/v1/executions/${open!.executionIds[0]}`)).json();
    await expect.poll(async () => (await execution()).state).toBe('running');
    expect(await execution()).toMatchObject({ state: 'running', hostname: HOST, runbook: { runbookId: runbook.id } });
    expect(await panel.locator('.live-indicator').count()).toBeGreaterThan(0);
    fs.writeFileSync(go, '');
    await expect.poll(shown).toBe(`looking at ${HOST} for HighMemoryUsage\ndone looking`);
    await saveScreenshot(page, 'incidents-troubleshoot');
    await expect.poll(() => panel.locator('.live-run-head').innerText()).toMatch(/^succeeded\s+on\s+ui-web-1\s+· exit 0/);
    // What pitcrew did, on the row, from the list's next refresh.
    await expect.poll(() => incident.innerText()).toMatch(/succeeded\s+1 run/);
  });

  it('charts the resolved incidents with exactly the API’s numbers, and ranks the alarm worth automating', async () => {
    const { page, env, base } = ui;
    // Four ServiceDown incidents of 10 to 40 minutes and two DiskFull ones, ended in the last hours.
    const now = Date.now();
    for (const [i, minutes] of [10, 20, 30, 40].entries()) {
      const start = now - (8 - i) * 60 * MIN;
      await notify([amAlert('ServiceDown', 'sd', 'firing', start, start + 4 * MIN, { service: 'shop' })]);
      await notify([amAlert('ServiceDown', 'sd', 'resolved', start, start + minutes * MIN, { service: 'shop' })]);
    }
    for (const [i, minutes] of [5, 15].entries()) {
      const start = now - (4 - i) * 60 * MIN;
      await notify([amAlert('DiskFull', 'df', 'firing', start, start + 4 * MIN)]);
      await notify([amAlert('DiskFull', 'df', 'resolved', start, start + minutes * MIN)]);
    }
    await signInAs(page, base, env.tenant.token, '/incidents');
    const frequentChart = 'Most frequent alerts: incidents per alarm';
    await expect.poll(() => painted(page, frequentChart)).toBe(true);
    for (const chart of ['Longest resolution: mean and p90 per alarm', 'MTTR by day: mean time to resolve, and incidents resolved', 'Hosts with the most incidents', 'Resolved by automation, per day']) {
      await expect.poll(() => painted(page, chart), { message: chart }).toBe(true);
    }

    // The UI asked for the last 30 UTC days; the API answers the same question with these numbers.
    const period = await page.locator('[data-period]').getAttribute('data-period');
    const [from, to] = period!.split('..');
    const api = (await env.api('GET', `/api/v1/incidents/analytics?from=${from}&to=${to}`)).json();
    expect(api.frequent).toEqual([{ alarmName: 'ServiceDown', count: 4 }, { alarmName: 'DiskFull', count: 2 }]);
    const cells = (name: string) => page.locator(`table[data-numbers="${name}"] tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    expect(await cells('frequent')).toEqual(api.frequent.map((r: { alarmName: string; count: number }) => [r.alarmName, String(r.count)]));
    expect(await cells('slowest')).toEqual(api.slowest.map((r: Record<string, number | string>) => [r.alarmName, ...['count', 'meanSeconds', 'p50Seconds', 'p90Seconds', 'maxSeconds'].map((k) => String(r[k]))]));
    expect(api.slowest[0]).toMatchObject({ alarmName: 'ServiceDown', count: 4, meanSeconds: 1500, maxSeconds: 2400 });
    expect(await cells('mttrByDay')).toEqual(api.mttrByDay.map((r: Record<string, number | string>) => ['day', 'count', 'automated', 'meanSeconds'].map((k) => String(r[k]))));
    expect(await cells('hosts')).toEqual([[HOST, String(api.hosts[0].count)]]);
    expect(await page.locator('[data-number="resolved"] .stat-value').innerText()).toBe(String(api.resolved));

    // Frequent and slow, and no rule acts on it: the first candidate, with why.
    const candidate = page.locator('[data-candidate="ServiceDown"]');
    await saveScreenshot(page, 'incidents-dashboard');
    await expect.poll(() => candidate.innerText()).toMatch(/fired 4 times in .* resolved in 25 min on average, no rule acts on it\. Suggested: restart a systemd service/);
  });

  it('opens the rule wizard filled in from a candidate; the rule it creates fixes the alarm’s next occurrence on the agent', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/incidents');
    await page.locator('[data-candidate="ServiceDown"]').getByRole('link', { name: 'Automate' }).click();
    await page.getByText('Filled in for “ServiceDown”').waitFor();
    await page.getByText('the lines after its opening comment take ServiceName from the alert’s service label, unless set').waitFor();
    expect(await page.getByLabel('Alarm name').inputValue()).toBe('ServiceDown');
    expect(await page.getByLabel('Integration').inputValue()).toBe(integrationId);
    await page.getByRole('button', { name: 'Next' }).click();
    expect(await page.getByLabel('Events allowed').inputValue()).toBe('5');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Next' }).click();
    // The suggested starter, written into the rule as it is but for the lines after its opening
    // comment that take its ServiceName from the alerts' `service` label: nobody edits it here.
    const editor = page.locator('.cm-content');
    const { script } = (await env.api('GET', '/api/v1/runbook-library/restart-service')).json();
    const prelude = '# from the alert\'s labels unless set (pitcrew one-click automation)\n: "${ServiceName:=${LABEL_service:-}}"\n';
    const prefilled = script.replace(/^((?:#.*\n)*)/, (opening: string) => opening + prelude);
    expect(prefilled).not.toBe(script);
    await expect.poll(() => editor.innerText()).toContain('pitcrew starter runbook "restart a systemd service"');
    expect(await editor.innerText()).toContain(': "${ServiceName:=${LABEL_service:-}}"');
    await page.getByRole('button', { name: 'Next' }).click();
    expect(await page.getByLabel('Runs allowed').inputValue()).toBe('3');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.waitForURL(/\/rules\/[0-9a-f-]{36}$/);
    const ruleId = page.url().split('/').pop()!;
    const rule = (await env.api('GET', `/api/v1/rules/${ruleId}`)).json();
    expect(rule).toMatchObject({
      trigger: { type: 'alert', integrationId, alarmName: 'ServiceDown' },
      target: { type: 'trigger_host' },
      action: { type: 'script', flavour: 'autofix', runbook: { script: prefilled } },
      flapping: { enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600 },
      actionLimit: { max: 3, windowSeconds: 3600, onLimit: 'escalate' },
    });
    // Creating it linked it to the alarm's incidents.
    const before = await incidents('alarmName=ServiceDown');
    expect(before.map((i) => i.ruleIds)).toEqual(before.map(() => [ruleId]));

    // The next occurrence: the rule restarts the service on the agent, and the resolution is automation's.
    const start = Date.now() - MIN;
    const reply = await notify([amAlert('ServiceDown', 'sd', 'firing', start, start + 4 * MIN, { service: 'shop' })]);
    const [executionId] = reply.alerts[0]!.events[0]!.executionIds;
    const execution = await waitFor(async () => {
      const found = (await env.api('GET', `/api/v1/executions/${executionId}`)).json();
      return ['succeeded', 'failed', 'timed_out'].includes(found.state) ? found : undefined;
    }, 'the fix to end', 60_000);
    expect(execution.stdout).toContain('OK: shop.service restarted and active');
    expect(execution.state).toBe('succeeded');
    expect(systemd.calls()).toContain('systemctl restart shop.service');
    const [open] = await incidents('state=open&alarmName=ServiceDown');
    expect(open).toMatchObject({ ruleIds: [ruleId], executionIds: [executionId] });
    await notify([amAlert('ServiceDown', 'sd', 'resolved', start, Date.now(), { service: 'shop' })]);
    await page.goto(`${base}/incidents/${open!.id}`);
    await page.getByText('by automation').waitFor();
    expect((await env.api('GET', `/api/v1/incidents/${open!.id}`)).json()).toMatchObject({ state: 'resolved', resolvedBy: 'automation' });
  });

  it('shows a viewer the incidents and the numbers, and no button to act', async () => {
    const { page, env, base } = ui;
    const owner = (await env.store.db.selectFrom('tokens').select('user_id').where('tenant_id', '=', env.tenant.tenantId).executeTakeFirstOrThrow()).user_id!;
    const { token } = await issueToken(env.store.db, { tenantId: env.tenant.tenantId, userId: owner, name: 'wallboard', role: 'viewer' });
    await signInAs(page, base, token, '/incidents');
    await expect.poll(() => row(page, 'HighMemoryUsage').count()).toBe(1);
    await page.locator('[data-candidate="DiskFull"], [data-numbers="frequent"]').first().waitFor();
    expect(await page.getByRole('button', { name: 'Troubleshoot now' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Fix now' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Automate' }).count()).toBe(0);
  });
});
