import { afterAll, describe, expect, it } from 'vitest';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';
import { waitFor } from '../support/wait.js';

// Issue 36.8 in Chromium against a real server and a real agent: Run now on a rule's page, its
// form prefilled from the rule's last event, a dry run, a run whose runbook the agent runs, the
// run in the rule's events, a refusal at its field, and a rule that is off.
describe('Run now in the web UI', () => {
  let agent: AgentProcess;
  // A host name over the limit is the service's 400, shown at the field.
  const ui = uiSession({
    refusedStatuses: [400],
    setup: async (env) => {
      const { httpsUrl, fingerprint } = env.listening!;
      agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'ui-run-1', fingerprint });
      await waitOnline(env.api, 'ui-run-1');
    },
  });
  afterAll(() => agent?.stop());

  const dialog = () => ui.page.getByRole('dialog');
  const outcome = () => dialog().getByRole('status', { name: 'what the run did' });

  it('runs a rule from its page with a payload prefilled from its last event, as a dry run and for real', async () => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({ name: 'clean disk', action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "cleaned $Disk on $HostName for $Ticket"' } } });
    expect((await env.webhook(rule.triggerId, { HostName: 'ui-run-1', AlarmName: 'disk_full', Act: false, MetaData: { Disk: '/var' } })).json().outcome).toBe('dry_run');
    await signInAs(page, base, env.tenant.token, `/rules/${rule.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();

    // Prefilled from the last event; the runbook's $Ticket, which no event gave, offered empty.
    await expect.poll(() => dialog().getByLabel('HostName').inputValue()).toBe('ui-run-1');
    expect(await dialog().getByLabel('AlarmName').inputValue()).toBe('disk_full');
    const keys = dialog().getByLabel('Key', { exact: true });
    const values = dialog().getByLabel('Value', { exact: true });
    const typed = (inputs: Array<unknown>) => inputs.map((input) => (input as { value: string }).value);
    expect(await keys.evaluateAll(typed)).toEqual(['Disk', 'Ticket']);
    expect(await values.evaluateAll(typed)).toEqual(['/var', '']);
    await values.nth(0).fill('/srv');
    await values.nth(1).fill('OPS-9');

    await dialog().getByLabel(/Dry run/).check();
    await dialog().getByRole('button', { name: 'Record a dry run' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(/dry run\s+Act was false/);
    expect(await outcome().getByRole('link', { name: /^Executions/ }).count()).toBe(0);

    // Once it has run, the form says that another click is another run.
    await dialog().getByLabel(/Dry run/).uncheck();
    await dialog().getByRole('button', { name: 'Run again' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(/accepted\s+1 execution queued\s+Executions:/);
    const events = (await env.api('GET', `/api/v1/rules/${rule.id}/events`)).json().items;
    expect(events[0]).toMatchObject({ outcome: 'accepted', source: 'manual', requestedBy: { type: 'token', name: 'bootstrap' }, payload: { HostName: 'ui-run-1', AlarmName: 'disk_full', MetaData: { Disk: '/srv', Ticket: 'OPS-9' } } });
    expect(events[1]).toMatchObject({ outcome: 'dry_run', source: 'manual', payload: { Act: false } });
    const executionId = events[0].executionIds[0] as string;
    await waitFor(async () => (await env.api('GET', `/api/v1/executions/${executionId}`)).json().state === 'succeeded', 'the run to succeed');

    // The event link closes the form on the rule's events, where the run says who asked.
    await outcome().getByRole('link', { name: /^Event / }).click();
    await expect.poll(() => dialog().isVisible()).toBe(false);
    const row = page.locator(`tr#event-${events[0].id}`);
    await expect.poll(() => row.innerText()).toMatch(/accepted\s+ui-run-1\s+Run now by token bootstrap/);

    // The execution link leads to the run, which the agent ran with the form's values.
    await page.getByRole('button', { name: 'Run now' }).click();
    await dialog().getByRole('button', { name: 'Run now' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(/accepted/);
    await outcome().getByRole('link', { name: /^[0-9a-f]{8}$/ }).click();
    await page.getByText('cleaned /srv on ui-run-1 for OPS-9').waitFor();
  });

  it('says a refusal at its field, and that a rule that is off records the run and runs nothing', async () => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({ name: 'paused fix', enabled: false });
    await signInAs(page, base, env.tenant.token, `/rules/${rule.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await dialog().getByText('the rule is off, so it is recorded as rule_off and nothing runs').waitFor();
    await dialog().getByLabel('HostName').fill('x'.repeat(255) + 'y');
    await dialog().getByRole('button', { name: 'Run now' }).click();
    await dialog().getByText('HostName is 256 characters long; a host name has at most 255').waitFor();
    expect(await dialog().getByLabel('HostName').getAttribute('aria-invalid')).toBe('true');

    await dialog().getByLabel('HostName').fill('ui-run-1');
    await dialog().getByRole('button', { name: 'Run now' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(/rule off\s+/);
    await dialog().getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => page.locator('tr[data-outcome="rule_off"]').count()).toBe(1);
  });
});
