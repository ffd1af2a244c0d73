import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptRule, type TestEnv } from '../support/app.js';
import { openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { PASSWORD } from '../support/people.js';
import { uiSession } from '../support/ui-session.js';

// Issue 37, the web UI in Chromium against a real server: the first owner comes in through the
// bootstrap link, invites a viewer who comes in through theirs in a browser of their own, signs
// out and in again with the password, and sees the rules with nothing to change them; a page of
// another origin cannot make a signed-in browser change anything; sign-out ends the session.
// The pictures go to test-results/ui (SCREENSHOT_DIR).

const OWNER = 'owner@example.com';
const VIEWER = 'viewer@example.com';

describe('identity in the web UI', () => {
  // 400: the first owner's link asks for the e-mail; 401: a signed-out check; 403: the refusals
  // proven here; 404: the single sign-on endpoints this build may lack.
  const ui = uiSession({ refusedStatuses: [400, 401, 403, 404] });
  let env: TestEnv;
  let page: Page;
  let base: string;
  let ruleId: string;
  let viewer: BrowserSession;
  beforeAll(async () => {
    ({ env, page, base } = ui);
    const made = await env.api('POST', '/api/v1/rules', scriptRule({ name: 'restart nginx' }));
    expect(made.statusCode, made.body).toBe(201);
    ruleId = (made.json() as { id: string }).id;
    viewer = await openBrowser();
  });
  afterAll(async () => {
    await viewer?.close();
  });

  const userMenu = (on: Page) => on.locator('.user-menu');
  const nav = (on: Page) => on.getByRole('navigation', { name: 'main' });

  async function setPassword(on: Page): Promise<void> {
    await on.getByLabel('New password').fill(PASSWORD);
    await on.getByLabel('Repeat the password').fill(PASSWORD);
    await on.getByRole('button', { name: 'Set password and sign in' }).click();
  }

  it('lets the first owner in through the bootstrap link: the e-mail is asked for, then the password signs them in', async () => {
    expect(env.tenant.signInPath).toMatch(/^\/accept\//);
    await page.goto(base + env.tenant.signInPath!);
    await saveScreenshot(page, 'identity-accept');
    await setPassword(page);
    await page.getByLabel('E-mail').fill(OWNER);
    await saveScreenshot(page, 'identity-accept-first-owner');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await nav(page).waitFor();
    await expect.poll(() => userMenu(page).innerText()).toMatch(new RegExp(`${OWNER}\\s*owner`));
    // A session cookie, not a token in the tab's storage.
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await nav(page).getByRole('link', { name: 'Users' }).waitFor();
  });

  let inviteUrl: string;
  it('invites a viewer on the Users page and shows the link once', async () => {
    await nav(page).getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Invite by e-mail').fill(VIEWER);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const dialog = page.getByRole('dialog');
    inviteUrl = await dialog.getByLabel('One-time link').innerText();
    expect(inviteUrl).toMatch(new RegExp(`^${base}/accept/`));
    await saveScreenshot(page, 'identity-invite');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    const row = page.locator(`tr[data-user="${VIEWER}"]`);
    await expect.poll(() => row.locator('td').nth(2).innerText()).toBe('invited');
    expect(await row.getByLabel(`Role of ${VIEWER}`).inputValue()).toBe('viewer');
    await saveScreenshot(page, 'identity-users');
  });

  it('lets the viewer in through the invitation in a browser of their own, then out and in again with the password', async () => {
    const on = viewer.page;
    await on.goto(inviteUrl);
    await setPassword(on);
    await nav(on).waitFor();
    await expect.poll(() => userMenu(on).innerText()).toMatch(new RegExp(`${VIEWER}\\s*viewer`));
    await userMenu(on).getByRole('button', { name: 'Sign out', exact: true }).click();
    await on.getByLabel('E-mail').fill(VIEWER);
    await on.getByLabel('Password').fill(PASSWORD);
    await saveScreenshot(on, 'identity-sign-in');
    await on.getByRole('button', { name: 'Sign in', exact: true }).click();
    await nav(on).waitFor();
    await expect.poll(() => on.url()).toBe(`${base}/rules`);
  });

  it("shows the viewer the rules with nothing to change them, and the service refuses a change from the viewer's session", async () => {
    const on = viewer.page;
    await on.getByRole('link', { name: 'restart nginx' }).waitFor();
    expect(await on.getByRole('link', { name: /New rule/ }).count()).toBe(0);
    expect(await on.getByRole('switch', { name: /restart nginx/ }).isDisabled()).toBe(true);
    expect(await nav(on).getByRole('link', { name: 'Users' }).count()).toBe(0);
    await on.getByRole('link', { name: 'restart nginx' }).click();
    await on.getByRole('heading', { name: 'restart nginx' }).waitFor();
    for (const name of ['Run now', 'Edit', 'Delete']) {
      expect(await on.getByRole('button', { name, exact: true }).or(on.getByRole('link', { name, exact: true })).count(), name).toBe(0);
    }
    await saveScreenshot(on, 'identity-viewer-rule');

    // The session can still be used by hand, with its CSRF token: the role, not the UI, refuses.
    const status = await on.evaluate(async (id) => {
      const me = (await (await fetch('/api/v1/me')).json()) as { csrfToken: string };
      const reply = await fetch(`/api/v1/rules/${id}`, { method: 'DELETE', headers: { 'x-pitcrew-csrf': me.csrfToken } });
      return reply.status;
    }, ruleId);
    expect(status).toBe(403);
    expect((await env.api('GET', `/api/v1/rules/${ruleId}`)).statusCode).toBe(200);
  });

  it("refuses a form another origin posts with the owner's session cookie, and creates nothing", async () => {
    const rulesBefore = await ruleCount(env);
    const forger = await startForger(`${base}/api/v1/rules`);
    try {
      const answered = page.waitForResponse((response) => response.url() === `${base}/api/v1/rules` && response.request().method() === 'POST');
      await page.goto(forger.url);
      const response = await answered;
      expect(response.status()).toBe(403);
      // The cookie went with it (loopback on another port is the same site): only the missing CSRF token refused it.
      expect((await response.request().allHeaders()).cookie).toMatch(/pitcrew_session=/);
      await page.waitForURL(`${base}/api/v1/rules`);
      expect(JSON.parse(await page.locator('body').innerText())).toMatchObject({ code: 'PITCREW_ERR_CSRF' });
    } finally {
      await forger.close();
    }
    expect(await ruleCount(env)).toBe(rulesBefore);
    await page.goto(`${base}/rules`);
    await nav(page).waitFor();
  });

  it('creates a personal token shown once, and revokes it', async () => {
    await userMenu(page).getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel('New token name').fill('ci deploy');
    await page.getByLabel('Role').selectOption('operator');
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog');
    const token = await dialog.getByLabel('Personal access token').innerText();
    expect(token).toMatch(/^pct_/);
    await saveScreenshot(page, 'identity-token-reveal');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    expect((await env.api('GET', '/api/v1/rules', undefined, token)).statusCode).toBe(200);

    const row = page.locator('tr[data-token="ci deploy"]');
    await expect.poll(() => row.innerText()).toMatch(/operator.*active/s);
    await saveScreenshot(page, 'identity-tokens');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.innerText()).toMatch(/revoked/);
    expect((await env.api('GET', '/api/v1/rules', undefined, token)).statusCode).toBe(401);
  });

  // The audit log and single sign-on settings are built on the audit and sso branches (issue 37.5,
  // 37.3), not in this build: their answers, as those branches' src/identity/audit/entry.ts and
  // src/identity/sso/schema.ts shape them, are emulated here.
  it("shows an admin the audit log: an entry's before and after, filters sent to the service, and the export", async () => {
    const asked: string[] = [];
    await page.route('**/api/v1/audit?*', (route) => {
      asked.push(route.request().url());
      return route.fulfill({
        json: {
          items: [{
            id: '0190bbbb-0000-7000-8000-000000000001', at: new Date().toISOString(), actor: { type: 'user', id: 'u1', email: OWNER }, via: 'password', ip: '127.0.0.1',
            action: 'rule.update', targetType: 'rule', targetId: ruleId, before: { name: 'restart nginx', enabled: true }, after: { name: 'restart nginx', enabled: false },
          }],
          nextCursor: null,
        },
      });
    });
    await nav(page).getByRole('link', { name: 'Audit log' }).click();
    const row = page.locator('tr[data-action="rule.update"]');
    await expect.poll(() => row.innerText()).toMatch(new RegExp(`${OWNER}\\s+password\\s+127.0.0.1\\s+rule.update\\s+rule`));
    await row.getByRole('button', { name: 'Changes' }).click();
    await expect.poll(() => page.getByLabel('before and after').innerText()).toMatch(/enabled\s+true → false/);
    await saveScreenshot(page, 'identity-audit');

    await page.getByLabel('Action').fill('rule.');
    await expect.poll(() => asked.some((url) => new URL(url).searchParams.get('action') === 'rule.')).toBe(true);
    expect(await page.getByRole('link', { name: 'Export JSON lines' }).getAttribute('href')).toBe('/api/v1/audit/export?action=rule.');
  });

  it('lets the owner add a single sign-on provider with a write-only secret, and test its sign-in in a new window', async () => {
    const providers: Record<string, unknown>[] = [];
    const sent: Record<string, unknown>[] = [];
    await page.route('**/api/v1/sso-providers', async (route) => {
      if (route.request().method() === 'GET') return route.fulfill({ json: { items: providers } });
      const body = route.request().postDataJSON() as Record<string, unknown>;
      sent.push(body);
      const id = '0190cccc-0000-7000-8000-000000000001';
      const { clientSecret: _secret, ...shown } = body;
      const startUrl = `/api/v1/auth/sso/${id}/start`;
      providers.push({ ...shown, id, clientSecretSet: true, startUrl, testUrl: `${startUrl}?test=1`, callbackUrl: `${base}${startUrl.replace('start', 'callback')}` });
      return route.fulfill({ status: 201, json: providers.at(-1) });
    });
    await nav(page).getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByRole('button', { name: 'Add a provider' }).click();
    await page.getByLabel('Name').fill('Okta');
    await page.getByLabel('Issuer').fill('https://example.okta.com');
    await page.getByLabel('Client id').fill('pitcrew');
    await page.getByLabel('Client secret').fill('s3cret');
    await page.getByRole('button', { name: 'Add provider' }).click();
    const row = page.locator('tr[data-provider="Okta"]');
    await expect.poll(() => row.innerText()).toMatch(/OpenID Connect\s+https:\/\/example.okta.com/);
    expect(sent[0]).toMatchObject({ type: 'oidc', name: 'Okta', issuer: 'https://example.okta.com', clientId: 'pitcrew', clientSecret: 's3cret', jit: true, required: false });
    await saveScreenshot(page, 'identity-sso');

    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    await page.getByText('A secret is stored; leave blank to keep it').waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.context().route('**/api/v1/auth/sso/*/start?test=1', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><link rel="icon" href="data:,"><p>test sign-in</p>' }));
    const [opened] = await Promise.all([page.context().waitForEvent('page'), row.getByRole('button', { name: 'Test sign-in' }).click()]);
    await expect.poll(() => opened.url()).toBe(`${base}/api/v1/auth/sso/0190cccc-0000-7000-8000-000000000001/start?test=1`);
    await opened.close();
    await page.context().unrouteAll({ behavior: 'ignoreErrors' });
  });

  it('signs out everywhere: the viewer\'s other sessions end too', async () => {
    const other = await viewer.context.newPage();
    await other.goto(`${base}/rules`);
    await nav(other).waitFor();
    await userMenu(viewer.page).getByRole('button', { name: 'Sign out everywhere' }).click();
    await viewer.page.getByLabel('E-mail').waitFor();
    // The other tab's session is gone too: its next call is refused and it lands on the sign-in page.
    await other.reload();
    await other.getByLabel('E-mail').waitFor();
    const me = await other.evaluate(async () => (await fetch('/api/v1/me')).status);
    expect(me).toBe(401);
    await other.close();
  });

  it("gives an admin a member's password reset link, which sets a new password and signs them in", async () => {
    await nav(page).getByRole('link', { name: 'Users' }).click();
    await page.locator(`tr[data-user="${VIEWER}"]`).getByRole('button', { name: 'Reset password' }).click();
    const dialog = page.getByRole('dialog');
    const resetUrl = await dialog.getByLabel('One-time link').innerText();
    expect(resetUrl).toMatch(new RegExp(`^${base}/accept/`));
    await dialog.getByRole('button', { name: 'I have stored it' }).click();

    const on = viewer.page;
    await on.goto(resetUrl);
    await setPassword(on);
    await nav(on).waitFor();
    await expect.poll(() => userMenu(on).innerText()).toMatch(new RegExp(`${VIEWER}\\s*viewer`));
  });

  it("signs out, and the sign-in page offers the tenant's single sign-on buttons and says why one failed", async () => {
    // GET /api/v1/auth/providers is built on the sso branch (issue 37.3), not in this build: its
    // answer, as that branch's src/identity/sso/routes.ts gives it, is emulated here.
    const startUrl = '/api/v1/auth/sso/0190aaaa-0000-7000-8000-000000000001/start';
    await page.route('**/api/v1/auth/providers?tenant=default', (route) =>
      route.fulfill({ json: { items: [{ id: '0190aaaa-0000-7000-8000-000000000001', name: 'Okta', type: 'oidc', startUrl }], passwordSignIn: true } }));
    await userMenu(page).getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('E-mail').waitFor();
    expect(await page.evaluate(async () => (await fetch('/api/v1/me')).status)).toBe(401);
    // The tenant signed in to last is remembered: its buttons show without ?tenant=.
    expect(await page.getByRole('link', { name: 'Continue with Okta' }).getAttribute('href')).toBe(startUrl);
    await page.goto(`${base}/signin?tenant=default&error=${encodeURIComponent('the identity provider says the e-mail a@b.c is not verified')}`);
    await page.getByText('Single sign-on failed: the identity provider says the e-mail a@b.c is not verified').waitFor();
    await page.getByRole('link', { name: 'Continue with Okta' }).waitFor();
    await saveScreenshot(page, 'identity-sign-in-sso');

    // A tenant that requires single sign-on: no password form to fail with.
    await page.route('**/api/v1/auth/providers?tenant=strict', (route) =>
      route.fulfill({ json: { items: [{ id: '0190aaaa-0000-7000-8000-000000000002', name: 'Entra ID', type: 'oidc', startUrl }], passwordSignIn: false } }));
    await page.goto(`${base}/sign-in?tenant=strict`);
    await page.getByText('This tenant signs in with single sign-on only.').waitFor();
    expect(await page.getByLabel('Password').count()).toBe(0);
    await page.getByRole('button', { name: 'Use an API token instead' }).waitFor();
  });
});

async function ruleCount(env: TestEnv): Promise<number> {
  const reply = await env.api('GET', '/api/v1/rules?limit=1000');
  return (reply.json() as { items: unknown[] }).items.length;
}

/** A page of another origin (loopback, another port) that posts a form to `target` as soon as it loads. */
async function startForger(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  // text/plain lets a form send a body that reads as JSON: the closest a cross-site form gets to an API call.
  const html = `<!doctype html><link rel="icon" href="data:,"><form method="POST" action="${target}" enctype="text/plain">
    <input type="hidden" name='{"name":"forged","x":"' value='"}'></form><script>document.forms[0].submit()</script>`;
  const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => {
    server.close(() => resolve());
    // The browser keeps its connection alive: close would wait for it otherwise.
    server.closeAllConnections();
  }) };
}
