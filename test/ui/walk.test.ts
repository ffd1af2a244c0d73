import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { openBrowser, signIn, type BrowserSession } from '../support/browser.js';

// The path of the issue, in a real browser against a real server and a real agent: create a
// webhook rule with the wizard, copy its curl, fire it, watch the execution succeed with live
// output, turn the rule off, fire again, and see the event recorded with no execution.
describe('the web UI walk: rule to live execution and back', () => {
  let env: TestEnv;
  let agent: AgentProcess;
  let browser: BrowserSession;
  let page: Page;
  let gate: string;

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true, webUi: true });
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'web-1', tags: ['web', 'eu'], fingerprint });
    await waitOnline(env.api, 'web-1');
    browser = await openBrowser();
    page = browser.page;
    gate = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-walk-'));
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
    await env?.close();
    fs.rmSync(gate, { recursive: true, force: true });
  });

  /** Runs the copied curl as a shell would, with the key in the environment it expects. */
  async function runCurl(curl: string): Promise<{ eventId: string; outcome: string; executionIds: string[] }> {
    // Asynchronous: the server answering it runs in this process.
    const { stdout } = await promisify(execFile)('sh', ['-c', curl], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PITCREW_API_KEY: env.tenant.apiKey } });
    return JSON.parse(stdout);
  }

  it('creates a webhook rule with the wizard, runs it live from its curl, turns it off and records the next alarm only', async () => {
    const base = env.listening!.httpUrl;
    await signIn(page, base, env.tenant.token);
    await expect.poll(() => page.url()).toBe(`${base}/rules`);
    await page.getByText('No rules yet').waitFor();

    // The wizard, step by step.
    await page.getByRole('link', { name: 'Create your first rule' }).click();
    await page.getByLabel('Rule name').fill('drain web');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Hosts with tags').click();
    const tags = page.getByRole('textbox', { name: 'Tags' });
    await tags.fill('web');
    await tags.press('Enter');
    await page.getByText('1 host matches').waitFor();
    await page.getByText('web-1', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    // The script waits for the test's signal, so the page must show output before the run ends.
    const script = `echo "first on $PITCREW_HOSTNAME for $AlarmName"\nwhile [ ! -e '${gate}/go' ]; do sleep 0.05; done\necho second\n`;
    const editor = page.locator('.cm-content');
    await editor.fill(script);
    await expect.poll(() => editor.innerText()).toContain('first on $PITCREW_HOSTNAME');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'drain web' }).waitFor();

    const rule = (await env.api('GET', '/api/v1/rules')).json().items[0];
    expect(rule).toMatchObject({ name: 'drain web', enabled: true, target: { type: 'specific_tags', tags: ['web'] }, action: { runbook: { script } } });
    expect(page.url()).toBe(`${base}/rules/${rule.id}`);

    // Copy the curl from the page and fire it.
    await page.getByRole('button', { name: 'Copy curl' }).click();
    await page.getByRole('button', { name: 'Copied ✓' }).waitFor();
    const curl = await page.evaluate<string>('navigator.clipboard.readText()');
    // The rule as this browser's address reaches it: the curl names the URL the person used.
    const seen = (await (await fetch(`${base}/api/v1/rules/${rule.id}`, { headers: { authorization: `Bearer ${env.tenant.token}` } })).json()) as { trigger: { curl: string } };
    expect(curl).toBe(seen.trigger.curl);
    expect(curl).toContain(`${base}/api/v1/trigger/channel/webhook/\${PITCREW_API_KEY}/${rule.trigger.triggerId}`);
    const fired = await runCurl(curl);
    expect(fired).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
    const [executionId] = fired.executionIds;

    // The event shows up on its own, and leads to its execution, which streams while it runs.
    const accepted = page.locator('tr[data-outcome="accepted"]');
    await accepted.waitFor();
    await accepted.getByRole('link', { name: executionId!.slice(-8) }).click();
    const stdout = page.locator('pre[data-stream="stdout"]');
    await stdout.getByText('first on web-1 for disk_full').waitFor();
    await page.getByText('running', { exact: true }).first().waitFor();
    // Only the live stream can have shown that line: the stored output is written at the end.
    expect((await env.api('GET', `/api/v1/executions/${executionId}`)).json()).toMatchObject({ state: 'running', stdout: '' });

    fs.writeFileSync(path.join(gate, 'go'), '');
    await stdout.getByText('second').waitFor();
    await page.getByText('succeeded', { exact: true }).first().waitFor();
    await expect.poll(async () => page.locator('.facts').innerText()).toMatch(/Exit code\s*0/i);

    // Turn the rule off: the page says what that means first.
    await page.getByRole('link', { name: 'drain web' }).click();
    await page.getByRole('switch', { name: 'Turn off drain web' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.innerText()).toMatch(/Alarms are still recorded.*no action runs/s);
    await dialog.getByRole('button', { name: 'Turn off' }).click();
    await page.getByText('This rule is off.').waitFor();
    expect((await env.api('GET', `/api/v1/rules/${rule.id}`)).json().enabled).toBe(false);

    // Fired again: recorded, nothing runs.
    const second = await runCurl(curl);
    expect(second).toMatchObject({ outcome: 'rule_off', executionIds: [] });
    const recorded = page.locator('tr[data-outcome="rule_off"]');
    await recorded.waitFor();
    expect(await recorded.innerText()).toMatch(/rule off[\s\S]*none/);
    expect((await env.api('GET', `/api/v1/executions?ruleId=${rule.id}`)).json().items).toHaveLength(1);

    // The dashboard sums it up.
    await page.getByRole('link', { name: 'Rules' }).click();
    const row = page.getByRole('row', { name: /drain web/ });
    await expect.poll(() => row.innerText()).toMatch(/Off: alarms recorded, no action runs[\s\S]*rule off[\s\S]*succeeded/);

    expect(browser.consoleErrors).toEqual([]);
  });

  it('downloads the files a diagnostics run collected', async () => {
    const rule = await env.createWebhookRule({
      name: 'collect disk report',
      target: { type: 'specific_host', hostname: 'web-1' },
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'printf "disk ok on %s" "$PITCREW_HOSTNAME" > "$PITCREW_ARTIFACTS/report.txt"' } },
    });
    const [id] = (await env.webhook(rule.triggerId, {})).json().executionIds;
    await page.goto(`${env.listening!.httpUrl}/executions/${id}`);
    const artifact = page.getByRole('button', { name: 'report.txt' });
    await artifact.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), artifact.click()]);
    expect(download.suggestedFilename()).toBe('report.txt');
    expect(fs.readFileSync(await download.path(), 'utf8')).toBe('disk ok on web-1');
    expect(browser.consoleErrors).toEqual([]);
  });
});
