import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptRule, type TestEnv } from '../support/app.js';
import { openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { startTestIdp, type TestClient, type TestIdp } from '../support/oidc-provider.js';
import { PASSWORD } from '../support/people.js';
import { uiSession } from '../support/ui-session.js';

// Issue 37, "Done when": one story in Chromium against a real server and a real OpenID provider
// (oidc-provider, its development login screens). The first owner comes in through the bootstrap
// link, adds an enterprise provider (group claim → role, users created at first sign-in) on the
// Single sign-on page and registers its redirect URI at the IdP, invites a viewer who comes in
// through the link in a browser of their own and can change nothing; a third person signs in with
// the provider's button, gets the operator's UI and turns a rule off; the owner reads all of it in
// the audit log.

const OWNER = 'owner@example.com';
const VIEWER = 'viewer@example.com';
const OPERATOR = 'cy@corp.test';
const CLIENT_SECRET = 'an-enterprise-client-secret';
const RULE = 'restart nginx';

describe('identity from first sign-in to the audit log, in Chromium', () => {
  // 401: the signed-out checks of the sign-in pages.
  const ui = uiSession({ refusedStatuses: [401] });
  let env: TestEnv;
  let page: Page;
  let base: string;
  let idp: TestIdp;
  let viewer: BrowserSession;
  let operator: BrowserSession;
  // Registered at the IdP once the owner has read it on the Single sign-on page.
  let client: TestClient | undefined;

  beforeAll(async () => {
    ({ env, page, base } = ui);
    expect((await env.api('POST', '/api/v1/rules', scriptRule({ name: RULE }))).statusCode).toBe(201);
    idp = await startTestIdp(() => (client ? [client] : []), { cy: { email: OPERATOR, email_verified: true, name: 'Cy', groups: ['sre'] } });
    viewer = await openBrowser();
    operator = await openBrowser();
  });
  afterAll(async () => {
    await operator?.close();
    await viewer?.close();
    await idp?.close();
  });

  const nav = (on: Page) => on.getByRole('navigation', { name: 'main' });
  const userMenu = (on: Page) => on.locator('.user-menu');
  const buttonOrLink = (on: Page, name: string) => on.getByRole('button', { name, exact: true }).or(on.getByRole('link', { name, exact: true }));

  async function setPassword(on: Page): Promise<void> {
    await on.getByLabel('Choose a password').fill(PASSWORD);
    await on.getByLabel('Repeat the password').fill(PASSWORD);
    await on.getByRole('button', { name: 'Set password and sign in' }).click();
  }

  it('lets the first owner in through the bootstrap link with an e-mail and a password', async () => {
    await page.goto(base + env.tenant.signInPath!);
    await page.getByLabel('E-mail').fill(OWNER);
    await setPassword(page);
    await nav(page).waitFor();
    await expect.poll(() => userMenu(page).innerText()).toMatch(new RegExp(`${OWNER}\\s*owner`));
  });

  it('lets the owner add an enterprise OpenID provider on the Single sign-on page, which shows the redirect URI to register', async () => {
    await nav(page).getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByRole('button', { name: 'Add a provider' }).click();
    await page.getByLabel('Name').fill('Keycloak');
    await page.getByLabel('Issuer').fill(idp.issuer);
    await page.getByLabel('Client id').fill('pitcrew');
    await page.getByLabel('Client secret').fill(CLIENT_SECRET);
    // This IdP, as Keycloak and Okta do, gives the groups claim only for the groups scope.
    await page.getByLabel('Scopes').fill('openid email profile groups');
    await page.getByLabel('Role mapping (JSON)').fill(JSON.stringify({ claim: 'groups', groups: { sre: 'operator' } }));
    expect(await page.getByLabel('Create a user at their first sign-in').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Add provider' }).click();

    const row = page.locator('tr[data-provider="Keycloak"]');
    await expect.poll(() => row.innerText()).toMatch(/OpenID Connect\s+http:\/\/127\.0\.0\.1:\d+\s+http:\/\/127\.0\.0\.1:\d+\/api\/v1\/auth\/sso\/\S+\/callback\s+created at first sign-in\s+on/);
    expect(await row.innerText()).not.toContain(CLIENT_SECRET);
    const redirectUri = await row.locator('td').nth(3).innerText();
    expect(redirectUri).toMatch(new RegExp(`^${base}/api/v1/auth/sso/[0-9a-f-]+/callback$`));
    client = { client_id: 'pitcrew', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri] };
    await saveScreenshot(page, 'identity-e2e-sso');
  });

  let inviteUrl: string;
  it('lets the owner invite a viewer on the Users page', async () => {
    await nav(page).getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Invite by e-mail').fill(VIEWER);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const dialog = page.getByRole('dialog');
    inviteUrl = await dialog.getByLabel('One-time link').innerText();
    expect(inviteUrl).toMatch(new RegExp(`^${base}/accept/`));
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await expect.poll(() => page.locator(`tr[data-user="${VIEWER}"]`).locator('td').nth(2).innerText()).toBe('invited');
  });

  it('lets the viewer in through the invitation, in a browser of their own, to a UI with nothing to change', async () => {
    const on = viewer.page;
    await on.goto(inviteUrl);
    await setPassword(on);
    await nav(on).waitFor();
    await expect.poll(() => userMenu(on).innerText()).toMatch(new RegExp(`${VIEWER}\\s*viewer`));
    await on.getByRole('link', { name: RULE }).waitFor();
    expect(await on.getByRole('link', { name: /New rule/ }).count()).toBe(0);
    expect(await on.getByRole('switch', { name: new RegExp(RULE) }).isDisabled()).toBe(true);
    for (const name of ['Users', 'Audit log']) expect(await nav(on).getByRole('link', { name }).count(), name).toBe(0);
    await on.getByRole('link', { name: RULE }).click();
    await on.getByRole('heading', { name: RULE }).waitFor();
    for (const name of ['Run now', 'Edit', 'Delete']) expect(await buttonOrLink(on, name).count(), name).toBe(0);
    await saveScreenshot(on, 'identity-e2e-viewer');
  });

  it("signs a third person in with the provider's button, through the IdP's login form, to the operator's UI", async () => {
    const on = operator.page;
    await on.goto(`${base}/signin?tenant=default`);
    await on.getByRole('link', { name: 'Continue with Keycloak' }).click();
    // The IdP's own pages (oidc-provider's development login and consent screens).
    await on.waitForURL(`${idp.issuer}/**`);
    await on.locator('input[name="login"]').fill('cy');
    await on.locator('input[name="password"]').fill('any');
    await on.getByRole('button', { name: 'Sign-in' }).click();
    await on.getByRole('button', { name: 'Continue' }).click();

    // A fresh browser: nothing of an earlier session tells the page to ask who signed in.
    await nav(on).waitFor();
    expect(new URL(on.url()).origin).toBe(base);
    await expect.poll(() => userMenu(on).innerText()).toMatch(new RegExp(`${OPERATOR}\\s*operator`));
    await on.getByRole('link', { name: RULE }).waitFor();
    expect(await on.getByRole('link', { name: /New rule/ }).count()).toBe(0);
    expect(await on.getByRole('switch', { name: new RegExp(RULE) }).isEnabled()).toBe(true);
    await on.getByRole('link', { name: RULE }).click();
    await on.getByRole('heading', { name: RULE }).waitFor();
    await on.getByRole('button', { name: 'Run now', exact: true }).waitFor();
    for (const name of ['Edit', 'Delete']) expect(await buttonOrLink(on, name).count(), name).toBe(0);
    await saveScreenshot(on, 'identity-e2e-operator');
  });

  it('lets the operator turn the rule off', async () => {
    const on = operator.page;
    await nav(on).getByRole('link', { name: 'Rules' }).click();
    await on.getByRole('switch', { name: `Turn off ${RULE}` }).click();
    await on.getByRole('dialog').getByRole('button', { name: 'Turn off' }).click();
    await on.getByRole('switch', { name: `Turn on ${RULE}` }).waitFor();
    const rules = (await env.api('GET', '/api/v1/rules')).json() as { items: { name: string; enabled: boolean }[] };
    expect(rules.items.find((rule) => rule.name === RULE)?.enabled).toBe(false);
  });

  it('shows the owner the invitation, the single sign-on and the change in the audit log: who, via what, before and after', async () => {
    await nav(page).getByRole('link', { name: 'Audit log' }).click();
    const entry = (action: string) => page.locator(`tr[data-action="${action}"]`);
    await expect.poll(() => entry('user.invite').innerText()).toMatch(new RegExp(`${OWNER}\\s+link\\s+127.0.0.1\\s+user.invite\\s+user`));
    await expect.poll(() => entry('session.start').filter({ hasText: OPERATOR }).innerText()).toMatch(new RegExp(`${OPERATOR}\\s+oidc\\s+127.0.0.1\\s+session.start\\s+session`));
    await entry('session.start').filter({ hasText: OPERATOR }).getByRole('button', { name: 'Changes' }).click();
    await expect.poll(() => page.getByLabel('before and after').innerText()).toMatch(/provider\.name\s+\(none\) → "Keycloak"/);
    await entry('session.start').filter({ hasText: OPERATOR }).getByRole('button', { name: 'Hide changes' }).click();

    const change = entry('rule.update');
    await expect.poll(() => change.innerText()).toMatch(new RegExp(`${OPERATOR}\\s+oidc\\s+127.0.0.1\\s+rule.update\\s+rule`));
    await change.getByRole('button', { name: 'Changes' }).click();
    await expect.poll(() => page.getByLabel('before and after').innerText()).toMatch(/^enabled\s+true → false/);
    await saveScreenshot(page, 'identity-e2e-audit');
  });
});
