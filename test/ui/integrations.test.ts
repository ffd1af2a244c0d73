import { describe, expect, it } from 'vitest';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 17 in Chromium against a real server: connect Alertmanager from the integrations page, take
// its URL and receiver snippet (the API key filled in by the person), send a test alert, see the
// alerts the tool sent with what each did, and write an alert rule in the wizard with a preview
// of the recent alerts it would have matched.
describe('integrations in the web UI', () => {
  // The wizard's preview of a pattern that does not compile is a 400 the page shows.
  // Only web-1 has an agent: an alert about another host finds no target, and the preview says so.
  const ui = uiSession({ refusedStatuses: [400], setup: async (env) => void (await env.enrol('web-1')) });

  const postAlerts = (id: string, alerts: Array<{ name: string; instance: string }>) => ui.env.app.server.inject({
    method: 'POST',
    url: `/api/v1/trigger/channel/alertmanager/${ui.env.tenant.apiKey}/${id}`,
    headers: { 'content-type': 'application/json' },
    // Alertmanager's webhook message, version 4 (notify/webhook/webhook.go).
    payload: {
      version: '4', status: 'firing', receiver: 'pitcrew', groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://am:9093', groupKey: '{}', truncatedAlerts: 0,
      alerts: alerts.map(({ name, instance }) => ({
        status: 'firing', labels: { alertname: name, instance, severity: 'critical' }, annotations: {}, startsAt: '2026-11-25T10:00:00Z', endsAt: '0001-01-01T00:00:00Z', generatorURL: '', fingerprint: `${name}-${instance}`,
      })),
    },
  });

  it('connects Alertmanager, gives its receiver with the key filled in, and lists its alerts with what each did', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/integrations');
    await page.getByText('No monitoring tool is connected yet').waitFor();
    const form = page.getByRole('form', { name: 'connect a monitoring tool' });
    await form.getByLabel('Name').fill('prometheus-eu');
    await form.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'prometheus-eu' }).waitFor();
    const made = (await env.api('GET', '/api/v1/integrations')).json().items[0];
    expect(made).toMatchObject({ name: 'prometheus-eu', type: 'alertmanager' });

    const url = page.getByLabel('Integration URL');
    expect(await url.inputValue()).toBe(`${base}/api/v1/trigger/channel/alertmanager/<api_key>/${made.id}`);
    await page.getByLabel('API key for the URL').fill(env.tenant.apiKey);
    const filled = `${base}/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${made.id}`;
    await expect.poll(() => url.inputValue()).toBe(filled);
    expect(await page.getByLabel('Alertmanager receiver').innerText()).toContain(`- url: '${filled}'`);
    // Beside the URL, as on a webhook rule's page: a curl posting one alert in Alertmanager's body.
    const apiBase = made.url.slice(0, made.url.indexOf('/api/v1/'));
    expect(await page.getByLabel('Sample alert curl').innerText()).toBe(made.curl.replace(apiBase, base));

    await page.getByText('No alert yet').waitFor();
    await postAlerts(made.id, [{ name: 'DiskFull', instance: 'web-1:9100' }]);
    const row = page.locator('tr[data-alert="DiskFull"]');
    await expect.poll(() => row.innerText(), { timeout: 15_000 }).toMatch(/DiskFull[\s\S]*web-1[\s\S]*firing[\s\S]*no rule matched/);

    const test = page.getByRole('form', { name: 'send a test alert' });
    await test.getByLabel('Host').fill('web-1');
    await test.getByRole('button', { name: 'Send test alert' }).click();
    await page.getByText('No rule of this integration matches it.').waitFor();
    await expect.poll(() => page.locator('tr[data-alert="PitcrewTestAlert"]').innerText(), { timeout: 15_000 }).toMatch(/PitcrewTestAlert\s*test/);
  });

  it('writes an alert rule in the wizard, previewing which recent alerts it would have matched', async () => {
    const { page, env, base } = ui;
    const made = (await env.api('GET', '/api/v1/integrations')).json().items[0];
    await postAlerts(made.id, [{ name: 'DiskLow', instance: 'db-1:9100' }, { name: 'CpuHot', instance: 'web-2:9100' }]);
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill('free disk');
    await page.getByText('Monitoring alert').click();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('choose the integration whose alerts raise the rule').waitFor();
    await page.getByLabel('Integration').selectOption({ label: 'prometheus-eu (Prometheus Alertmanager)' });
    const count = page.locator('[data-preview-count]');
    // Every alert so far: DiskFull and the test alert on web-1, DiskLow on db-1 and CpuHot on web-2, which have no agent.
    await expect.poll(() => count.innerText()).toBe('4 of the last 4 alerts match; 2 would act, 2 would find no target.');
    await page.getByLabel('Alarm name').fill('Disk*');
    await expect.poll(() => count.innerText()).toBe('2 of the last 4 alerts match; 1 would act, 1 would find no target.');
    // Each says what the ingest would do: act on its host, or find none, in the ingest's words.
    await expect.poll(() => page.locator('tr[data-matches="true"][data-outcome="accepted"]').innerText()).toMatch(/DiskFull\s+firing\s+act on web-1\s+web-1/);
    expect(await page.locator('tr[data-outcome="no_target"]').innerText()).toMatch(/DiskLow\s+firing\s+no target no host named "db-1" has an agent in this tenant\s+db-1/);
    await page.getByLabel('Alarm name').fill('/^Disk(/');
    await page.getByText(/not a valid regular expression/).waitFor();
    await page.getByLabel('Alarm name').fill('/^Disk(Full|Low)$/');
    await expect.poll(() => count.innerText()).toBe('2 of the last 4 alerts match; 1 would act, 1 would find no target.');
    await page.getByLabel('Act on').selectOption('resolved');
    await expect.poll(() => count.innerText()).toBe('2 of the last 4 alerts match; 0 would act.');
    await page.getByLabel('Act on').selectOption('firing');

    for (const step of ['Flapping protection', 'Infrastructure and target', 'Runbook', 'Action limit']) {
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByRole('heading', { name: step }).waitFor();
    }
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'free disk' }).waitFor();
    const rule = (await env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === 'free disk');
    expect(rule.trigger).toEqual({ type: 'alert', integrationId: made.id, alarmName: '/^Disk(Full|Low)$/', on: 'firing' });
  });
});
