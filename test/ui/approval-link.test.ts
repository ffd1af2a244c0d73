import { describe, expect, it } from 'vitest';
import { APPROVAL_LINK_PURPOSE, approvalLinkQuery } from '../../src/executions/approval-link.js';
import { chooseTokenSignIn } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 42 in Chromium (docs/approvals.md, "From the e-mail"): the e-mail's signed link, opened
// without a session, goes to sign-in and back to a page that asks to confirm; opening it decided
// nothing; Approve decides; the same link then shows the outcome. (The link is signed here as the
// notifier signs it; test/approval-notify.test.ts takes it from a real mail.)
describe('the approval e-mail link in the web UI', () => {
  // The sign-in page's first call, GET /me without a session, is refused and Chromium logs it.
  const ui = uiSession({ refusedStatuses: [401] });

  it('needs a signed-in person, who confirms; once decided, it shows the outcome', async () => {
    const { page, env, base } = ui;
    await env.enrol('ui-link-1', ['db']);
    const rule = await env.createWebhookRule({ name: 'failover db', approval: { required: true }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo failover' } } });
    const [id] = (await env.webhook(rule.triggerId, { HostName: 'ui-link-1' })).json().executionIds as string[];
    const deadline = Date.parse((await env.api('GET', `/api/v1/executions/${id}`)).json().approval.deadline as string);
    const key = env.app.context.secretBox.derivedKey(APPROVAL_LINK_PURPOSE);
    const link = `${base}/executions/${id}/decide?${approvalLinkQuery(key, { tenantId: env.tenant.tenantId, executionId: id! }, deadline)}`;

    await page.goto(link);
    await chooseTokenSignIn(page);
    expect((await env.api('GET', `/api/v1/executions/${id}`)).json().state).toBe('awaiting_approval');
    await page.getByLabel('Management token').fill(env.tenant.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back on the link's page, which asks: nothing was decided by opening it.
    await page.getByRole('heading', { name: /Approve or reject: execution on ui-link-1/ }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/executions/${id}/decide`);
    await page.getByText('echo failover').first().waitFor();
    expect((await env.api('GET', `/api/v1/executions/${id}`)).json().state).toBe('awaiting_approval');

    const panel = page.getByRole('region', { name: 'approval' });
    await panel.getByLabel(/Comment/).fill('read it in the mail');
    await panel.getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('region', { name: 'outcome' }).getByText(/the execution is rejected \(rejected by .*\(email\): read it in the mail\)/).waitFor();
    const decided = (await env.api('GET', `/api/v1/executions/${id}`)).json();
    expect(decided.state).toBe('rejected');
    expect(decided.transitions.find((t: { to: string }) => t.to === 'rejected').decidedBy).toMatchObject({ via: 'email', comment: 'read it in the mail' });

    // Single use: the link opened again shows how it ended, with nothing to click.
    await page.goto(link);
    await page.getByRole('heading', { name: /Already decided: execution on ui-link-1/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
  });
});
