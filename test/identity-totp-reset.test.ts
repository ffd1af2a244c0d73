import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../src/identity/roles.js';
import { totpCode } from '../src/identity/totp.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { browserOf, invite, PASSWORD, signIn, type Browser } from './support/people.js';
import { expectProblem } from './support/problems.js';

interface Member { id: string; email: string; totp: boolean }

// An admin removes the second factor of a member who lost their authenticator app (issue 37).
describe.each(testDialects())('resetting a member\'s second factor on %s', (dialect) => {
  let env: TestEnv;
  let smtp: SmtpTestServer;
  const now = Date.parse('2026-11-28T09:00:00Z');

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => now });
    smtp = await startSmtpServer();
  });
  afterAll(() => env.close());

  /** A member with a confirmed second factor, signed in with it: their session and the app's secret. */
  async function withTotp(email: string, role: Role): Promise<{ person: Browser; secret: string }> {
    const person = await invite(env, email, role);
    const { secret } = (await person.call('POST', '/api/v1/me/totp', {})).json() as { secret: string };
    expect((await person.call('PUT', '/api/v1/me/totp', { secret, code: totpCode(secret, now) })).statusCode).toBe(204);
    return { person, secret };
  }
  const member = async (id: string) => ((await env.api('GET', '/api/v1/users?limit=1000')).json().items as Member[]).find((m) => m.id === id);
  const reset = (id: string, as?: Browser) => (as ? as.call('DELETE', `/api/v1/users/${id}/totp`) : env.api('DELETE', `/api/v1/users/${id}/totp`));

  it('is for an admin or owner, on a member of their tenant with a role no higher than theirs, never on themselves', async () => {
    const viewer = await invite(env, 'viewer@example.com', 'viewer');
    const operator = await invite(env, 'operator@example.com', 'operator');
    const { person: admin } = await withTotp('admin@example.com', 'admin');
    const { person: owner } = await withTotp('owner@example.com', 'owner');
    for (const caller of [viewer, operator]) {
      expect(expectProblem(await reset(admin.userId, caller), 403, 'PITCREW_ERR_FORBIDDEN').detail).toMatch(/needs the admin role/);
    }
    expect(expectProblem(await reset(owner.userId, admin), 403, 'PITCREW_ERR_FORBIDDEN').detail).toMatch(/only an owner can change an owner/);
    expect(expectProblem(await reset(admin.userId, admin), 403, 'PITCREW_ERR_FORBIDDEN').detail).toMatch(/your own second factor: remove it with a current code .*DELETE \/api\/v1\/me\/totp/);
    expect((await member(owner.userId))!.totp).toBe(true);
    // Nobody outside the tenant is found, nor anyone unknown.
    const other = await env.addTenant('other team');
    const stranger = await env.api('POST', '/api/v1/users', { email: 'stranger@example.com', role: 'viewer' }, other.token);
    expectProblem(await reset(stranger.json().id as string), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await reset('0190a7f4-0000-7000-8000-000000000000'), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await env.api('DELETE', `/api/v1/users/${admin.userId}/totp`, undefined, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
    // An owner resets an owner's; without an e-mail channel the reply says to tell them.
    const done = await reset(owner.userId);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ id: owner.userId, role: 'owner', totp: false, emailed: { sent: false, detail: expect.stringMatching(/no e-mail channel.*tell them yourself/) } });
    expect(expectProblem(await reset(owner.userId), 409, 'PITCREW_ERR_CONFLICT').detail).toMatch(/has no second factor/);
    expect(expectProblem(await reset(viewer.userId), 409, 'PITCREW_ERR_CONFLICT').detail).toMatch(/password alone/);
  });

  it('lets the member in with their password alone, signs them out everywhere, tells them by e-mail, and is in the audit log', async () => {
    const channel = await env.api('POST', '/api/v1/channels', {
      name: 'smtp', type: 'email', mode: 'disabled',
      config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
    });
    expect(channel.statusCode, channel.body).toBe(201);
    const admin = await invite(env, 'second-admin@example.com', 'admin');
    const { person: lost, secret } = await withTotp('lost@example.com', 'operator');
    const again = browserOf(env, await signIn(env, lost.email, PASSWORD, { totp: totpCode(secret, now) }), lost.userId, lost.email);
    expect((await again.call('GET', '/api/v1/me')).statusCode).toBe(200);
    expectProblem(await signIn(env, lost.email), 401, 'PITCREW_ERR_SECOND_FACTOR_REQUIRED');
    expect((await member(lost.userId))!.totp).toBe(true);

    const done = await reset(lost.userId, admin);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ id: lost.userId, email: 'lost@example.com', role: 'operator', totp: false, sessionsEnded: 2, emailed: { sent: true, detail: 'e-mailed to lost@example.com through the channel smtp' } });
    expect((await member(lost.userId))!.totp).toBe(false);
    for (const session of [lost, again]) expectProblem(await session.call('GET', '/api/v1/me'), 401, 'PITCREW_ERR_UNAUTHENTICATED');
    const signedIn = await signIn(env, lost.email);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().user.totp).toBe(false);

    const mail = smtp.mails.filter((m) => m.to.includes('lost@example.com')).at(-1)!;
    expect(mail.subject).toBe('Your pitcrew second factor was removed (default)');
    expect(mail.text).toMatch(/An admin of the pitcrew tenant "default" removed the second factor .* signed you out everywhere/);
    expect(mail.text).toMatch(/http:\/\/localhost(:\d+)?\/second-factor/);

    const audit = (await env.api('GET', '/api/v1/audit?action=user.totp_reset')).json().items as Array<Record<string, unknown>>;
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({
      actor: { type: 'user', id: admin.userId, email: 'second-admin@example.com' }, via: 'link', action: 'user.totp_reset', targetType: 'user', targetId: lost.userId,
      before: { id: lost.userId, totp: true }, after: { id: lost.userId, totp: false, sessionsEnded: 2 },
    });
    expect(JSON.stringify(audit)).not.toContain(secret);
    const sealed = await env.store.db.selectFrom('users').select('totp_secret').where('id', '=', lost.userId).executeTakeFirstOrThrow();
    expect(sealed.totp_secret).toBeNull();
  });

  it('is refused to an admin who does not manage every tenant of the person: the factor guards the account there too', async () => {
    const { person: shared, secret } = await withTotp('shared@example.com', 'viewer');
    const elsewhere = await env.addTenant('elsewhere');
    // Accepting an invitation starts a session in that tenant (and ends the person's others): a sign-in, so with the code.
    const there = await join(elsewhere.token, shared.email, 'owner', totpCode(secret, now));
    const here = await signInTo(shared.email, env.tenant.tenantId, totpCode(secret, now));
    const admin = await invite(env, 'third-admin@example.com', 'admin');
    const refused = expectProblem(await reset(shared.userId, admin), 403, 'PITCREW_ERR_FORBIDDEN');
    expect(refused.detail).toMatch(/also a member of 1 other tenant where you are not their admin.*admin \(owner, where they are owner\) in every tenant/);
    expect(refused.detail).not.toContain('elsewhere');
    // An admin there too, but the person is owner there: still refused; an owner there may.
    const adminThere = await join(elsewhere.token, admin.email, 'admin');
    const adminHere = await signInTo(admin.email, env.tenant.tenantId);
    expectProblem(await reset(shared.userId, adminHere), 403, 'PITCREW_ERR_FORBIDDEN');
    expect((await env.api('PATCH', `/api/v1/users/${adminThere.userId}`, { role: 'owner' }, elsewhere.token)).statusCode).toBe(200);
    const done = await reset(shared.userId, adminHere);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().sessionsEnded).toBe(2);
    for (const session of [here, there]) expectProblem(await session.call('GET', '/api/v1/me'), 401, 'PITCREW_ERR_UNAUTHENTICATED');
  });

  /** Invites an existing account to another tenant and accepts with its password (and its second factor's code): the session there. */
  async function join(tenantToken: string, email: string, role: Role, totp?: string): Promise<Browser> {
    const invited = (await env.api('POST', '/api/v1/users', { email, role }, tenantToken)).json() as { inviteUrl: string; id: string };
    const joined = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', payload: { invite: invited.inviteUrl.split('/').pop(), password: PASSWORD, ...(totp ? { totp } : {}) } });
    expect(joined.statusCode, joined.body).toBe(200);
    return browserOf(env, joined, invited.id, email);
  }

  async function signInTo(email: string, tenantId: string, totp?: string): Promise<Browser> {
    const reply = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD, tenantId, ...(totp ? { totp } : {}) } });
    expect(reply.statusCode, reply.body).toBe(200);
    return browserOf(env, reply, '', email);
  }
});
