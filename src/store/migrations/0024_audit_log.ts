import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 37.5: the audit log (identity/audit/), append-only. `id` is a UUIDv7 made at `at`, so it
 * orders entries by time, pages them, and lets retention delete by primary key. `actor` is JSON
 * ({type, id, email?|name?}); its id, its person's id (a token's user) and e-mail are columns of
 * their own so that the filters find entries through an index. `before` and `after` are the resource's views, secrets masked.
 * Every filter index ends in `id`: a filtered page is read in order, without a sort.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'text')
    .addColumn('actor_email', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text')
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .execute();
  await db.schema.createIndex('audit_log_tenant').on('audit_log').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['tenant_id', 'actor_id', 'id']).execute();
  await db.schema.createIndex('audit_log_actor_user').on('audit_log').columns(['tenant_id', 'actor_user_id', 'id']).execute();
  await db.schema.createIndex('audit_log_actor_email').on('audit_log').columns(['tenant_id', 'actor_email', 'id']).execute();
  await db.schema.createIndex('audit_log_action').on('audit_log').columns(['tenant_id', 'action', 'id']).execute();
  await db.schema.createIndex('audit_log_target').on('audit_log').columns(['tenant_id', 'target_type', 'target_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
}
