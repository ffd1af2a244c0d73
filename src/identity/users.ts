import type { Kysely } from 'kysely';
import { newId } from '../store/ids.js';
import type { Database, UserRow } from '../store/schema.js';
import { isRole, type Role } from './roles.js';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst();
}

export async function findUser(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function createUser(db: Kysely<Database>, { email, now }: { email: string | null; now: number }): Promise<UserRow> {
  const row: UserRow = {
    id: newId(now), email: email === null ? null : normaliseEmail(email), password_hash: null, totp_secret: null, failed_logins: 0, locked_until: null,
    created_at: now, last_sign_in_at: null, disabled_at: null,
  };
  await db.insertInto('users').values(row).execute();
  return row;
}

/** Gives the user this role in the tenant, adding the membership if there was none. */
export async function setMembership(db: Kysely<Database>, { userId, tenantId, role, now }: { userId: string; tenantId: string; role: Role; now: number }): Promise<void> {
  await db
    .insertInto('memberships')
    .values({ user_id: userId, tenant_id: tenantId, role, created_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'tenant_id']).doUpdateSet({ role }))
    .execute();
}

export async function membershipOf(db: Kysely<Database>, userId: string, tenantId: string): Promise<{ role: Role } | undefined> {
  const row = await db.selectFrom('memberships').select('role').where('user_id', '=', userId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row && isRole(row.role) ? { role: row.role } : undefined;
}

export interface TenantMembership {
  id: string;
  name: string;
  role: Role;
}

export async function tenantsOf(db: Kysely<Database>, userId: string): Promise<TenantMembership[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .select(['tenants.id as id', 'tenants.name as name', 'memberships.role as role'])
    .where('memberships.user_id', '=', userId)
    .orderBy('tenants.name')
    .execute();
  return rows.flatMap((row) => (isRole(row.role) ? [{ id: row.id, name: row.name, role: row.role }] : []));
}
