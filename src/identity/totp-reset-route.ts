import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { IdParams, problems } from '../http/schemas.js';
import { baseUrl, type Api } from '../http/types.js';
import type { Database } from '../store/schema.js';
import { writeTransaction } from '../store/write-transaction.js';
import { access } from './access.js';
import { audited } from './audit/naming.js';
import { assertAtLeast, Emailed, mailMember, MemberView, memberOrNotFound, members, type UsersDeps } from './members.js';
import type { Principal } from './principal.js';
import { isRole, roleAtLeast } from './roles.js';
import { endSessionsOf } from './sessions.js';

const Reset = Type.Object({
  ...MemberView.properties,
  sessionsEnded: Type.Integer({ description: "the member's sessions signed out, in every tenant" }),
  emailed: Emailed,
});

/**
 * An admin removes a member's second factor: the way back in for someone who lost their
 * authenticator app (as Okta's, GitLab's and Atlassian's admins "reset MFA"). The member's own
 * second factor is theirs to remove, with a code (DELETE /me/totp).
 */
export function registerTotpResetRoute(app: Api, deps: UsersDeps): void {
  const { db } = deps.store;
  app.delete('/users/:id/totp', {
    schema: {
      tags: ['users'], ...access('admin'), ...audited('user.totp_reset'),
      summary: "Remove a member's second factor (they lost their authenticator app): their sessions end everywhere, they are told by e-mail, and sign in with their password alone",
      params: IdParams, response: { 200: Reset, ...problems(401, 403, 404, 409) },
    },
    config: { auditBefore: (request) => memberView(db, request.principal.tenantId, (request.params as { id: string }).id) },
  }, async (request) => {
    const { principal } = request;
    const userId = request.params.id;
    const current = await memberOrNotFound(db, principal.tenantId, userId);
    if (userId === principal.userId) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', 'this is your own second factor: remove it with a current code from your authenticator app (Second factor in the user menu, DELETE /api/v1/me/totp), or ask another admin or owner');
    assertAtLeast(principal, current.role);
    await assertManagesEveryTenantOf(db, principal, userId);
    const now = deps.clock();
    const sessionsEnded = await writeTransaction(deps.store, async (tx) => {
      const cleared = await tx.updateTable('users').set({ totp_secret: null }).where('id', '=', userId).where('totp_secret', 'is not', null).executeTakeFirst();
      if (Number(cleared.numUpdatedRows) !== 1) throw new PitcrewError('PITCREW_ERR_CONFLICT', 'this member has no second factor: they sign in with their password alone (and may set one up under Second factor)');
      // A session opened by whoever holds the lost authenticator must not outlive it.
      return endSessionsOf(tx, userId, now);
    });
    const member = await memberView(db, principal.tenantId, userId);
    const emailed = member.email
      ? await mailMember(deps, principal.tenantId, 'totp_reset', member.email, `${baseUrl(deps.publicUrl, request)}/second-factor`)
      : { sent: false, detail: 'not e-mailed: the member has no e-mail yet' };
    return { ...member, sessionsEnded, emailed };
  });
}

async function memberView(db: Kysely<Database>, tenantId: string, userId: string) {
  const [member] = await members(db, tenantId, { userId });
  if (!member) throw notFound('user', userId);
  return member;
}

/**
 * A second factor guards the account in every tenant it belongs to, so whoever removes it must be
 * admin (owner, for an owner) in each of them: an admin here must not weaken an account that is
 * owner elsewhere. Other tenants are counted, never named: the caller may not be a member of them.
 */
async function assertManagesEveryTenantOf(db: Kysely<Database>, principal: Principal, userId: string): Promise<void> {
  const theirs = await db.selectFrom('memberships').select(['tenant_id', 'role']).where('user_id', '=', userId).where('tenant_id', '!=', principal.tenantId).execute();
  if (theirs.length === 0) return;
  const mine = await db.selectFrom('memberships').select(['tenant_id', 'role']).where('user_id', '=', principal.userId).execute();
  const roleIn = new Map(mine.map((row) => [row.tenant_id, row.role]));
  const beyond = theirs.filter(({ tenant_id: tenantId, role }) => {
    const my = roleIn.get(tenantId);
    return !isRole(my) || !isRole(role) || !roleAtLeast(my, 'admin') || !roleAtLeast(my, role);
  });
  if (beyond.length > 0) {
    throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `this person is also a member of ${beyond.length} other tenant${beyond.length === 1 ? '' : 's'} where you are not their admin, and the second factor guards their account there too: ask someone who is admin (owner, where they are owner) in every tenant they belong to`);
  }
}
