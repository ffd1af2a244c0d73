import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 37: people. A user (global, by e-mail) belongs to tenants with a role; the UI signs in
 * with sessions (the cookie's secret stored hashed; the CSRF token is derived from it), the API and CLI with personal access
 * tokens (the existing `tokens`, now a user's, with a role at most the user's and an expiry).
 * Invitations are one-time links that let a person set a password; the first owner's comes from
 * `pitcrew bootstrap`. Every tenant that holds tokens from before gets an owner user (no e-mail
 * until someone claims it through a bootstrap link) who holds them, so they keep working.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('totp_secret', 'text')
    .addColumn('failed_logins', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_sign_in_at', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .execute();
  await db.schema.createIndex('users_email').on('users').column('email').unique().execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'tenant_id'])
    .execute();
  await db.schema.createIndex('memberships_tenant').on('memberships').column('tenant_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('sessions_hash').on('sessions').column('hash').unique().execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('invitations_hash').on('invitations').column('hash').unique().execute();

  await db.schema.alterTable('tokens').addColumn('user_id', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('role', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('expires_at', 'bigint').execute();
  await db.schema.createIndex('tokens_user').on('tokens').column('user_id').execute();

  await giveTokensAnOwner(db);
}

/** Each tenant that holds tokens gets one owner user, without e-mail or password, holding them. */
async function giveTokensAnOwner(db: Kysely<any>): Promise<void> {
  const tenants = await db.selectFrom('tokens').select('tenant_id').distinct().execute();
  const now = Date.now();
  for (const { tenant_id: tenantId } of tenants) {
    const userId = randomUUID();
    await db.insertInto('users').values({ id: userId, email: null, password_hash: null, totp_secret: null, failed_logins: 0, locked_until: null, created_at: now, last_sign_in_at: null, disabled_at: null }).execute();
    await db.insertInto('memberships').values({ user_id: userId, tenant_id: tenantId, role: 'owner', created_at: now }).execute();
    await db.updateTable('tokens').set({ user_id: userId }).where('tenant_id', '=', tenantId).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tokens_user').execute();
  await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
  await db.schema.alterTable('tokens').dropColumn('role').execute();
  await db.schema.alterTable('tokens').dropColumn('user_id').execute();
  await db.schema.dropTable('invitations').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('memberships').execute();
  await db.schema.dropTable('users').execute();
}
