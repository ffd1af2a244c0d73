import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import type { Store } from '../store/database.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import type { AccountMailPurpose, MailLink } from './account-links.js';
import type { Principal } from './principal.js';
import { isRole, roleAtLeast, type Role } from './roles.js';
import { findUser, membershipOf } from './users.js';
import { RoleSchema } from './views.js';

/** What the routes on the tenant's members need (identity/users-routes.ts, identity/totp-reset-route.ts). */
export interface UsersDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  publicUrl: string | undefined;
  clock: () => number;
  /** Sends invitation and reset links, and account notices, by e-mail; absent, the admin passes them on. */
  mailLink?: MailLink;
}

export const MemberView = Type.Object({
  id: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  role: RoleSchema,
  status: Type.Enum(['active', 'invited', 'disabled'], { description: 'invited: has not set a password nor signed in with single sign-on yet' }),
  totp: Type.Boolean({ description: 'whether the member has a second factor (TOTP): their password sign-in asks for its code' }),
  createdAt: Type.String({ format: 'date-time', description: 'when they joined the tenant' }),
  lastSignInAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export const Emailed = Type.Object({ sent: Type.Boolean(), detail: Type.String() }, { description: 'whether the mail went (through the tenant\'s e-mail channel), and if not why' });

/** Mails a member a link or a notice about their account, through the tenant's e-mail channel. */
export async function mailMember(deps: UsersDeps, tenantId: string, purpose: AccountMailPurpose, to: string, url: string, role?: Role) {
  if (!deps.mailLink) return { sent: false, detail: `not e-mailed: this service sends no mail; ${purpose === 'totp_reset' ? 'tell them yourself' : 'send the link yourself'}` };
  const tenant = await deps.store.db.selectFrom('tenants').select('name').where('id', '=', tenantId).executeTakeFirstOrThrow();
  return deps.mailLink(tenantId, to, { purpose, url, tenantName: tenant.name, role });
}

export function assertMayChange(principal: Principal, userId: string, currentRole: Role): void {
  if (userId === principal.userId) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', 'you cannot change or remove your own membership; ask another admin or owner');
  assertAtLeast(principal, currentRole);
}

/** Only an owner acts on an owner. */
export function assertAtLeast(principal: Principal, currentRole: Role): void {
  if (!roleAtLeast(principal.role, currentRole)) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `this member is ${currentRole}; only an owner can change an owner`);
}

export async function memberOrNotFound(db: Kysely<Database>, tenantId: string, userId: string): Promise<{ role: Role }> {
  const member = (await findUser(db, userId)) && (await membershipOf(db, userId, tenantId));
  if (!member) throw notFound('user', userId);
  return member;
}

/**
 * The tenant's members (or the one asked for), by user id: accounts are UUIDv7, so the order is
 * the order they were made and stays put while a list is paged through.
 */
export async function members(db: Kysely<Database>, tenantId: string, { userId, page }: { userId?: string; page?: PageRequest }) {
  let query = db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'users.password_hash', 'users.totp_secret', 'users.disabled_at', 'users.last_sign_in_at', 'memberships.role', 'memberships.created_at'])
    .where('memberships.tenant_id', '=', tenantId);
  if (userId) query = query.where('users.id', '=', userId);
  if (page?.after) query = query.where('users.id', '>', page.after);
  if (page) query = query.limit(page.limit + 1);
  const rows = await query.orderBy('users.id').execute();
  return rows.filter((row) => isRole(row.role)).map((row) => ({
    id: row.id, email: row.email, role: row.role as Role,
    status: row.disabled_at !== null ? 'disabled' as const : row.password_hash === null && row.last_sign_in_at === null ? 'invited' as const : 'active' as const,
    // Whether there is one, never what it is.
    totp: row.totp_secret !== null,
    createdAt: new Date(row.created_at).toISOString(), lastSignInAt: row.last_sign_in_at === null ? null : new Date(row.last_sign_in_at).toISOString(),
  }));
}
