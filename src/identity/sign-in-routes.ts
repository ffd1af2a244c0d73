import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { problems } from '../http/schemas.js';
import { access } from './access.js';
import { audited, notAudited } from './audit/naming.js';
import { recordSignInRefused } from './audit/sign-ins.js';
import type { Api } from '../http/types.js';
import type { Database, UserRow } from '../store/schema.js';
import { writeTransaction } from '../store/write-transaction.js';
import type { Store } from '../store/database.js';
import type { MailLink } from './account-links.js';
import { issueLink, linkPath, peekLink, redeemLink } from './invitations.js';
import { baseUrl } from '../http/types.js';
import { hashPassword, passwordMatches, passwordProblem } from './passwords.js';
import type { Principal } from './principal.js';
import type { SecretBox } from './secret-box.js';
import { clearSessionCookies, isSecureRequest, sessionSecretOf, setSessionCookies } from './session-cookies.js';
import { csrfTokenOf, endSession, endSessionsOf, startSession, type SessionPolicy } from './sessions.js';
import { AddressBrake, afterFailure } from './sign-in-guard.js';
import { totpMatches } from './totp.js';
import { findUser, findUserByEmail, membershipOf, normaliseEmail, tenantsOf } from './users.js';
import { MeView } from './views.js';

export interface SignInDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  box: SecretBox;
  sessions: SessionPolicy;
  publicUrl: string | undefined;
  clock: () => number;
  mailLink?: MailLink;
  /** Whether a tenant lets its members sign in with a password (single sign-on can require otherwise). */
  passwordAllowed?: (tenantId: string) => Promise<boolean>;
  /** Why a member whose password is right may still not use it (their tenants require single sign-on); undefined when nothing stops them. */
  passwordRefusal?: (tenantIds: string[]) => Promise<string | undefined>;
}

const tags = ['identity'];
const Login = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  totp: Type.Optional(Type.String({ maxLength: 16, description: 'the 6-digit code of the authenticator app, for an account with a second factor' })),
  tenantId: Type.Optional(Type.String({ description: 'the tenant to act in (default: the first of yours by name)' })),
}, { additionalProperties: false });
const Accept = Type.Object({
  invite: Type.String({ minLength: 10, maxLength: 200, description: 'the last segment of the invitation or bootstrap link' }),
  password: Type.String({ maxLength: 1024 }),
  email: Type.Optional(Type.String({ minLength: 3, maxLength: 320, format: 'email', description: "the first owner's e-mail (bootstrap link only)" })),
  totp: Type.Optional(Type.String({ maxLength: 16, description: 'the 6-digit code of the authenticator app, for an account with a second factor: a link signs in, so it asks what a sign-in asks' })),
}, { additionalProperties: false });
const FAILED = 'the e-mail or password is wrong (or the code of the second factor), or the account may not sign in with a password';
const LINK_GONE = 'this link is unknown, used already or expired; ask an admin of the tenant for a new invitation (the first owner: npx pitcrew bootstrap --json --new)';
const LinkView = Type.Object({
  purpose: Type.Enum(['invite', 'reset', 'first_owner'], { description: 'invite: join the tenant; reset: choose a new password; first_owner: the bootstrap link, which also asks for the e-mail' }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'the account the link is for (null: the first owner, who gives it)' }),
  tenant: Type.String({ description: "the tenant's name" }),
  existingAccount: Type.Boolean({ description: 'an invitation for someone who has a password already: they accept with it (it is not replaced)' }),
  secondFactor: Type.Boolean({ description: "the account has a second factor: using the link also takes the authenticator app's code (totp)" }),
});

/** Sign-in, sign-out and "who am I" (issue 37): the UI's sessions. */
export function registerSignInRoutes(app: Api, deps: SignInDeps): void {
  const { db } = deps.store;
  const brake = new AddressBrake();

  app.post('/auth/login', {
    schema: { tags, ...access('public'), ...audited('session.start', 'session'), summary: 'Sign in with e-mail and password: sets the session cookie', body: Login, response: { 200: MeView, ...problems(400, 401, 429) } },
  }, async (request, reply) => {
    const now = deps.clock();
    const wait = brake.waitFor(request.ip, now);
    if (wait > 0) {
      // The address is held back whichever account it names; the account's admins still see the attempt.
      const named = await findUserByEmail(db, request.body.email);
      if (named) await recordSignInRefused(db, { userId: named.id, email: named.email, ip: request.ip, reason: 'too many failed sign-ins from this address: the address is held back', now });
      throw locked(wait, 'from this address');
    }
    const user = await findUserByEmail(db, request.body.email);
    const refuse = async (reason: string): Promise<never> => {
      brake.failed(request.ip, now);
      if (user) {
        const failure = afterFailure(user.failed_logins, now);
        await db.updateTable('users').set(failure).where('id', '=', user.id).execute();
        await recordSignInRefused(db, { userId: user.id, email: user.email, ip: request.ip, reason, now, lockedUntil: failure.locked_until });
      }
      request.log.info({ userId: user?.id, ip: request.ip }, 'sign-in refused');
      throw new PitcrewError('PITCREW_ERR_SIGN_IN_FAILED', FAILED);
    };
    if (user?.locked_until && user.locked_until > now) {
      await recordSignInRefused(db, { userId: user.id, email: user.email, ip: request.ip, reason: 'the account is locked after failed sign-ins', now });
      throw locked(user.locked_until - now, 'for this account');
    }
    // A missing account costs the same hash as a present one, so timing does not tell them apart.
    const matches = await passwordMatches(request.body.password, user?.password_hash ?? DECOY_HASH);
    if (!user || !user.password_hash || !matches || user.disabled_at !== null) return refuse(user?.disabled_at ? 'the account is disabled' : 'wrong password');
    if (user.totp_secret) {
      // The password was right: the person is asked for the code (no failure counted, nothing to record yet).
      if (!request.body.totp?.trim()) throw new PitcrewError('PITCREW_ERR_SECOND_FACTOR_REQUIRED', 'this account has a second factor: give the 6-digit code your authenticator app shows now (totp)', { fieldErrors: [{ path: '/body/totp', message: 'required for this account' }] });
      if (!totpMatches(deps.box.open(user.totp_secret, user.id), request.body.totp, now)) return refuse('wrong second-factor code');
    }
    const tenantId = await tenantToActIn(deps, user, request.body.tenantId);
    if (!tenantId) {
      // The password was right: saying SSO is required tells nothing a stranger could use.
      const why = await deps.passwordRefusal?.((await tenantsOf(db, user.id)).map((tenant) => tenant.id).filter((id) => !request.body.tenantId || id === request.body.tenantId));
      if (why) {
        await recordSignInRefused(db, { userId: user.id, email: user.email, ip: request.ip, reason: 'password sign-in is off: the tenant requires single sign-on', now });
        throw new PitcrewError('PITCREW_ERR_SSO_REQUIRED', why);
      }
      return refuse('no tenant of the account takes password sign-ins (or not the one asked for)');
    }
    const started = await startSession(db, { userId: user.id, tenantId, via: 'password', ip: request.ip, now, policy: deps.sessions });
    setSessionCookies(reply, started, isSecureRequest(request, deps.publicUrl));
    return signedIn(request, await presentMe(db, { tenantId, userId: user.id, via: 'password', csrfToken: started.csrfToken }), started.id);
  });

  // A POST with the link in the body, as /auth/accept takes it: a secret stays out of URLs and logs.
  app.post('/auth/accept/preview', {
    schema: {
      ...notAudited('a read: the link stays unused, nothing changes'),
      tags, ...access('public'), summary: "What an invitation, password reset or bootstrap link is for, before it is used (the accept page words its form by it); the link stays unused",
      body: Type.Object({ invite: Type.String({ minLength: 10, maxLength: 200, description: 'the last segment of the link' }) }, { additionalProperties: false }),
      response: { 200: LinkView, ...problems(400, 404) },
    },
  }, async (request) => {
    const link = await peekLink(db, request.body.invite, deps.clock());
    if (!link) throw new PitcrewError('PITCREW_ERR_NOT_FOUND', LINK_GONE);
    const user = (await findUser(db, link.userId))!;
    const tenant = await db.selectFrom('tenants').select('name').where('id', '=', link.tenantId).executeTakeFirstOrThrow();
    const firstOwner = user.email === null;
    return {
      purpose: firstOwner ? 'first_owner' as const : link.purpose, email: user.email, tenant: tenant.name,
      existingAccount: link.purpose === 'invite' && user.password_hash !== null,
      secondFactor: user.totp_secret !== null,
    };
  });

  app.post('/auth/accept', {
    schema: {
      tags, ...access('public'), ...audited('user.accept', 'user'), summary: 'Use an invitation or the bootstrap link: set your password (and the first owner\'s e-mail) and sign in',
      body: Accept, response: { 200: MeView, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    const problem = passwordProblem(request.body.password);
    if (problem) throw new PitcrewError('PITCREW_ERR_VALIDATION', problem, { fieldErrors: [{ path: '/body/password', message: problem }] });
    const passwordHash = await hashPassword(request.body.password);
    const now = deps.clock();
    // A link signs in: an existing account's password (an invitation to one more tenant) and a
    // second factor's code are held back by the account's lock, and a wrong one counts towards it
    // and is recorded.
    let refusedUser: UserRow | undefined;
    let wrongReason = 'wrong password, given to accept an invitation';
    const link = await writeTransaction(deps.store, async (tx) => {
      const redeemed = await redeemLink(tx, request.body.invite, now);
      if (!redeemed) throw new PitcrewError('PITCREW_ERR_SIGN_IN_FAILED', LINK_GONE);
      const user = (await findUser(tx, redeemed.userId))!;
      if (redeemed.purpose === 'reset' && !user.email) throw new PitcrewError('PITCREW_ERR_SIGN_IN_FAILED', 'this reset link belongs to an account without an e-mail; ask an admin for an invitation');
      const email = user.email ?? (request.body.email && normaliseEmail(request.body.email));
      if (!email) throw new PitcrewError('PITCREW_ERR_VALIDATION', 'this is the first owner\'s link: give the e-mail you will sign in with (email)', { fieldErrors: [{ path: '/body/email', message: 'required for the first owner' }] });
      if (!user.email && (await findUserByEmail(tx, email))) throw new PitcrewError('PITCREW_ERR_CONFLICT', `${email} is another user's e-mail already; give another`);
      const existing = redeemed.purpose === 'invite' && user.password_hash !== null;
      if ((existing || user.totp_secret) && user.locked_until && user.locked_until > now) throw locked(user.locked_until - now, 'for this account');
      // An invitation to one more tenant does not let its holder replace an existing account's password.
      if (existing && !(await passwordMatches(request.body.password, user.password_hash!))) {
        refusedUser = user;
        throw new PitcrewError('PITCREW_ERR_SIGN_IN_FAILED', `${user.email} has a pitcrew account already: give its password to accept (forgot it? use "Forgot password" on the sign-in page)`);
      }
      // The link signs in: an account with a second factor gives its code, as at sign-in (the
      // mailbox alone, with a reset link, would otherwise get past it).
      if (user.totp_secret) {
        if (!request.body.totp?.trim()) throw new PitcrewError('PITCREW_ERR_SECOND_FACTOR_REQUIRED', 'this account has a second factor: give the 6-digit code your authenticator app shows now (totp); lost it? an admin of your tenant can remove it', { fieldErrors: [{ path: '/body/totp', message: 'required for this account' }] });
        if (!totpMatches(deps.box.open(user.totp_secret, user.id), request.body.totp, now)) {
          refusedUser = user;
          wrongReason = 'wrong second-factor code, given with a one-time link';
          throw new PitcrewError('PITCREW_ERR_SIGN_IN_FAILED', 'the code of the second factor is wrong: give the one your authenticator app shows now', { fieldErrors: [{ path: '/body/totp', message: 'wrong code' }] });
        }
      }
      if (existing) return redeemed;
      await tx.updateTable('users').set({ email, password_hash: passwordHash, failed_logins: 0, locked_until: null }).where('id', '=', user.id).execute();
      return redeemed;
    }).catch(async (error: unknown) => {
      // The link's use was undone with the refusal; the failure itself is kept.
      if (refusedUser) {
        const failure = afterFailure(refusedUser.failed_logins, now);
        await db.updateTable('users').set(failure).where('id', '=', refusedUser.id).execute();
        await recordSignInRefused(db, { userId: refusedUser.id, email: refusedUser.email, ip: request.ip, reason: wrongReason, now, lockedUntil: failure.locked_until });
      }
      throw error;
    });
    await endSessionsOf(db, link.userId, now);
    const started = await startSession(db, { userId: link.userId, tenantId: link.tenantId, via: 'link', ip: request.ip, now, policy: deps.sessions });
    setSessionCookies(reply, started, isSecureRequest(request, deps.publicUrl));
    return signedIn(request, await presentMe(db, { tenantId: link.tenantId, userId: link.userId, via: 'link', csrfToken: started.csrfToken }), started.id);
  });

  app.post('/auth/reset', {
    schema: {
      ...notAudited('anyone may ask, for any address, and the reply is the same either way: who asked is unknown; the link is recorded when used (user.accept)'),
      tags, ...access('public'), summary: 'Forgot password: e-mails a reset link to the address if it is a member\'s (the reply is the same either way)',
      body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }) }, { additionalProperties: false }),
      response: { 202: Type.Object({ detail: Type.String() }), ...problems(400, 429) },
    },
  }, async (request, reply) => {
    const now = deps.clock();
    const wait = brake.waitFor(request.ip, now);
    if (wait > 0) throw locked(wait, 'from this address');
    // Counted as a failure: a reset request must not become a cheap way to probe or flood.
    brake.failed(request.ip, now);
    const user = await findUserByEmail(db, request.body.email);
    const tenant = user && user.disabled_at === null && deps.mailLink ? (await tenantsOf(db, user.id))[0] : undefined;
    if (user && tenant && deps.mailLink) {
      const link = await issueLink(db, { tenantId: tenant.id, userId: user.id, purpose: 'reset', createdBy: null, now });
      const sent = await deps.mailLink(tenant.id, user.email!, { purpose: 'reset', url: `${baseUrl(deps.publicUrl, request)}${linkPath(link.secret)}`, tenantName: tenant.name });
      request.log.info({ userId: user.id, sent: sent.sent }, sent.detail.replace(/ to \S+@\S+/, ''));
    }
    reply.code(202);
    return { detail: 'if the address belongs to a member and their tenant can send mail, a reset link is on its way (valid 1 hour); otherwise ask an admin for one' };
  });

  app.post('/auth/logout', {
    schema: {
      tags, ...access('viewer'), ...audited('session.end', 'session'), summary: 'Sign out this session, or every session of yours (everywhere: true)',
      body: Type.Optional(Type.Object({ everywhere: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
      response: { 200: Type.Object({ ended: Type.Integer({ description: 'how many sessions ended' }) }), ...problems(400, 401) },
    },
  }, async (request, reply) => {
    const { principal } = request;
    const now = deps.clock();
    let ended: number;
    if (request.body?.everywhere) ended = await endSessionsOf(db, principal.userId, now);
    else if (principal.sessionId) ended = (await endSession(db, principal.sessionId, now), 1);
    else throw new PitcrewError('PITCREW_ERR_VALIDATION', 'a personal access token has no session to end: revoke it (DELETE /api/v1/tokens/{id}), or send {"everywhere": true} to end every session of its user');
    clearSessionCookies(reply, isSecureRequest(request, deps.publicUrl));
    return { ended };
  });

  app.get('/me', {
    schema: { tags, ...access('viewer'), summary: 'Who you are, your tenants and role, and the CSRF token of your session', response: { 200: MeView, ...problems(401) } },
  }, async (request) => {
    const secret = sessionSecretOf(request);
    const csrfToken = request.principal.sessionId && secret ? csrfTokenOf(secret) : null;
    return presentMe(db, { ...request.principal, csrfToken });

  });

  app.post('/auth/tenant', {
    schema: {
      tags, ...access('viewer'), ...audited('session.switch_tenant', 'session'), summary: 'Switch the tenant this session acts in (one of yours)',
      body: Type.Object({ tenantId: Type.String() }, { additionalProperties: false }), response: { 200: MeView, ...problems(400, 401, 403) },
    },
  }, async (request) => {
    const { principal } = request;
    if (!principal.sessionId) throw new PitcrewError('PITCREW_ERR_VALIDATION', 'a personal access token acts in the tenant it was issued in; issue one in the other tenant');
    if (!(await membershipOf(db, principal.userId, request.body.tenantId))) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `you are not a member of tenant ${request.body.tenantId}`);
    if (deps.passwordAllowed && principal.via === 'password' && !(await deps.passwordAllowed(request.body.tenantId))) {
      throw new PitcrewError('PITCREW_ERR_FORBIDDEN', 'that tenant requires single sign-on: sign out and sign in with its SSO button');
    }
    await db.updateTable('sessions').set({ tenant_id: request.body.tenantId }).where('id', '=', principal.sessionId).execute();
    const secret = sessionSecretOf(request);
    return presentMe(db, { userId: principal.userId, via: principal.via, tenantId: request.body.tenantId, csrfToken: secret ? csrfTokenOf(secret) : null });
  });
}

/** A sign-in succeeded: the request now acts as the person, so that the audit log records who signed in. */
function signedIn<Me extends { user: { id: string; email: string | null }; tenantId: string; role: Principal['role']; via: Principal['via'] }>(request: FastifyRequest, me: Me, sessionId: string): Me {
  request.principal = { tenantId: me.tenantId, role: me.role, userId: me.user.id, email: me.user.email, via: me.via, tokenId: null, tokenName: null, sessionId };
  return me;
}

// A hash of a password nobody has, checked when the account does not exist.
const DECOY_HASH = 'scrypt$32768$8$3$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

async function tenantToActIn(deps: SignInDeps, user: UserRow, wanted: string | undefined): Promise<string | undefined> {
  const tenants = await tenantsOf(deps.store.db, user.id);
  const allowed = [];
  for (const tenant of tenants) if (!deps.passwordAllowed || (await deps.passwordAllowed(tenant.id))) allowed.push(tenant);
  return (wanted ? allowed.find((t) => t.id === wanted) : allowed[0])?.id;
}

function locked(waitMs: number, what: string): PitcrewError {
  const seconds = Math.ceil(waitMs / 1000);
  return new PitcrewError('PITCREW_ERR_SIGN_IN_LOCKED', `too many failed sign-ins ${what}: try again in ${Math.ceil(seconds / 60)} minute(s), or ask an admin for a password reset link`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/** `role`: the caller's, when a token narrows the member's. */
export async function presentMe(db: Kysely<Database>, who: Pick<Principal, 'tenantId' | 'userId' | 'via'> & Partial<Pick<Principal, 'role'>> & { csrfToken: string | null }) {
  const user = (await findUser(db, who.userId))!;
  const tenants = await tenantsOf(db, user.id);
  const role = who.role ?? tenants.find((t) => t.id === who.tenantId)?.role ?? 'viewer';
  return { user: { id: user.id, email: user.email, totp: user.totp_secret !== null }, tenants, tenantId: who.tenantId, role, via: who.via, csrfToken: who.csrfToken };
}
