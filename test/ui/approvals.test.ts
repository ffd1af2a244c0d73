import { afterAll, describe, expect, it } from 'vitest';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';
import { waitFor } from '../support/wait.js';

// Issue 42 in Chromium against a real server and a real agent: the execution page of a run that
// waits for approval says who may decide and what would run where; Approve (with a comment) and
// the page follows the run live to its output; the list filters what awaits approval.
describe('approvals in the web UI', () => {
  let agent: AgentProcess;
  const ui = uiSession({
    setup: async (env) => {
      const { httpsUrl, fingerprint } = env.listening!;
      agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'ui-approve-1', fingerprint });
      await waitOnline(env.api, 'ui-approve-1');
    },
  });
  afterAll(() => agent?.stop());

  it('approves from the execution page and sees the run start and end live', async () => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({ name: 'purge cache', approval: { required: true }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "purged on $HostName"' } } });
    const [id] = (await env.webhook(rule.triggerId, { HostName: 'ui-approve-1' })).json().executionIds as string[];

    await signInAs(page, base, env.tenant.token, '/executions?state=awaiting_approval');
    await page.getByRole('link', { name: `execution ${id} on ui-approve-1: awaiting_approval` }).click();
    const panel = page.getByRole('region', { name: 'approval' });
    await expect.poll(() => panel.innerText()).toMatch(/Nothing has been sent to the agent on ui-approve-1 yet\. An operator or above decides/);
    await page.getByText('echo "purged on $HostName"').first().waitFor();

    await panel.getByLabel(/Comment/).fill('cache is stale');
    await panel.getByRole('button', { name: 'Approve' }).click();
    // No reload: the page follows the run it was showing.
    await page.getByText('purged on ui-approve-1').waitFor();
    await expect.poll(() => page.getByRole('region', { name: 'approval' }).count()).toBe(0);
    const done = await waitFor(async () => {
      const e = (await env.api('GET', `/api/v1/executions/${id}`)).json();
      return e.state === 'succeeded' ? e : undefined;
    }, 'the approved run to succeed');
    expect(done.transitions.find((t: { to: string }) => t.to === 'queued').decidedBy).toMatchObject({ via: 'api', comment: 'cache is stale' });
  });
});
