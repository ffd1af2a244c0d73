import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../support/app.js';
import { chooseTokenSignIn, failResponses, goByKeys, holdResponses as holdResponsesOf, signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';
import type { BootstrapResult } from '../../src/tenants/bootstrap.js';
import { newId } from '../../src/store/ids.js';

// Each page in its other states (loading, empty, failed), the errors people make, and the
// actions with consequences, in Chromium against a real server.
describe('web UI pages', () => {
  // Refused calls are part of these stories, and Chromium logs each one it sees.
  const ui = uiSession({
    refusedStatuses: [401, 404, 409, 503],
    setup: async (env) => {
      await env.enrol('web-1', ['web', 'eu']);
      await env.enrol('web-2', ['web', 'us']);
    },
  });
  let env: TestEnv;
  let page: Page;
  let base: string;
  beforeAll(() => ({ env, page, base } = ui));

  const nav = (name: string) => page.getByRole('navigation', { name: 'main' }).getByRole('link', { name });

  const asTenant = (tenant: BootstrapResult, path = '/') => signInAs(page, base, tenant.token, path);
  const holdResponses = (pattern: string) => holdResponsesOf(page, pattern);

  it('refuses an unknown token at the field, keeps nothing, and names the way to get one', async () => {
    await page.goto(`${base}/rules`);
    await expect.poll(() => page.url()).toBe(`${base}/sign-in`);
    await chooseTokenSignIn(page);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('paste the management token printed by npx pitcrew bootstrap --json').waitFor();
    await page.getByLabel('Management token').fill('pct_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('the bearer token is unknown, expired or revoked').waitFor();
    expect(await page.getByLabel('Management token').getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.getByText('npx pitcrew bootstrap --json', { exact: true }).count()).toBe(1);
  });

  it('ends a session whose token stops working and says why', async () => {
    await asTenant(env.tenant, '/hosts');
    await page.evaluate(`sessionStorage.setItem('pitcrew.token', 'pct_${'ab'.repeat(32)}')`);
    // The hosts page refreshes itself: its own next call may meet the refused token before the
    // click does (CI saw the link vanish mid-click). Either way the session must end, with why.
    await nav('Executions').click({ timeout: 2_000 }).catch(() => undefined);
    await page.waitForURL(`${base}/sign-in`);
    await expect.poll(() => page.locator('.sign-in-card').innerText(), { timeout: 10_000 }).toMatch(/Your session ended: the bearer token is unknown, expired or revoked/);
  });

  it('shows every list loading, then empty with the next step to take', async () => {
    const fresh = await env.addTenant('fresh');
    await page.goto(`${base}/sign-in`);
    await page.evaluate('sessionStorage.clear()');
    await page.goto(`${base}/rules`);
    await chooseTokenSignIn(page);
    await page.getByLabel('Management token').fill(fresh.token);
    const release = await holdResponses('**/api/v1/rules?*');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Loading rules…').waitFor();
    await release();
    await page.getByText('No rules yet').waitFor();
    await page.getByRole('link', { name: 'Create your first rule' }).waitFor();

    const executions = await holdResponses('**/api/v1/executions?*');
    await nav('Executions').click();
    await page.getByText('Loading executions…').waitFor();
    await executions();
    await page.getByText('Nothing has run yet').waitFor();

    const escalations = await holdResponses('**/api/v1/escalations?*');
    await nav('Escalations').click();
    await page.getByText('Loading escalations…').waitFor();
    await escalations();
    await page.getByText('Nothing is waiting for a person').waitFor();

    const hosts = await holdResponses('**/api/v1/hosts?*');
    await nav('Hosts').click();
    await page.getByText('Loading hosts…').waitFor();
    await hosts();
    await page.getByText('No host has an agent yet').waitFor();
    const start = await page.getByLabel('start command').innerText();
    expect(start).toBe(`node pitcrew-agent.mjs --server ${env.listening!.httpsUrl} --server-fingerprint ${env.listening!.fingerprint}`);
    expect(await page.getByLabel('install command').innerText()).toMatch(new RegExp(`^curl -fsSLo pitcrew-agent.mjs '${base}/downloads/pitcrew-agent.mjs' && echo '[0-9a-f]{64}  pitcrew-agent.mjs' \\| sha256sum -c -$`));

    const keys = await holdResponses('**/api/v1/api-keys?*');
    await nav('API keys').click();
    await page.getByText('Loading API keys…').waitFor();
    await keys();
    await page.locator('tr[data-key="bootstrap"]').waitFor();
  });

  it("shows the service's error where the data would be, and recovers on Retry", async () => {
    await asTenant(env.tenant, '/rules');
    const recover = await failResponses(page, '**/api/v1/hosts?*', 'the sqlite database at /data/pitcrew.db does not answer');
    await nav('Hosts').click();
    const banner = page.getByRole('alert');
    await banner.getByText('Could not load hosts. the sqlite database at /data/pitcrew.db does not answer').waitFor();
    await recover();
    await banner.getByRole('button', { name: 'Retry' }).click();
    await page.locator('tr[data-host="web-1"]').waitFor();
  });

  it('puts validation errors at the field: its own quick checks, and what the service refuses', async () => {
    await env.createWebhookRule({ name: 'taken name' });
    await asTenant(env.tenant, '/rules/new');
    await page.getByRole('button', { name: 'Next' }).click();
    const name = page.getByLabel('Rule name');
    await page.getByText('give the rule a name people will recognise in an alert').waitFor();
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    await name.fill('taken name');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('One specific host').click();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('pick the host to act on').waitFor();
    await page.getByRole('option', { name: /web-2/ }).click();
    expect(await page.getByLabel('Host', { exact: true }).inputValue()).toBe('web-2');
    for (let step = 0; step < 3; step += 1) await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    // 409 from the service, with the field it concerns: back on step 1, at the name.
    await page.getByText('already used by another rule').waitFor();
    await page.getByRole('heading', { name: 'Trigger' }).waitFor();
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("aria-invalid")')).toBe('true');
    await name.fill('restart on web-2');
    await page.getByRole('button', { name: 'Next' }).click();
    // Every step was reached before, so the stepper goes straight to the end.
    await page.getByRole('button', { name: /Review and create/ }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'restart on web-2' }).waitFor();
    const created = (await env.api('GET', '/api/v1/rules?search=restart%20on%20web-2')).json().items[0];
    expect(created.target).toEqual({ type: 'specific_host', hostname: 'web-2' });
  });

  it('edits a rule through the same wizard and keeps its webhook URL', async () => {
    const rule = await env.createWebhookRule({ name: 'to be renamed' });
    await asTenant(env.tenant, `/rules/${rule.id}`);
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('Rule name').fill('renamed');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: /Review and create/ }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'renamed' }).waitFor();
    const saved = (await env.api('GET', `/api/v1/rules/${rule.id}`)).json();
    expect(saved).toMatchObject({ name: 'renamed', trigger: { triggerId: rule.triggerId } });
  });

  it('cancels an execution after saying what that does', async () => {
    const rule = await env.createWebhookRule({ name: 'waits for an agent' });
    const [id] = (await env.webhook(rule.triggerId, { HostName: 'web-1' })).json().executionIds;
    await asTenant(env.tenant, `/executions/${id}`);
    await page.getByText('queued', { exact: true }).first().waitFor();
    await page.getByRole('button', { name: 'Cancel execution' }).click();
    await page.getByRole('dialog').getByText('It has not reached the host yet: it ends now and never runs.').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel execution' }).click();
    await page.locator('.banner', { hasText: 'cancelled before it reached the host' }).waitFor();
    expect((await env.api('GET', `/api/v1/executions/${id}`)).json().state).toBe('cancelled');
  });

  it('shows an event over more hosts than it lists with a link to all its executions', async () => {
    // 101 hosts, written as enrolment leaves them (101 enrolments would be the slow part).
    const now = Date.now();
    const hosts = Array.from({ length: 101 }, (_, i) => ({
      id: newId(now), tenant_id: env.tenant.tenantId, hostname: `wide-${i}`, hostname_key: `wide-${i}`, hostname_short: `wide-${i}`, tags: '["wide"]', agent_tags: '["wide"]', managed_tags: '[]',
      os: 'Linux test', arch: 'x64', agent_version: 'test', token_hash: `hash-${i}`, enrolled_at: now, last_seen_at: null, session_id: null, node_id: null,
    }));
    await env.store.db.insertInto('hosts').values(hosts).execute();
    await env.store.db.insertInto('host_tags').values(hosts.map((h) => ({ host_id: h.id, tenant_id: h.tenant_id, tag: 'wide' }))).execute();
    const rule = await env.createWebhookRule({ name: 'over a wide fleet', target: { type: 'specific_tags', tags: ['wide'] } });
    const { eventId } = (await env.webhook(rule.triggerId, {})).json();
    await asTenant(env.tenant, `/rules/${rule.id}`);
    await page.getByRole('link', { name: 'all 101' }).click();
    await page.waitForURL(`${base}/executions?event=${eventId}`);
    await page.locator('.chip', { hasText: `event: ${eventId.slice(-8)}` }).waitFor();
    // The event's executions only, a page of them.
    await page.getByText(/^wide-\d+$/).first().waitFor();
    expect(await page.getByText(/^wide-\d+$/).count()).toBe(50);
  });

  it('issues a key shown once, and revokes one only after stating the effect', async () => {
    const rule = await env.createWebhookRule({ name: 'keyed' });
    await asTenant(env.tenant, '/api-keys');
    await page.getByLabel('New key name').fill('nagios');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const reveal = page.getByRole('dialog');
    await reveal.getByText('Shown once.').waitFor();
    const issued = await reveal.getByLabel('API key').innerText();
    expect(issued).toMatch(/^[0-9a-f]{64}$/);
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByText(issued).count()).toBe(0);
    expect((await env.webhook(rule.triggerId, {}, { apiKey: issued })).statusCode).toBe(202);

    await page.locator('tr[data-key="nagios"]').getByRole('button', { name: 'Revoke and regenerate' }).click();
    const confirm = page.getByRole('dialog');
    await expect.poll(() => confirm.innerText()).toMatch(/stops working at once[\s\S]*refused \(401\)[\s\S]*A new key named “nagios” is issued and shown once/);
    await confirm.getByRole('button', { name: 'Revoke and issue a new key' }).click();
    await page.getByRole('dialog').getByText('Shown once.').waitFor();
    const replacement = await page.getByRole('dialog').getByLabel('API key').innerText();
    expect(replacement).not.toBe(issued);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.locator('tr[data-key="nagios"]', { hasText: 'revoked' }).waitFor();
    expect((await env.webhook(rule.triggerId, {}, { apiKey: issued })).statusCode).toBe(401);
    expect((await env.webhook(rule.triggerId, {}, { apiKey: replacement })).statusCode).toBe(202);
  });

  it('asks before Escape closes a key shown once, and keeps the page from unloading while it shows', async () => {
    await asTenant(env.tenant, '/api-keys');
    await page.getByLabel('New key name').fill('zabbix');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const reveal = page.getByRole('dialog');
    const key = reveal.getByLabel('API key');
    await reveal.getByText('Shown once.').waitFor();
    const issued = await key.innerText();
    const unloadRefused = () => page.evaluate("(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })()");
    await expect.poll(unloadRefused).toBe(true);

    await page.keyboard.press('Escape');
    const ask = reveal.getByRole('alert');
    await ask.getByText('Close without the key?').waitFor();
    expect(await key.innerText()).toBe(issued);
    // Pressed over and over, Escape never closes it (Chromium closes a dialog on a second Escape
    // without a click between, whatever its cancel handler says).
    for (let i = 0; i < 3; i++) await page.keyboard.press('Escape');
    expect(await reveal.isVisible()).toBe(true);
    await ask.getByText('Close without the key?').waitFor();
    expect(await key.innerText()).toBe(issued);
    await ask.getByRole('button', { name: 'Back to the key' }).click();
    await expect.poll(() => ask.count()).toBe(0);

    // Other close requests (a phone's back gesture) ask too; and should one close the dialog anyway
    // (Chromium does so to the second without a click between, whatever the cancel handler says), it
    // opens again, asking.
    for (const close of ['requestClose', 'close'] as const) {
      await page.evaluate(`document.querySelector('dialog[open]').${close}()`);
      await ask.getByText('Close without the key?').waitFor();
      await expect.poll(() => reveal.isVisible()).toBe(true);
      expect(await key.innerText()).toBe(issued);
      await ask.getByRole('button', { name: 'Back to the key' }).click();
    }

    await page.keyboard.press('Escape');
    await reveal.getByRole('button', { name: 'Close, I have stored it' }).click();
    await expect.poll(() => page.getByText(issued).count()).toBe(0);
    expect(await unloadRefused()).toBe(false);
  });

  it('filters executions by rule, with the rule in the URL', async () => {
    const cleanup = await env.createWebhookRule({ name: 'clean tmp' });
    const restart = await env.createWebhookRule({ name: 'restart php' });
    const [cleaned] = (await env.webhook(cleanup.triggerId, { HostName: 'web-1' })).json().executionIds;
    const [restarted] = (await env.webhook(restart.triggerId, { HostName: 'web-2' })).json().executionIds;
    const row = (id: string) => page.locator(`a[aria-label^="execution ${id} "]`);
    await asTenant(env.tenant, '/executions');
    await row(cleaned).waitFor();
    await row(restarted).waitFor();

    await Promise.all([
      page.waitForRequest((request) => new URL(request.url()).searchParams.get('ruleId') === cleanup.id),
      page.getByLabel('Rule').selectOption({ label: 'clean tmp' }),
    ]);
    await expect.poll(() => page.url()).toBe(`${base}/executions?rule=${cleanup.id}`);
    await expect.poll(() => row(restarted).count()).toBe(0);
    expect(await row(cleaned).count()).toBe(1);

    // A reload (or a shared link) keeps it, and the other filters combine with it.
    await page.reload();
    await row(cleaned).waitFor();
    expect(await page.getByLabel('Rule').inputValue()).toBe(cleanup.id);
    await page.getByLabel('Filter by hostname').fill('web-2');
    await page.getByText('No execution matches these filters').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await row(restarted).waitFor();
    expect(await page.getByLabel('Rule').inputValue()).toBe('');
  });

  it("edits a host's tags, keeping the agent's own", async () => {
    await asTenant(env.tenant, '/hosts');
    const row = page.locator('tr[data-host="web-2"]');
    await row.getByRole('button', { name: 'edit tags of web-2' }).click();
    const input = row.getByRole('textbox');
    await input.fill('payments');
    await input.press('Enter');
    await row.getByRole('button', { name: 'Save tags' }).click();
    await row.getByText('payments').waitFor();
    const host = (await env.api('GET', '/api/v1/hosts?hostname=web-2')).json().items[0];
    expect(host).toMatchObject({ managedTags: ['payments'], tags: ['payments', 'us', 'web'] });
  });

  it('answers the keyboard: g then a letter to go, n for a new rule, / to search, ? for help', async () => {
    await env.createWebhookRule({ name: 'keyboard target' });
    await asTenant(env.tenant, '/rules');
    await page.getByRole('heading', { name: 'Rules' }).waitFor();
    await goByKeys(page, 'h', /\/hosts$/);
    await page.getByRole('heading', { name: 'Hosts' }).waitFor();
    await goByKeys(page, 'r', /\/rules$/);
    await page.getByRole('heading', { name: 'Rules' }).waitFor();
    await page.keyboard.press('/');
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Search rules by name');
    await page.keyboard.type('keyboard');
    await expect.poll(() => page.url()).toBe(`${base}/rules?q=keyboard`);
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.keyboard.press('Escape');
    await page.locator('body').click({ position: { x: 700, y: 850 } });
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.keyboard.press('n');
    await page.getByRole('heading', { name: 'New rule' }).waitFor();
  });

  it("shows the service's answer for a rule or an execution that does not exist", async () => {
    await asTenant(env.tenant, '/rules/0190a4a4-0000-7000-8000-000000000000');
    await page.getByText('Could not load the rule. rule 0190a4a4-0000-7000-8000-000000000000 does not exist in this tenant').waitFor();
    await page.goto(`${base}/executions/0190a4a4-0000-7000-8000-000000000000`);
    await page.getByText('Could not load the execution. execution 0190a4a4-0000-7000-8000-000000000000 does not exist in this tenant').waitFor();
  });

  it('says so when no page has an address, and offers the way back', async () => {
    await asTenant(env.tenant, '/nowhere');
    await page.getByText('There is no page at /nowhere').waitFor();
    await page.getByRole('link', { name: 'rules', exact: true }).click();
    await page.getByRole('heading', { name: 'Rules' }).waitFor();
  });
});
