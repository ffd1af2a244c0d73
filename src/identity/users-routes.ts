import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from './access.js';
import { audited } from './audit/naming.js';
import { baseUrl, type Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import { writeTransaction } from '../store/write-transaction.js';
import { issueLink, linkPath } from './invitations.js';
import { assertMayChange, Emailed, mailMember, MemberView, memberOrNotFound, members, type UsersDeps } from './members.js';
import type { Principal } from './principal.js';
import { roleAtLeast, type Role } from './roles.js';
import { endSessionsOf } from './sessions.js';
import { createUser, findUser, findUserByEmail, membershipOf, setMembership } from './users.js';
import { RoleSchema } from './views.js';

const tags = ['users'];
const Invited = Type.Object({ ...MemberView.properties, inviteUrl: Type.String({ description: 'one-time link (7 days) to set a password; shown once' }), emailed: Emailed });

/** The tenant's members: invite, change roles, remove (issue 37). */
export function registerUserRoutes(app: Api, deps: UsersDeps): void {
  const { db } = deps.store;

  app.get('/users', {
    schema: {
      tags, ...access('admin'), summary: "The tenant's members and their roles, oldest account first",
      querystring: Type.Object(PageQuery, { additionalProperties: false }),
      response: { 200: pageOf(MemberView), ...problems(400, 401, 403) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await members(db, request.principal.tenantId, { page }), page, (member) => member);
  });

  app.post('/users', {
    schema: {
      tags, ...access('admin'), ...audited('user.invite', 'reply'), summary: 'Invite a person by e-mail with a role: returns the one-time link to send them',
      body: Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }), role: RoleSchema }, { additionalProperties: false }),
      response: { 201: Invited, ...problems(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const { principal } = request;
    assertMayGrant(principal, request.body.role);
    const now = deps.clock();
    const { userId, link } = await writeTransaction(deps.store, async (tx) => {
      const user = (await findUserByEmail(tx, request.body.email)) ?? (await createUser(tx, { email: request.body.email, now }));
      if (await membershipOf(tx, user.id, principal.tenantId)) throw new PitcrewError('PITCREW_ERR_CONFLICT', `${user.email} is a member of this tenant already; change their role with PATCH /api/v1/users/${user.id}`);
      await setMembership(tx, { userId: user.id, tenantId: principal.tenantId, role: request.body.role, now });
      return { userId: user.id, link: await issueLink(tx, { tenantId: principal.tenantId, userId: user.id, purpose: 'invite', createdBy: principal.userId, now }) };
    });
    const member = (await members(db, principal.tenantId, { userId }))[0]!;
    const inviteUrl = `${baseUrl(deps.publicUrl, request)}${linkPath(link.secret)}`;
    reply.code(201);
    return { ...member, inviteUrl, emailed: await mailMember(deps, principal.tenantId, 'invite', member.email!, inviteUrl, member.role) };
  });

  app.post('/users/:id/reset', {
    schema: {
      tags, ...access('admin'), summary: 'Send a member a password reset link (1 hour, once); their password works until they use it',
      params: IdParams, response: { 200: Type.Object({ resetUrl: Type.String({ description: 'shown once' }), emailed: Emailed }), ...problems(401, 403, 404) },
    },
  }, async (request) => {
    const { principal } = request;
    const current = await memberOrNotFound(db, principal.tenantId, request.params.id);
    assertMayChange(principal, request.params.id, current.role);
    const user = (await findUser(db, request.params.id))!;
    const link = await issueLink(db, { tenantId: principal.tenantId, userId: user.id, purpose: 'reset', createdBy: principal.userId, now: deps.clock() });
    const resetUrl = `${baseUrl(deps.publicUrl, request)}${linkPath(link.secret)}`;
    return { resetUrl, emailed: user.email ? await mailMember(deps, principal.tenantId, 'reset', user.email, resetUrl) : { sent: false, detail: 'not e-mailed: the member has no e-mail yet' } };
  });

  app.patch('/users/:id', {
    schema: {
      tags, ...access('admin'), summary: "Change a member's role",
      params: IdParams, body: Type.Object({ role: RoleSchema }, { additionalProperties: false }), response: { 200: MemberView, ...problems(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { principal } = request;
    const current = await memberOrNotFound(db, principal.tenantId, request.params.id);
    assertMayChange(principal, request.params.id, current.role);
    assertMayGrant(principal, request.body.role);
    await writeTransaction(deps.store, async (tx) => {
      if (current.role === 'owner' && request.body.role !== 'owner') await assertNotLastOwner(tx, principal.tenantId);
      await setMembership(tx, { userId: request.params.id, tenantId: principal.tenantId, role: request.body.role, now: deps.clock() });
    });
    return (await members(db, principal.tenantId, { userId: request.params.id }))[0]!;
  });

  app.delete('/users/:id', {
    schema: {
      tags, ...access('admin'), summary: 'Remove a member from the tenant: their sessions here end and their tokens here are revoked',
      params: IdParams, response: { 204: Type.Null(), ...problems(401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    const { principal } = request;
    const current = await memberOrNotFound(db, principal.tenantId, request.params.id);
    assertMayChange(principal, request.params.id, current.role);
    const now = deps.clock();
    await writeTransaction(deps.store, async (tx) => {
      if (current.role === 'owner') await assertNotLastOwner(tx, principal.tenantId);
      await tx.deleteFrom('memberships').where('user_id', '=', request.params.id).where('tenant_id', '=', principal.tenantId).execute();
      await tx.updateTable('tokens').set({ revoked_at: now }).where('user_id', '=', request.params.id).where('tenant_id', '=', principal.tenantId).where('revoked_at', 'is', null).execute();
      await tx.updateTable('invitations').set({ used_at: now }).where('user_id', '=', request.params.id).where('tenant_id', '=', principal.tenantId).where('used_at', 'is', null).execute();
    });
    await endSessionsOf(db, request.params.id, now, principal.tenantId);
    reply.code(204);
  });
}

/** Nobody grants more than they hold; only an owner makes owners. */
function assertMayGrant(principal: Principal, role: Role): void {
  if (!roleAtLeast(principal.role, role)) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `you act as ${principal.role} and cannot give the ${role} role; ask an owner`);
}

async function assertNotLastOwner(db: Kysely<Database>, tenantId: string): Promise<void> {
  const owners = await db.selectFrom('memberships').select('user_id').where('tenant_id', '=', tenantId).where('role', '=', 'owner').execute();
  if (owners.length <= 1) throw new PitcrewError('PITCREW_ERR_CONFLICT', 'this is the tenant\'s last owner; make someone else owner first');
}
