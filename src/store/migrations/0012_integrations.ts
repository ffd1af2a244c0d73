import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 17: monitoring tools deliver alerts to an integration's own URL, and rules with an alert
 * trigger name the integration they listen to (rules.integration_id, so the ingest transaction
 * finds them by index). Deleted integrations are soft-deleted: their events stay readable.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    // JSON of the settings that are not secret; the secret (a signing secret, a token) sealed in `secret`.
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .addColumn('last_alert_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .execute();
  await db.schema.createIndex('integrations_tenant').on('integrations').columns(['tenant_id', 'id']).execute();
  await db.schema.alterTable('rules').addColumn('integration_id', 'text').execute();
  await db.schema.createIndex('rules_integration').on('rules').columns(['integration_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('rules_integration').execute();
  await db.schema.alterTable('rules').dropColumn('integration_id').execute();
  await db.schema.dropTable('integrations').execute();
}
