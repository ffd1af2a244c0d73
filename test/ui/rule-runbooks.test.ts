import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { startTestEnv, type TestEnv } from '../support/app.js';
import { openBrowser, signInAs, type BrowserSession } from '../support/browser.js';

// Issue 20, point 1's wizard step and point 6, in Chromium against a real server and a real agent:
// a rule runs a stored runbook (following its latest version, or pinned), or stores what is written
// in the wizard as a new runbook first; the rule's page says which runbook and version runs; the
// execution's page shows the script that ran, where it came from and its SHA-256; a runbook a rule
// uses cannot be deleted, and the page shows the service's refusal as is.
const V1 = 'echo "cleanup v1 on $HostName"\n';
const V2 = 'echo "cleanup v2 on $HostName"\ndf -h / >/dev/null\n';
const V3 = 'echo "cleanup v3 on $HostName"\n';
const RESTART = '#!/bin/sh\necho "restarting web on $HostName"\n';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('rules that run runbooks, in the web UI', () => {
  let env: TestEnv;
  let agent: AgentProcess;
  let browser: BrowserSession;
  let page: Page;
  let base: string;
  let runbookId: string;
  // What the tests provoke, and Chromium logs: a name already taken (409), deleting a runbook in use (409).
  const refused = /Failed to load resource: the server responded with a status of 409/;

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true, webUi: true });
    base = env.listening!.httpUrl;
    agent = spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'web-1', fingerprint: env.listening!.fingerprint });
    await waitOnline(env.api, 'web-1');
    const created = await env.api('POST', '/api/v1/runbooks', { name: 'disk cleanup', script: V1, description: '# Disk full' });
    runbookId = created.json().id;
    expect((await env.api('PUT', `/api/v1/runbooks/${runbookId}`, { name: 'disk cleanup', script: V2, description: '# Disk full' })).json()).toMatchObject({ version: 2 });
    browser = await openBrowser();
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
    await env?.close();
  });
  afterEach(() => {
    expect(browser.consoleErrors.filter((line) => !refused.test(line))).toEqual([]);
    browser.consoleErrors.length = 0;
  });

  const ruleNamed = async (name: string) => (await env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === name);

  /** The wizard from its start to its runbook step, for a rule on the host the alert names. */
  async function toRunbookStep(name: string) {
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill(name);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Infrastructure and target' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Runbook', exact: true }).waitFor();
  }

  async function toReview() {
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Review and create' }).waitFor();
  }

  it('runs a stored runbook that it follows, and the execution shows the script that ran, its version and SHA-256', async () => {
    await toRunbookStep('clean disk');
    await page.getByRole('radio', { name: /^A stored runbook/ }).check();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('pick the runbook the rule runs').waitFor();
    await page.getByLabel('Runbook', { exact: true }).selectOption({ label: 'disk cleanup' });
    expect(await page.getByRole('radio', { name: /^Follow the latest/ }).isChecked()).toBe(true);
    await page.getByText('Each run takes the runbook’s latest version (now version 2)').waitFor();
    await expect.poll(() => page.getByLabel('script of the runbook').textContent()).toBe(V2);
    await toReview();
    await expect.poll(() => page.locator('.settings').innerText()).toContain('Script · autofix · runbook “disk cleanup”, following its latest version (now 2) · timeout 300 s (5 min)');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'clean disk' }).waitFor();
    await expect.poll(() => page.locator('[data-rule-runbook]').innerText()).toBe('disk cleanup, following its latest version: version 2 runs now · read version 2');

    const rule = await ruleNamed('clean disk');
    expect(rule.action.runbook).toMatchObject({ runbookId, name: 'disk cleanup', resolvedVersion: 2, sha256: sha256(V2) });
    expect(rule.action.runbook).not.toHaveProperty('version');
    const reply = await env.webhook(rule.trigger.triggerId, { HostName: 'web-1' });
    expect(reply.statusCode, reply.body).toBe(202);

    const execution = page.getByRole('link', { name: /^execution .* on web-1: succeeded$/ });
    await execution.waitFor({ timeout: 20_000 });
    await execution.click();
    await page.getByText('cleanup v2 on web-1').waitFor();
    await expect.poll(() => page.locator('[data-execution-runbook]').innerText()).toBe('runbook disk cleanup version 2');
    await page.locator('[data-execution-runbook]').getByRole('link', { name: 'disk cleanup version 2' }).click();
    await page.getByRole('heading', { name: 'disk cleanup · version 2' }).waitFor();
    await page.goBack();
    await expect.poll(() => page.getByLabel('script that ran').textContent()).toBe(V2);
    expect(await page.locator('[data-sha256]').innerText()).toBe(sha256(V2));

    // A save of the runbook is what the rule runs from then on: its page says so.
    expect((await env.api('PUT', `/api/v1/runbooks/${runbookId}`, { name: 'disk cleanup', script: V3, description: '# Disk full' })).json()).toMatchObject({ version: 3 });
    await page.goto(`${base}/rules/${rule.id}`);
    await expect.poll(() => page.locator('[data-rule-runbook]').innerText()).toBe('disk cleanup, following its latest version: version 3 runs now · read version 3');
  }, 60_000);

  it('pins a version, and stores what is written in the wizard as a new runbook, with a taken name refused at its field', async () => {
    await toRunbookStep('restart web');
    await page.getByRole('radio', { name: /^Save what I write as a new runbook/ }).check();
    await page.getByLabel('Name of the new runbook').fill('disk cleanup');
    await page.locator('.cm-content').fill(RESTART);
    await page.getByLabel('Notes for people (Markdown, optional)').fill('Restarts **nginx**.');
    await page.getByRole('radio', { name: /^Pin a version/ }).check();
    await toReview();
    await expect.poll(() => page.locator('.settings').innerText()).toContain('new runbook “disk cleanup”, stored when you create the rule, pinned to version 1 · sh · 3 lines');
    await page.getByRole('button', { name: 'Create rule' }).click();
    // The name is taken: the wizard goes back to the runbook step, the service's words at the field.
    const nameField = page.locator('.field', { has: page.getByLabel('Name of the new runbook') });
    await expect.poll(() => nameField.locator('.field-error').innerText()).toBe(`already the name of runbook ${runbookId}`);
    expect(await ruleNamed('restart web')).toBeUndefined();

    await page.getByLabel('Name of the new runbook').fill('restart web service');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'restart web' }).waitFor();
    const stored = (await env.api('GET', '/api/v1/runbooks?search=restart%20web%20service')).json().items[0];
    expect((await env.api('GET', `/api/v1/runbooks/${stored.id}`)).json()).toMatchObject({ version: 1, script: RESTART, description: 'Restarts **nginx**.', interpreter: 'sh' });
    const rule = await ruleNamed('restart web');
    expect(rule.action.runbook).toMatchObject({ runbookId: stored.id, version: 1, resolvedVersion: 1 });
    await expect.poll(() => page.locator('[data-rule-runbook]').innerText()).toBe('restart web service, pinned to version 1 · read version 1');

    // Editing keeps the stored runbook; pinning the older version of another is one choice away.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('button', { name: /Runbook$/ }).click();
    expect(await page.getByRole('radio', { name: /^A stored runbook/ }).isChecked()).toBe(true);
    await page.getByLabel('Runbook', { exact: true }).selectOption({ label: 'disk cleanup' });
    await page.getByRole('radio', { name: /^Pin a version/ }).check();
    await page.getByLabel('Version', { exact: true }).selectOption('1');
    await expect.poll(() => page.getByLabel('script of the runbook').textContent()).toBe(V1);
    await page.getByRole('button', { name: /Review and create$/ }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('[data-rule-runbook]').innerText()).toBe('disk cleanup, pinned to version 1 · read version 1');
    expect((await ruleNamed('restart web')).action.runbook).toMatchObject({ runbookId, version: 1, resolvedVersion: 1, sha256: sha256(V1) });
  }, 60_000);

  it('names the rules that use a runbook, and shows the refusal to delete it as the service words it', async () => {
    await signInAs(page, base, env.tenant.token, `/runbooks/${runbookId}`);
    await page.getByRole('heading', { name: 'disk cleanup' }).waitFor();
    await expect.poll(() => page.locator('[data-used-by]').innerText()).toMatch(/^(clean disk \(the latest\), restart web \(pinned to 1\)|restart web \(pinned to 1\), clean disk \(the latest\))$/);
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete runbook' }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe('runbook "disk cleanup" is used by 2 rules: "clean disk", "restart web"; change them to another runbook, or delete them, first');
    expect((await env.api('GET', `/api/v1/runbooks/${runbookId}`)).statusCode).toBe(200);
  }, 60_000);
});
