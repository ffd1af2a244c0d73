import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from './access.js';
import { audited } from './audit/naming.js';
import { baseUrl, type Api } from '../http/types.js';
import type { Store } from '../store/database.js';
import { pageRequest, toPage, type PageRequest } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import { writeTransaction } from '../store/write-transaction.js';
import type { MailLink } from './account-links.js';
import { issueLink, linkPath, type LinkPurpose } from './invitations.js';
import type { Principal } from './principal.js';
import { isRole, roleAtLeast, type Role } from './roles.js';
import { endSessionsOf } from './sessions.js';
import { createUser, findUser, findUserByEmail, membershipOf, setMembership } from './users.js';
import { RoleSchema } from './views.js';

export interface UsersDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  publicUrl: string | undefined;
  clock: () => number;
  /** Sends invitation and reset links by e-mail; absent, the admin passes the link on. */
  mailLink?: MailLink;
}

const tags = ['users'];
const MemberView = Type.Object({
  id: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  role: RoleSchema,
  status: Type.Enum(['active', 'invited', 'disabled'], { description: 'invited: has not set a password nor signed in with single sign-on yet' }),
  createdAt: Type.String({ format: 'date-time', description: 'when they joined the tenant' }),
  lastSignInAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const Emailed = Type.Object({ sent: Type.Boolean(), detail: Type.String() }, { description: 'whether the link went by e-mail (through the tenant\'s e-mail channel), and if not why' });
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
    return { ...member, inviteUrl, emailed: await mail(deps, principal.tenantId, 'invite', member.email!, inviteUrl, member.role) };
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
    return { resetUrl, emailed: user.email ? await mail(deps, principal.tenantId, 'reset', user.email, resetUrl) : { sent: false, detail: 'not e-mailed: the member has no e-mail yet' } };
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

async function mail(deps: UsersDeps, tenantId: string, purpose: LinkPurpose, to: string, url: string, role?: Role) {
  if (!deps.mailLink) return { sent: false, detail: 'not e-mailed: this service sends no mail; send the link yourself' };
  const tenant = await deps.store.db.selectFrom('tenants').select('name').where('id', '=', tenantId).executeTakeFirstOrThrow();
  return deps.mailLink(tenantId, to, { purpose, url, tenantName: tenant.name, role });
}

/** Nobody grants more than they hold; only an owner makes owners. */
function assertMayGrant(principal: Principal, role: Role): void {
  if (!roleAtLeast(principal.role, role)) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `you act as ${principal.role} and cannot give the ${role} role; ask an owner`);
}

function assertMayChange(principal: Principal, userId: string, currentRole: Role): void {
  if (userId === principal.userId) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', 'you cannot change or remove your own membership; ask another admin or owner');
  if (!roleAtLeast(principal.role, currentRole)) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `this member is ${currentRole}; only an owner can change an owner`);
}

async function assertNotLastOwner(db: Kysely<Database>, tenantId: string): Promise<void> {
  const owners = await db.selectFrom('memberships').select('user_id').where('tenant_id', '=', tenantId).where('role', '=', 'owner').execute();
  if (owners.length <= 1) throw new PitcrewError('PITCREW_ERR_CONFLICT', 'this is the tenant\'s last owner; make someone else owner first');
}

async function memberOrNotFound(db: Kysely<Database>, tenantId: string, userId: string): Promise<{ role: Role }> {
  const member = (await findUser(db, userId)) && (await membershipOf(db, userId, tenantId));
  if (!member) throw notFound('user', userId);
  return member;
}

/**
 * The tenant's members (or the one asked for), by user id: accounts are UUIDv7, so the order is
 * the order they were made and stays put while a list is paged through.
 */
async function members(db: Kysely<Database>, tenantId: string, { userId, page }: { userId?: string; page?: PageRequest }) {
  let query = db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'users.password_hash', 'users.disabled_at', 'users.last_sign_in_at', 'memberships.role', 'memberships.created_at'])
    .where('memberships.tenant_id', '=', tenantId);
  if (userId) query = query.where('users.id', '=', userId);
  if (page?.after) query = query.where('users.id', '>', page.after);
  if (page) query = query.limit(page.limit + 1);
  const rows = await query.orderBy('users.id').execute();
  return rows.filter((row) => isRole(row.role)).map((row) => ({
    id: row.id, email: row.email, role: row.role as Role,
    status: row.disabled_at !== null ? 'disabled' as const : row.password_hash === null && row.last_sign_in_at === null ? 'invited' as const : 'active' as const,
    createdAt: new Date(row.created_at).toISOString(), lastSignInAt: row.last_sign_in_at === null ? null : new Date(row.last_sign_in_at).toISOString(),
  }));
}
