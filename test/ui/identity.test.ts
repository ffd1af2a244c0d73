import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptRule, type TestEnv } from '../support/app.js';
import { openBrowser, saveScreenshot, type BrowserSession } from '../support/browser.js';
import { startTestIdp, type TestClient, type TestIdp } from '../support/oidc-provider.js';
import { appendAudit } from '../../src/identity/audit/repository.js';
import { createUser, setMembership } from '../../src/identity/users.js';
import { totpCode } from '../../src/identity/totp.js';
import { PASSWORD } from '../support/people.js';
import { uiSession } from '../support/ui-session.js';

// Issue 37, the web UI in Chromium against a real server: the first owner comes in through the
// bootstrap link, invites a viewer who comes in through theirs in a browser of their own, signs
// out and in again with the password, and sees the rules with nothing to change them; a page of
// another origin cannot make a signed-in browser change anything; sign-out ends the session. The
// audit log, single sign-on settings and sign-in buttons are the service's own, with a real
// OpenID provider (oidc-provider) behind the test sign-in.
// The pictures go to test-results/ui (SCREENSHOT_DIR).

const OWNER = 'owner@example.com';
const VIEWER = 'viewer@example.com';
const SSO_SECRET = 'an-okta-client-secret';

describe('identity in the web UI', () => {
  // 400: the first owner's link asks for the e-mail; 401: a signed-out check; 403: the refusals
  // proven here; 404: the /favicon.ico Chromium asks for when it shows the API's answer to the forged form.
  const ui = uiSession({ refusedStatuses: [400, 401, 403, 404] });
  let env: TestEnv;
  let page: Page;
  let base: string;
  let ruleId: string;
  let viewer: BrowserSession;
  let browser: BrowserSession;
  let idp: TestIdp;
  // Registered at the IdP once the owner has read pitcrew's redirect URI on the Single sign-on page.
  let idpClient: TestClient | undefined;
  beforeAll(async () => {
    ({ env, page, base, browser } = ui);
    idp = await startTestIdp(() => (idpClient ? [idpClient] : []), { ops: { email: 'ops@example.com', email_verified: true, groups: ['pitcrew-ops'] } });
    const made = await env.api('POST', '/api/v1/rules', scriptRule({ name: 'restart nginx' }));
    expect(made.statusCode, made.body).toBe(201);
    ruleId = (made.json() as { id: string }).id;
    viewer = await openBrowser();
  });
  afterAll(async () => {
    await viewer?.close();
    await idp?.close();
  });

  const userMenu = (on: Page) => on.locator('.user-menu');
  const nav = (on: Page) => on.getByRole('navigation', { name: 'main' });

  /** A new account's password (a reset's is a new one too): chosen, and typed twice. */
  async function setPassword(on: Page): Promise<void> {
    await on.getByLabel(/^Choose a (new )?password$/).fill(PASSWORD);
    await on.getByLabel('Repeat the password').fill(PASSWORD);
    await on.getByRole('button', { name: 'Set password and sign in' }).click();
  }

  it('lets the first owner in through the bootstrap link: the e-mail and a password to choose sign them in', async () => {
    expect(env.tenant.signInPath).toMatch(/^\/accept\//);
    await page.goto(base + env.tenant.signInPath!);
    await page.getByLabel('E-mail').fill(OWNER);
    expect(await page.getByLabel('Your current password').count()).toBe(0);
    await page.getByLabel('Choose a password').waitFor();
    await saveScreenshot(page, 'identity-accept-first-owner');
    await setPassword(page);
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
    await on.getByText(`You are invited to tenant default as ${VIEWER}.`).waitFor();
    await saveScreenshot(on, 'identity-accept');
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

  it('tells the viewer which role a page needs when they open it by its address, instead of a form that would fail', async () => {
    const on = viewer.page;
    for (const [path, need, doing] of [
      ['/rules/new', 'admin', 'Creating a rule'], [`/rules/${ruleId}/edit`, 'admin', 'Editing a rule'], ['/runbooks/new', 'admin', 'Creating a runbook'],
      ['/channels/new', 'admin', 'Adding a channel'], ['/users', 'admin', 'Managing the members'], ['/audit', 'admin', 'Reading the audit log'], ['/sso', 'owner', 'Setting up single sign-on'],
    ] as const) {
      await on.goto(base + path);
      await on.getByRole('heading', { name: `You need the ${need} role` }).waitFor();
      await on.getByText(`${doing} needs the ${need} role in tenant default; you are viewer.`).waitFor();
      expect(await on.getByRole('textbox').count(), path).toBe(0);
      expect(await on.getByRole('button', { name: /^(Save|Create|Add|Invite)/ }).count(), path).toBe(0);
    }
    await saveScreenshot(on, 'identity-needs-role');
    await on.getByRole('link', { name: 'Back to the rules' }).click();
    await on.getByRole('link', { name: 'restart nginx' }).waitFor();
  });

  it('lets the viewer turn on a second factor from their menu, which sign-in then asks for, and turn it off again', async () => {
    const on = viewer.page;
    await userMenu(on).getByRole('link', { name: 'Second factor (off)' }).click();
    await on.getByRole('button', { name: 'Turn on' }).click();
    const secret = await on.getByLabel('Secret', { exact: true }).innerText();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await on.getByLabel('Authenticator address').innerText()).toBe(`otpauth://totp/pitcrew:${encodeURIComponent(VIEWER)}?secret=${secret}&issuer=pitcrew&algorithm=SHA1&digits=6&period=30`);
    await saveScreenshot(on, 'identity-second-factor');
    // A wrong code changes nothing, and says what to check.
    const now = totpCode(secret, Date.now());
    await on.getByLabel('Code from the app').fill(now === '000000' ? '111111' : '000000');
    await on.getByRole('button', { name: 'Turn on the second factor' }).click();
    await on.getByText(/the code does not match: type the one your authenticator app shows now/).waitFor();
    expect((await env.store.db.selectFrom('users').select('totp_secret').where('email', '=', VIEWER).executeTakeFirstOrThrow()).totp_secret).toBeNull();
    await on.getByLabel('Code from the app').fill(totpCode(secret, Date.now()));
    await on.getByRole('button', { name: 'Turn on the second factor' }).click();
    await on.getByText('Signing in with your password also asks for the code your authenticator app shows.').waitFor();
    await userMenu(on).getByRole('link', { name: 'Second factor (on)' }).waitFor();

    // Sign out and in: the password alone is not enough, the page asks for the code.
    await userMenu(on).getByRole('button', { name: 'Sign out', exact: true }).click();
    await on.getByLabel('E-mail').fill(VIEWER);
    await on.getByLabel('Password').fill(PASSWORD);
    expect(await on.getByLabel('Authenticator code').count()).toBe(0);
    await on.getByRole('button', { name: 'Sign in', exact: true }).click();
    await on.getByLabel('Authenticator code').fill(totpCode(secret, Date.now()));
    await saveScreenshot(on, 'identity-sign-in-code');
    await on.getByRole('button', { name: 'Sign in', exact: true }).click();
    await nav(on).waitFor();
    await expect.poll(() => userMenu(on).innerText()).toMatch(new RegExp(`${VIEWER}\\s*viewer`));

    // Off again, with a code: the next sign-ins take the password alone.
    await userMenu(on).getByRole('link', { name: 'Second factor (on)' }).click();
    await on.getByLabel('Code from the app').fill(totpCode(secret, Date.now()));
    await on.getByRole('button', { name: 'Turn off the second factor' }).click();
    await userMenu(on).getByRole('link', { name: 'Second factor (off)' }).waitFor();
    expect((await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: VIEWER, password: PASSWORD } })).statusCode).toBe(200);
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

  it('pages the tokens and the users like the other lists: the first 50, then Load more for the rest', async () => {
    for (let i = 0; i < 55; i += 1) expect((await env.api('POST', '/api/v1/tokens', { name: `bulk ${i}` })).statusCode).toBe(201);
    const tokens = await everyId(env, '/api/v1/tokens');
    // A fresh load: the list this page read a moment ago may still be fresh in its cache.
    await page.goto(`${base}/tokens`);
    await expect.poll(() => page.locator('tr[data-token]').count()).toBe(50);
    // Newest first: the earlier token is on the next page.
    expect(await page.locator('tr[data-token="ci deploy"]').count()).toBe(0);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => page.locator('tr[data-token]').count()).toBe(tokens.length);
    await page.locator('tr[data-token="ci deploy"]').waitFor();
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    const now = Date.now();
    for (let i = 0; i < 50; i += 1) {
      const user = await createUser(env.store.db, { email: `member-${String(i).padStart(2, '0')}@example.com`, now });
      await setMembership(env.store.db, { userId: user.id, tenantId: env.tenant.tenantId, role: 'viewer', now });
    }
    const members = await everyId(env, '/api/v1/users');
    await page.goto(`${base}/users`);
    await expect.poll(() => page.locator('tr[data-user]').count()).toBe(50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => page.locator('tr[data-user]').count()).toBe(members.length);
    await page.locator('tr[data-user="member-49@example.com"]').waitFor();
  });

  it("shows an admin the audit log: an entry's before and after, filters sent to the service, and the export", async () => {
    await nav(page).getByRole('link', { name: 'Rules' }).click();
    await page.getByRole('switch', { name: 'Turn off restart nginx' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Turn off' }).click();
    await page.getByRole('switch', { name: 'Turn on restart nginx' }).waitFor();

    // A refused single sign-on: nobody known, the e-mail the attempt claimed.
    await appendAudit(env.store.db, {
      tenantId: env.tenant.tenantId, at: Date.now(), actor: { type: 'anonymous', email: 'mallory@example.com' }, via: 'oidc', ip: '203.0.113.9',
      action: 'session.refused', targetType: 'session', targetId: null, before: null, after: { reason: 'the identity provider has not verified the e-mail mallory@example.com' },
    });
    await nav(page).getByRole('link', { name: 'Audit log' }).click();
    await expect.poll(() => page.locator('tr[data-action="session.refused"]').innerText()).toMatch(/someone claiming mallory@example.com\s+oidc\s+203.0.113.9\s+session.refused/);
    const row = page.locator('tr[data-action="rule.update"]');
    await expect.poll(() => row.innerText()).toMatch(new RegExp(`${OWNER}\\s+link\\s+127.0.0.1\\s+rule.update\\s+rule\\s+${ruleId}`));
    await row.getByRole('button', { name: 'Changes' }).click();
    await expect.poll(() => page.getByLabel('before and after').innerText()).toMatch(/enabled\s+true → false/);
    await saveScreenshot(page, 'identity-audit');

    const filtered = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/audit' && new URL(request.url()).searchParams.get('action') === 'rule.');
    await page.getByLabel('Action').fill('rule.');
    await filtered;
    await expect.poll(() => page.locator('tr[data-action]').evaluateAll((rows) => rows.map((one) => one.getAttribute('data-action')))).toEqual(['rule.update', 'rule.create']);
    const exportHref = await page.getByRole('link', { name: 'Export JSON lines' }).getAttribute('href');
    expect(exportHref).toBe('/api/v1/audit/export?action=rule.');
    const lines = await page.evaluate(async (href) => (await (await fetch(href!)).text()).trim().split('\n').map((line) => (JSON.parse(line) as { action: string }).action), exportHref);
    expect(lines.sort()).toEqual(['rule.create', 'rule.update']);
  });

  it('lets the owner add a single sign-on provider with a write-only secret, and test its sign-in in a new window', async () => {
    await nav(page).getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByRole('button', { name: 'Add a provider' }).click();
    await page.getByLabel('Name').fill('Okta');
    await page.getByLabel('Issuer').fill(idp.issuer);
    await page.getByLabel('Client id').fill('pitcrew');
    await page.getByLabel('Client secret').fill(SSO_SECRET);
    await page.getByLabel('Scopes').fill('openid email groups');
    await page.getByRole('button', { name: 'Add provider' }).click();
    const row = page.locator('tr[data-provider="Okta"]');
    await expect.poll(() => row.innerText()).toMatch(/OpenID Connect\s+http:\/\/127.0.0.1:\d+\s+http:\/\/127.0.0.1:\d+\/api\/v1\/auth\/sso\/\S+\/callback/);
    const redirectUri = await row.locator('td').nth(3).innerText();
    idpClient = { client_id: 'pitcrew', client_secret: SSO_SECRET, redirect_uris: [redirectUri] };
    const stored = ((await env.api('GET', '/api/v1/sso-providers')).json() as { items: Record<string, unknown>[] }).items;
    expect(stored).toEqual([expect.objectContaining({ type: 'oidc', name: 'Okta', issuer: idp.issuer, clientId: 'pitcrew', clientSecretSet: true, scopes: ['openid', 'email', 'groups'], jit: true, required: false })]);
    expect(JSON.stringify(stored)).not.toContain(SSO_SECRET);
    await saveScreenshot(page, 'identity-sso');

    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    await page.getByText('A secret is stored; leave blank to keep it').waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();

    // The test sign-in goes through the real IdP's login form and shows what pitcrew made of the answer.
    const [opened] = await Promise.all([page.context().waitForEvent('page'), row.getByRole('button', { name: 'Test sign-in' }).click()]);
    await opened.locator('input[name="login"]').fill('ops');
    await opened.locator('input[name="password"]').fill('any');
    await opened.getByRole('button', { name: 'Sign-in' }).click();
    await opened.getByRole('button', { name: 'Continue' }).click();
    await opened.waitForURL(new RegExp(`^${base}/api/v1/auth/sso/[0-9a-f-]+/callback`));
    expect(JSON.parse(await opened.locator('body').innerText())).toMatchObject({ test: true, ok: true, email: 'ops@example.com', role: 'operator' });
    await opened.close();
    // The IdP's pages ask for a web font this machine cannot reach: not the UI's error.
    browser.consoleErrors.splice(0, browser.consoleErrors.length, ...browser.consoleErrors.filter((line) => !line.includes(idp.issuer) && !line.includes('fonts.googleapis.com')));
  });

  /** The owner's token of the viewer's second tenant. */
  let nightShiftToken: string;
  it('asks a person invited to one more tenant for the password of the account they have, and lets them join with it', async () => {
    const other = await env.addTenant('night shift');
    nightShiftToken = other.token;
    const invited = await env.api('POST', '/api/v1/users', { email: VIEWER, role: 'operator' }, other.token);
    expect(invited.statusCode, invited.body).toBe(201);
    const on = viewer.page;
    await on.goto(base + new URL((invited.json() as { inviteUrl: string }).inviteUrl).pathname);
    await on.getByRole('heading', { name: 'Join night shift' }).waitFor();
    await on.getByText(`You have a pitcrew account already (${VIEWER}): give its password to join tenant night shift.`).waitFor();
    expect(await on.getByLabel(/Choose a|New password|Repeat/).count()).toBe(0);
    await on.getByLabel('Your current password').fill(PASSWORD);
    await saveScreenshot(on, 'identity-accept-existing-account');
    await on.getByRole('button', { name: 'Accept and sign in' }).click();
    await nav(on).waitFor();
    await expect.poll(() => userMenu(on).innerText()).toMatch(new RegExp(`${VIEWER}\\s*operator`));
    expect(await userMenu(on).getByLabel('Tenant').inputValue()).toBe(other.tenantId);
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

  it("lets an admin reset the second factor of a member who lost it: their sessions end, and their password alone signs them in", async () => {
    const on = viewer.page;
    await userMenu(on).getByRole('link', { name: 'Second factor (off)' }).click();
    await on.getByRole('button', { name: 'Turn on' }).click();
    const secret = await on.getByLabel('Secret', { exact: true }).innerText();
    await on.getByLabel('Code from the app').fill(totpCode(secret, Date.now()));
    await on.getByRole('button', { name: 'Turn on the second factor' }).click();
    await userMenu(on).getByRole('link', { name: 'Second factor (on)' }).waitFor();

    // The admin opens the Users page afresh (the one they had open still shows it off).
    await page.goto(`${base}/users`);
    const row = page.locator(`tr[data-user="${VIEWER}"]`);
    await expect.poll(() => row.innerText()).toMatch(/\tactive\ton\t/);
    // Only for a member who has one, and never for yourself.
    expect(await page.locator(`tr[data-user="${OWNER}"]`).getByRole('button', { name: 'Reset second factor' }).count()).toBe(0);
    await row.getByRole('button', { name: 'Reset second factor' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/every session of theirs ends at once/).waitFor();
    await saveScreenshot(page, 'identity-reset-second-factor');
    // The viewer is also a member of night shift, where this owner is nobody: refused, and the dialog says why.
    await dialog.getByRole('button', { name: 'Reset second factor' }).click();
    await dialog.getByText(/also a member of 1 other tenant where you are not their admin/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const viewerId = ((await env.api('GET', '/api/v1/users', undefined, nightShiftToken)).json() as { items: Array<{ id: string; email: string }> }).items.find((m) => m.email === VIEWER)!.id;
    expect((await env.api('DELETE', `/api/v1/users/${viewerId}`, undefined, nightShiftToken)).statusCode).toBe(204);
    await row.getByRole('button', { name: 'Reset second factor' }).click();
    await dialog.getByRole('button', { name: 'Reset second factor' }).click();
    await page.getByRole('status').getByText(new RegExp(`Removed the second factor of ${VIEWER}: 1 session signed out; not e-mailed`)).waitFor();
    await expect.poll(() => row.innerText()).toMatch(/\tactive\toff\t/);
    expect(await row.getByRole('button', { name: 'Reset second factor' }).count()).toBe(0);

    // The member's session is gone; the password alone signs them in again.
    await on.reload();
    await on.getByLabel('E-mail').fill(VIEWER);
    await on.getByLabel('Password').fill(PASSWORD);
    await on.getByRole('button', { name: 'Sign in', exact: true }).click();
    await nav(on).waitFor();
    await userMenu(on).getByRole('link', { name: 'Second factor (off)' }).waitFor();
    const audit = (await env.api('GET', '/api/v1/audit?action=user.totp_reset')).json() as { items: Array<{ actor: { email: string }; before: { totp: boolean }; after: { totp: boolean } }> };
    expect(audit.items).toMatchObject([{ actor: { email: OWNER }, before: { totp: true }, after: { totp: false } }]);
  });

  it("signs out, and the sign-in page offers the tenant's single sign-on buttons and says why one failed", async () => {
    const [okta] = ((await env.api('GET', '/api/v1/sso-providers')).json() as { items: { id: string; startUrl: string }[] }).items;
    await userMenu(page).getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('E-mail').waitFor();
    expect(await page.evaluate(async () => (await fetch('/api/v1/me')).status)).toBe(401);
    // The tenant signed in to last is remembered: its buttons show without ?tenant=.
    expect(await page.getByRole('link', { name: 'Continue with Okta' }).getAttribute('href')).toBe(okta!.startUrl);
    await page.goto(`${base}/signin?tenant=default&error=${encodeURIComponent('the identity provider says the e-mail a@b.c is not verified')}`);
    await page.getByText('Single sign-on failed: the identity provider says the e-mail a@b.c is not verified').waitFor();
    await page.getByRole('link', { name: 'Continue with Okta' }).waitFor();
    await saveScreenshot(page, 'identity-sign-in-sso');

    // A tenant that requires single sign-on: no password form to fail with.
    expect((await env.api('PATCH', `/api/v1/sso-providers/${okta!.id}`, { required: true })).statusCode).toBe(200);
    try {
      await page.goto(`${base}/sign-in?tenant=default`);
      await page.getByText('This tenant signs in with single sign-on only.').waitFor();
      expect(await page.getByLabel('Password').count()).toBe(0);
      await page.getByRole('button', { name: 'Use an API token instead' }).waitFor();
    } finally {
      await env.api('PATCH', `/api/v1/sso-providers/${okta!.id}`, { required: false });
    }
  });
});

/** The ids of every item of a paged list of the API, following nextCursor. */
async function everyId(env: TestEnv, path: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = (await env.api('GET', `${path}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`)).json() as { items: Array<{ id: string }>; nextCursor: string | null };
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

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
