import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_FAILURES, ADDRESS_FAILURES, LOCK_MS } from '../src/identity/sign-in-guard.js';
import { totpCode } from '../src/identity/totp.js';
import { createUser, setMembership } from '../src/identity/users.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { browserOf, invite, PASSWORD, signIn } from './support/people.js';
import { expectProblem } from './support/problems.js';

const IDLE_MS = 30 * 60_000;
const MAX_MS = 8 * 3600_000;

// People, sessions and personal access tokens (issue 37 points 1 and 2).
describe.each(testDialects())('identity on %s', (dialect) => {
  let env: TestEnv;
  let smtp: SmtpTestServer;
  let now = Date.parse('2026-11-28T09:00:00Z');

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => now, sessions: { idleMs: IDLE_MS, maxMs: MAX_MS } });
    smtp = await startSmtpServer();
  });
  afterAll(() => env.close());

  describe('the first owner', () => {
    it('claims the bootstrap link once: e-mail and password set, signed in, the bootstrap token theirs', async () => {
      expect(env.tenant.signInPath).toMatch(/^\/accept\/[\w-]{40,}$/);
      const invite = env.tenant.signInPath!.split('/').pop();
      expect((await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept/preview', payload: { invite } })).json()).toEqual({ purpose: 'first_owner', email: null, tenant: 'default', existingAccount: false, secondFactor: false });
      const noEmail = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite, password: PASSWORD } });
      expect(expectProblem(noEmail, 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/first owner.*e-mail/);
      // A refused attempt leaves the link usable: its use is undone with the refusal.
      const shortPassword = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite, password: 'short', email: 'Owner@Example.com' } });
      expect(expectProblem(shortPassword, 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/at least 12 characters/);
      const accepted = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite, password: PASSWORD, email: 'Owner@Example.com' } });
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(accepted.json()).toMatchObject({ user: { email: 'owner@example.com', totp: false }, tenantId: env.tenant.tenantId, role: 'owner', via: 'link' });
      expect(String(accepted.headers['set-cookie'])).toMatch(/^pitcrew_session=pcs_[0-9a-f]{64}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
      const again = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite, password: PASSWORD, email: 'x@example.com' } });
      expect(expectProblem(again, 401, 'PITCREW_ERR_SIGN_IN_FAILED').detail).toMatch(/used already or expired/);
      // The token bootstrap printed is the owner's personal access token.
      const me = (await env.api('GET', '/api/v1/me')).json();
      expect(me).toMatchObject({ user: { email: 'owner@example.com' }, role: 'owner', via: 'token', csrfToken: null });
    });

    it('signs in with the password, and a wrong one says nothing of which part was wrong', async () => {
      const ok = await signIn(env, 'owner@example.com');
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().via).toBe('password');
      for (const [email, password] of [['owner@example.com', 'wrong password!'], ['nobody@example.com', PASSWORD]] as const) {
        const refused = await signIn(env, email, password, { ip: '10.9.9.9' });
        expect(expectProblem(refused, 401, 'PITCREW_ERR_SIGN_IN_FAILED').detail).toBe('the e-mail or password is wrong (or the code of the second factor), or the account may not sign in with a password');
      }
    });
  });

  describe('sessions', () => {
    it('a state-changing call with the cookie needs the CSRF token; a read does not', async () => {
      const owner = browserOf(env, await signIn(env, 'owner@example.com'), '', 'owner@example.com');
      expect((await owner.call('GET', '/api/v1/rules', undefined, { csrf: false })).statusCode).toBe(200);
      const forged = await owner.call('PATCH', '/api/v1/tenant', { throttle: null }, { csrf: false });
      expect(expectProblem(forged, 403, 'PITCREW_ERR_CSRF').detail).toMatch(/x-pitcrew-csrf/);
      const wrong = await owner.call('PATCH', '/api/v1/tenant', { throttle: null }, { csrf: false, headers: { 'x-pitcrew-csrf': 'A'.repeat(43) } });
      expectProblem(wrong, 403, 'PITCREW_ERR_CSRF');
      // What a cross-site HTML form sends: refused before its body is even read.
      const form = await owner.call('POST', '/api/v1/rules', undefined, { csrf: false, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expectProblem(form, 403, 'PITCREW_ERR_CSRF');
      expect((await owner.call('PATCH', '/api/v1/tenant', { throttle: null })).statusCode).toBe(200);
      // GET /me gives the UI the token again after a reload.
      expect((await owner.call('GET', '/api/v1/me')).json().csrfToken).toBe(owner.csrf);
    });

    it('ends after the idle time without a call, and at the absolute expiry however busy', async () => {
      const idle = browserOf(env, await signIn(env, 'owner@example.com'), '', 'owner@example.com');
      now += IDLE_MS - 60_000;
      expect((await idle.call('GET', '/api/v1/me')).statusCode).toBe(200);
      now += IDLE_MS - 60_000; // a call a minute short of the idle time renewed it
      expect((await idle.call('GET', '/api/v1/me')).statusCode).toBe(200);
      now += IDLE_MS;
      expect(expectProblem(await idle.call('GET', '/api/v1/me'), 401, 'PITCREW_ERR_UNAUTHENTICATED').detail).toMatch(/session has ended/);

      const busy = browserOf(env, await signIn(env, 'owner@example.com'), '', 'owner@example.com');
      for (let spent = 0; spent < MAX_MS - IDLE_MS; spent += IDLE_MS / 2) {
        now += IDLE_MS / 2;
        expect((await busy.call('GET', '/api/v1/me')).statusCode).toBe(200);
      }
      now += IDLE_MS;
      expectProblem(await busy.call('GET', '/api/v1/me'), 401, 'PITCREW_ERR_UNAUTHENTICATED');
    });

    it('signs out one session, or every session of the person', async () => {
      const [a, b, c] = await Promise.all([1, 2, 3].map(async () => browserOf(env, await signIn(env, 'owner@example.com'), '', 'owner@example.com')));
      const out = await a!.call('POST', '/api/v1/auth/logout', {});
      expect(out.json()).toEqual({ ended: 1 });
      expect(String(out.headers['set-cookie'])).toMatch(/^pitcrew_session=; Path=\/; Max-Age=0/);
      expect((await a!.call('GET', '/api/v1/me')).statusCode).toBe(401);
      expect((await b!.call('GET', '/api/v1/me')).statusCode).toBe(200);
      const everywhere = await b!.call('POST', '/api/v1/auth/logout', { everywhere: true });
      expect(everywhere.json().ended).toBeGreaterThanOrEqual(2);
      expect((await c!.call('GET', '/api/v1/me')).statusCode).toBe(401);
      // Tokens are not sessions: they keep working until revoked.
      expect((await env.api('GET', '/api/v1/me')).statusCode).toBe(200);
    });

    it('locks an account after repeated failures, even for the right password, until the lock passes', async () => {
      const member = await invite(env, 'lock@example.com', 'viewer');
      for (let i = 0; i < ACCOUNT_FAILURES; i += 1) expect((await signIn(env, member.email, 'not the password', { ip: `10.1.0.${i}` })).statusCode).toBe(401);
      const locked = await signIn(env, member.email, PASSWORD, { ip: '10.1.1.1' });
      expect(expectProblem(locked, 429, 'PITCREW_ERR_SIGN_IN_LOCKED').detail).toMatch(/for this account: try again in 15 minute/);
      expect(Number(locked.headers['retry-after'])).toBe(LOCK_MS / 1000);
      now += LOCK_MS;
      expect((await signIn(env, member.email, PASSWORD, { ip: '10.1.1.1' })).statusCode).toBe(200);
    });

    // Twenty failed sign-ins are twenty scrypt hashes (an unknown account costs one as well, so timing tells nothing)
    // and twenty audit entries: on a loaded machine (helpers beside the suite) more than the default 30 s.
    it('refuses an address that keeps failing, whichever accounts it tries', { timeout: 120_000 }, async () => {
      for (let i = 0; i < ADDRESS_FAILURES; i += 1) await signIn(env, `guess${i}@example.com`, 'guess guess guess', { ip: '10.2.2.2' });
      expectProblem(await signIn(env, 'owner@example.com', PASSWORD, { ip: '10.2.2.2' }), 429, 'PITCREW_ERR_SIGN_IN_LOCKED');
      expect((await signIn(env, 'owner@example.com', PASSWORD, { ip: '10.2.2.3' })).statusCode).toBe(200);
      now += LOCK_MS;
    });
  });

  describe('members and roles', () => {
    it('an invited viewer reads, and is refused every change with the role it needs', async () => {
      const viewer = await invite(env, 'viewer@example.com', 'viewer');
      expect(viewer.inviteUrl).toMatch(/^http:\/\/localhost(:\d+)?\/accept\//);
      expect((await viewer.call('GET', '/api/v1/rules')).statusCode).toBe(200);
      const refused = await viewer.call('POST', '/api/v1/rules', { name: 'x' });
      expect(expectProblem(refused, 403, 'PITCREW_ERR_FORBIDDEN').detail).toBe('this needs the admin role in this tenant; you act as viewer. Ask an owner or admin of the tenant for the role, or use a token issued with it');
    });

    it('an operator toggles a rule, and may change nothing else of it', async () => {
      const rule = await env.createWebhookRule();
      const operator = await invite(env, 'operator@example.com', 'operator');
      const off = await operator.call('PATCH', `/api/v1/rules/${rule.id}`, { enabled: false });
      expect(off.statusCode, off.body).toBe(200);
      expect(off.json().enabled).toBe(false);
      const renamed = await operator.call('PATCH', `/api/v1/rules/${rule.id}`, { enabled: true, name: 'mine now' });
      expect(expectProblem(renamed, 403, 'PITCREW_ERR_FORBIDDEN').detail).toMatch(/only turn a rule on or off.*changing name needs the admin role/);
      expect((await env.api('GET', `/api/v1/rules/${rule.id}`)).json()).toMatchObject({ enabled: false, name: rule.body.name });
    });

    it('nobody grants more than they hold, changes themselves, or removes the last owner', async () => {
      const admin = await invite(env, 'admin@example.com', 'admin');
      expectProblem(await admin.call('POST', '/api/v1/users', { email: 'boss@example.com', role: 'owner' }), 403, 'PITCREW_ERR_FORBIDDEN');
      expectProblem(await admin.call('PATCH', `/api/v1/users/${admin.userId}`, { role: 'viewer' }), 403, 'PITCREW_ERR_FORBIDDEN');
      const owners = (await env.api('GET', '/api/v1/users')).json().items.filter((m: { role: string }) => m.role === 'owner');
      expect(owners).toHaveLength(1);
      expectProblem(await admin.call('DELETE', `/api/v1/users/${owners[0].id}`), 403, 'PITCREW_ERR_FORBIDDEN');
      const second = await invite(env, 'owner2@example.com', 'owner');
      // Owners change owners: the second demotes the first, whose token then acts as admin, then undoes it.
      expectProblem(await admin.call('PATCH', `/api/v1/users/${second.userId}`, { role: 'admin' }), 403, 'PITCREW_ERR_FORBIDDEN');
      expect((await second.call('PATCH', `/api/v1/users/${owners[0].id}`, { role: 'admin' })).statusCode).toBe(200);
      expect((await env.api('GET', '/api/v1/me')).json().role).toBe('admin');
      expectProblem(await env.api('PATCH', `/api/v1/users/${second.userId}`, { role: 'viewer' }), 403, 'PITCREW_ERR_FORBIDDEN');
      expect((await second.call('PATCH', `/api/v1/users/${owners[0].id}`, { role: 'owner' })).statusCode).toBe(200);
      expect((await env.api('GET', '/api/v1/me')).json().role).toBe('owner');
    });

    it('are listed a page at a time, oldest account first, every member once', async () => {
      for (const name of ['page-a', 'page-b', 'page-c', 'page-d', 'page-e', 'page-f', 'page-g']) {
        const user = await createUser(env.store.db, { email: `${name}@example.com`, now });
        await setMembership(env.store.db, { userId: user.id, tenantId: env.tenant.tenantId, role: 'viewer', now });
      }
      const all = await everyPage(env, '/api/v1/users', 3);
      expect(all.length).toBeGreaterThan(7);
      expect(all).toEqual([...all].sort());
      expect(new Set(all).size).toBe(all.length);
      const members = await env.store.db.selectFrom('memberships').select('user_id').where('tenant_id', '=', env.tenant.tenantId).execute();
      expect(all).toEqual(members.map((m) => m.user_id).sort());
      expectProblem(await env.api('GET', '/api/v1/users?limit=0'), 400, 'PITCREW_ERR_VALIDATION');
    });

    it('a removed member is signed out and their tokens stop, in that tenant', async () => {
      const leaving = await invite(env, 'leaving@example.com', 'operator');
      const token = (await leaving.call('POST', '/api/v1/tokens', { name: 'laptop' })).json().token as string;
      expect((await env.api('GET', '/api/v1/rules', undefined, token)).statusCode).toBe(200);
      expect((await env.api('DELETE', `/api/v1/users/${leaving.userId}`)).statusCode).toBe(204);
      expect((await leaving.call('GET', '/api/v1/me')).statusCode).toBe(401);
      expect((await env.api('GET', '/api/v1/rules', undefined, token)).statusCode).toBe(401);
      expectProblem(await env.api('PATCH', `/api/v1/users/${leaving.userId}`, { role: 'viewer' }), 404, 'PITCREW_ERR_NOT_FOUND');
    });
  });

  describe('personal access tokens', () => {
    it('are at most the role of their user, narrowed by their own, and say when they were last used', async () => {
      const operator = await invite(env, 'tokens@example.com', 'operator');
      expectProblem(await operator.call('POST', '/api/v1/tokens', { name: 'too much', role: 'admin' }), 403, 'PITCREW_ERR_FORBIDDEN');
      const issued = await operator.call('POST', '/api/v1/tokens', { name: 'read only', role: 'viewer' });
      expect(issued.statusCode, issued.body).toBe(201);
      const { token, id } = issued.json() as { token: string; id: string };
      expect(token).toMatch(/^pct_[0-9a-f]{64}$/);
      expect((await env.api('GET', '/api/v1/me', undefined, token)).json()).toMatchObject({ role: 'viewer', via: 'token' });
      expectProblem(await env.api('POST', `/api/v1/executions/${id}/cancel`, {}, token), 403, 'PITCREW_ERR_FORBIDDEN');
      // A token issued with a token is no more than the one that issued it.
      const child = (await env.api('POST', '/api/v1/tokens', { name: 'child' }, token)).json();
      expect(child.role).toBe('viewer');
      const listed = (await operator.call('GET', '/api/v1/tokens')).json().items as Array<{ id: string; lastUsedAt: string | null; name: string }>;
      expect(listed.map((t) => t.name).sort()).toEqual(['child', 'read only']);
      expect(listed.find((t) => t.id === id)!.lastUsedAt).toBe(new Date(now).toISOString());
      expect(JSON.stringify(listed)).not.toContain(token);
      // Demoting the user narrows every token of theirs at once.
      expect((await env.api('PATCH', `/api/v1/users/${operator.userId}`, { role: 'viewer' })).statusCode).toBe(200);
      expectProblem(await operator.call('POST', `/api/v1/rules/${id}/run`, {}), 403, 'PITCREW_ERR_FORBIDDEN');
    });

    it('stop at their expiry and when revoked', async () => {
      const expiring = (await env.api('POST', '/api/v1/tokens', { name: 'ci', expiresAt: new Date(now + 3600_000).toISOString() })).json();
      expect((await env.api('GET', '/api/v1/me', undefined, expiring.token)).statusCode).toBe(200);
      now += 3600_000;
      expectProblem(await env.api('GET', '/api/v1/me', undefined, expiring.token), 401, 'PITCREW_ERR_UNAUTHENTICATED');
      expectProblem(await env.api('POST', '/api/v1/tokens', { name: 'old', expiresAt: new Date(now - 1).toISOString() }), 400, 'PITCREW_ERR_VALIDATION');
      const revoked = (await env.api('POST', '/api/v1/tokens', { name: 'gone' })).json();
      expect((await env.api('DELETE', `/api/v1/tokens/${revoked.id}`)).statusCode).toBe(204);
      expectProblem(await env.api('GET', '/api/v1/me', undefined, revoked.token), 401, 'PITCREW_ERR_UNAUTHENTICATED');
    });

    it('are listed a page at a time, newest first, following nextCursor to the last', async () => {
      const made: string[] = [];
      for (let i = 0; i < 12; i += 1) made.push((await env.api('POST', '/api/v1/tokens', { name: `paged ${i}` })).json().id as string);
      const first = await env.api('GET', '/api/v1/tokens?limit=10');
      expect(first.statusCode, first.body).toBe(200);
      const page = first.json() as { items: Array<{ id: string }>; nextCursor: string | null };
      expect(page.items.map((t) => t.id)).toEqual([...made].reverse().slice(0, 10));
      const all = await everyPage(env, '/api/v1/tokens', 5);
      expect(all.slice(0, made.length)).toEqual([...made].reverse());
      expect(all).toEqual([...all].sort().reverse());
      expect(new Set(all).size).toBe(all.length);
      expect((await env.api('GET', '/api/v1/tokens')).json().items).toHaveLength(Math.min(all.length, 50));
      expectProblem(await env.api('GET', '/api/v1/tokens?limit=1001'), 400, 'PITCREW_ERR_VALIDATION');
      expectProblem(await env.api('GET', '/api/v1/tokens?cursor=not-one'), 400, 'PITCREW_ERR_BAD_CURSOR');
      // One token by its id: yours, or anyone's in the tenant for an admin.
      expect((await env.api('GET', `/api/v1/tokens/${made[0]!}`)).json()).toMatchObject({ id: made[0], name: 'paged 0' });
      const viewer = await invite(env, 'peek@example.com', 'viewer');
      expectProblem(await viewer.call('GET', `/api/v1/tokens/${made[0]!}`), 403, 'PITCREW_ERR_FORBIDDEN');
    });

    it("a member revokes their own tokens; only an admin revokes another's", async () => {
      const viewer = await invite(env, 'own@example.com', 'viewer');
      const owners = (await env.api('POST', '/api/v1/tokens', { name: 'owner ci' })).json();
      expectProblem(await viewer.call('DELETE', `/api/v1/tokens/${owners.id}`), 403, 'PITCREW_ERR_FORBIDDEN');
      expectProblem(await viewer.call('GET', '/api/v1/tokens?all=true'), 403, 'PITCREW_ERR_FORBIDDEN');
      const all = (await env.api('GET', '/api/v1/tokens?all=true')).json().items as Array<{ userId: string }>;
      expect(new Set(all.map((t) => t.userId)).size).toBeGreaterThan(1);
    });
  });

  describe('links by e-mail, and the second factor', () => {
    const linkIn = (text: string) => /http\S+\/accept\/([\w-]+)/.exec(text)![1]!;

    it('without an e-mail channel, an invitation says it was not e-mailed; with one, the invited person gets the link', async () => {
      const unsent = (await env.api('POST', '/api/v1/users', { email: 'nomail@example.com', role: 'viewer' })).json();
      expect(unsent.emailed).toEqual({ sent: false, detail: expect.stringMatching(/no e-mail channel/) });
      const channel = await env.api('POST', '/api/v1/channels', {
        name: 'smtp', type: 'email', mode: 'disabled',
        config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
      });
      expect(channel.statusCode, channel.body).toBe(201);
      const invited = (await env.api('POST', '/api/v1/users', { email: 'mailed@example.com', role: 'operator' })).json();
      expect(invited.emailed).toEqual({ sent: true, detail: 'e-mailed to mailed@example.com through the channel smtp' });
      const mail = smtp.mails.find((m) => m.to.includes('mailed@example.com'))!;
      expect(mail.subject).toBe('You are invited to pitcrew (default)');
      expect(linkIn(mail.text)).toBe(invited.inviteUrl.split('/').pop());
      const accepted = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite: linkIn(mail.text), password: PASSWORD } });
      expect(accepted.json()).toMatchObject({ role: 'operator', user: { email: 'mailed@example.com' } });
    });

    it('a forgotten password: a reset link by e-mail sets a new one and ends every session; unknown addresses get the same reply', async () => {
      const before = browserOf(env, await signIn(env, 'mailed@example.com'), '', 'mailed@example.com');
      const asked = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/reset', payload: { email: 'Mailed@Example.com' }, remoteAddress: '10.3.3.3' });
      const unknown = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/reset', payload: { email: 'nobody@example.com' }, remoteAddress: '10.3.3.3' });
      expect([asked.statusCode, unknown.statusCode]).toEqual([202, 202]);
      expect(asked.body).toBe(unknown.body);
      const mail = smtp.mails.filter((m) => m.to.includes('mailed@example.com')).at(-1)!;
      expect(mail.subject).toBe('Reset your pitcrew password (default)');
      expect(env.logs.join('')).not.toContain(linkIn(mail.text));
      const reset = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite: linkIn(mail.text), password: 'a new long password' } });
      expect(reset.statusCode, reset.body).toBe(200);
      expect((await before.call('GET', '/api/v1/me')).statusCode).toBe(401);
      expect((await signIn(env, 'mailed@example.com')).statusCode).toBe(401);
      expect((await signIn(env, 'mailed@example.com', 'a new long password')).statusCode).toBe(200);
      // An admin can hand one out as well; it expires after an hour.
      const member = (await env.api('GET', '/api/v1/users')).json().items.find((m: { email: string }) => m.email === 'mailed@example.com');
      const byAdmin = (await env.api('POST', `/api/v1/users/${member.id}/reset`)).json();
      expect(byAdmin.emailed.sent).toBe(true);
      now += 3600_000;
      expectProblem(await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite: byAdmin.resetUrl.split('/').pop(), password: PASSWORD } }), 401, 'PITCREW_ERR_SIGN_IN_FAILED');
    });

    it("an invitation to another tenant does not replace an existing account's password", async () => {
      const other = await env.addTenant('other team');
      const invited = (await env.api('POST', '/api/v1/users', { email: 'mailed@example.com', role: 'viewer' }, other.token)).json();
      const invite = invited.inviteUrl.split('/').pop();
      // What the accept page is told before anything is used: an existing account, accepted with its own password.
      const peeked = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept/preview', payload: { invite } });
      expect(peeked.json()).toEqual({ purpose: 'invite', email: 'mailed@example.com', tenant: 'other team', existingAccount: true, secondFactor: false });
      const fresh = (await env.api('POST', '/api/v1/users', { email: 'fresh@example.com', role: 'viewer' }, other.token)).json();
      expect((await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept/preview', payload: { invite: fresh.inviteUrl.split('/').pop() } })).json()).toEqual({ purpose: 'invite', email: 'fresh@example.com', tenant: 'other team', existingAccount: false, secondFactor: false });
      expect(expectProblem(await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept/preview', payload: { invite: 'not-a-link-at-all' } }), 404, 'PITCREW_ERR_NOT_FOUND').detail).toMatch(/unknown, used already or expired/);
      const takeover = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite, password: 'the attacker chose this' } });
      expect(expectProblem(takeover, 401, 'PITCREW_ERR_SIGN_IN_FAILED').detail).toMatch(/has a pitcrew account already: give its password/);
      expect((await signIn(env, 'mailed@example.com', 'a new long password')).statusCode).toBe(200);
      const joined = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite, password: 'a new long password' } });
      expect(joined.json()).toMatchObject({ tenantId: other.tenantId, role: 'viewer' });
      expectProblem(await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept/preview', payload: { invite } }), 404, 'PITCREW_ERR_NOT_FOUND');
      expect(joined.json().tenants.map((t: { name: string }) => t.name).sort()).toEqual(['default', 'other team']);
    });

    it('a second factor, once confirmed, is asked at every sign-in', async () => {
      const person = await invite(env, 'totp@example.com', 'viewer');
      const { secret, otpauthUrl } = (await person.call('POST', '/api/v1/me/totp', {})).json();
      expect(otpauthUrl).toBe(`otpauth://totp/pitcrew:totp%40example.com?secret=${secret}&issuer=pitcrew&algorithm=SHA1&digits=6&period=30`);
      expectProblem(await person.call('PUT', '/api/v1/me/totp', { secret, code: '000000' === totpCode(secret, now) ? '111111' : '000000' }), 400, 'PITCREW_ERR_VALIDATION');
      expect((await person.call('PUT', '/api/v1/me/totp', { secret, code: totpCode(secret, now) })).statusCode).toBe(204);
      // The right password without the code: asked for it, no failure counted (a wrong code is one).
      expect(expectProblem(await signIn(env, person.email), 401, 'PITCREW_ERR_SECOND_FACTOR_REQUIRED').detail).toMatch(/has a second factor: give the 6-digit code/);
      expectProblem(await signIn(env, person.email, 'not the password'), 401, 'PITCREW_ERR_SIGN_IN_FAILED');
      const wrongCode = totpCode(secret, now) === '123456' ? '654321' : '123456';
      expectProblem(await signIn(env, person.email, PASSWORD, { totp: wrongCode }), 401, 'PITCREW_ERR_SIGN_IN_FAILED');
      const failures = await env.store.db.selectFrom('users').select('failed_logins').where('id', '=', person.userId).executeTakeFirstOrThrow();
      expect(failures.failed_logins).toBe(2);
      const withCode = await signIn(env, person.email, PASSWORD, { totp: totpCode(secret, now) });
      expect(withCode.json().user.totp).toBe(true);
      expect(JSON.stringify((await env.api('GET', '/api/v1/users')).json())).not.toContain(secret);

      expect((await person.call('DELETE', '/api/v1/me/totp', { code: totpCode(secret, now) })).statusCode).toBe(204);
      expect((await signIn(env, person.email)).statusCode).toBe(200);
    });

    it('a one-time link signs in too: an account with a second factor gives its code with it', async () => {
      const person = await invite(env, 'totp-link@example.com', 'viewer');
      const { secret } = (await person.call('POST', '/api/v1/me/totp', {})).json();
      expect((await person.call('PUT', '/api/v1/me/totp', { secret, code: totpCode(secret, now) })).statusCode).toBe(204);
      const wrongCode = totpCode(secret, now) === '123456' ? '654321' : '123456';
      const link = (await env.api('POST', `/api/v1/users/${person.userId}/reset`)).json().resetUrl.split('/').pop() as string;
      const accept = (body: Record<string, string>) => env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite: link, password: 'the mailbox holder chose this', ...body } });
      expect((await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept/preview', payload: { invite: link } })).json()).toMatchObject({ purpose: 'reset', secondFactor: true });

      // The mailbox alone does not get past the second factor; the link stays unused, the password unchanged.
      expect(expectProblem(await accept({}), 401, 'PITCREW_ERR_SECOND_FACTOR_REQUIRED').detail).toMatch(/has a second factor: give the 6-digit code/);
      expectProblem(await accept({ totp: wrongCode }), 401, 'PITCREW_ERR_SIGN_IN_FAILED');
      expect((await signIn(env, person.email, PASSWORD, { totp: totpCode(secret, now) })).statusCode).toBe(200);
      const refused = await env.store.db.selectFrom('audit_log').select('after').where('action', '=', 'session.refused').where('actor_user_id', '=', person.userId).execute();
      expect(refused.map((row) => (JSON.parse(row.after ?? '{}') as { reason?: string }).reason)).toContain('wrong second-factor code, given with a one-time link');

      const reset = await accept({ totp: totpCode(secret, now) });
      expect(reset.statusCode, reset.body).toBe(200);
      expect(reset.json().user).toMatchObject({ email: person.email, totp: true });
      expectProblem(await signIn(env, person.email, PASSWORD, { totp: totpCode(secret, now) }), 401, 'PITCREW_ERR_SIGN_IN_FAILED');
      expect((await signIn(env, person.email, 'the mailbox holder chose this', { totp: totpCode(secret, now) })).statusCode).toBe(200);
    });
  });
});

/** The ids of every item of a paged list, read `limit` at a time by following nextCursor. */
async function everyPage(env: TestEnv, path: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const reply = await env.api('GET', `${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(reply.statusCode, reply.body).toBe(200);
    const page = reply.json() as { items: Array<{ id: string }>; nextCursor: string | null };
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}
