import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38.2: importing a tool's alarms with its read-only credential.
 *
 * `integration_imports` holds an integration's import settings (one row per integration that has
 * been set up to import): the schedule, the look-back of a first import, the rate limit, the
 * read-only secret sealed (SecretBox, owner `<integration id>:import`) or the stored credential it
 * uses, the tool's own position where the last page stopped (`cursor`, written in the transaction
 * that applies the page), when the next scheduled import is due, and the last import's status.
 *
 * `imports` holds each import run: queued, running (claimed by one node, `claim` fencing every page
 * it commits), succeeded or failed, with how many observations it applied and its last error. At
 * most one import of an integration is queued or running at a time, across every node: a partial
 * unique index says so.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('integration_imports')
    .addColumn('integration_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('lookback_days', 'integer', (c) => c.notNull())
    .addColumn('requests_per_second', 'double precision', (c) => c.notNull())
    .addColumn('credential_id', 'text')
    .addColumn('secret', 'text')
    .addColumn('cursor', 'text')
    .addColumn('next_at', 'bigint')
    .addColumn('last_import_id', 'text')
    .addColumn('last_state', 'text')
    .addColumn('last_started_at', 'bigint')
    .addColumn('last_ended_at', 'bigint')
    .addColumn('last_imported', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .addColumn('imported_total', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('integration_imports_due').on('integration_imports').columns(['enabled', 'next_at']).execute();

  await db.schema
    .createTable('imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('imported', 'integer', (c) => c.notNull())
    .addColumn('pages', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('cursor', 'text')
    .addColumn('node_id', 'text')
    .addColumn('claim', 'text')
    .execute();
  await db.schema.createIndex('imports_integration').on('imports').columns(['integration_id', 'id']).execute();
  await db.schema.createIndex('imports_state').on('imports').columns(['state', 'id']).execute();
  await db.schema
    .createIndex('imports_one_active')
    .on('imports')
    .column('integration_id')
    .unique()
    .where(sql<boolean>`state in ('queued', 'running')`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('imports').execute();
  await db.schema.dropTable('integration_imports').execute();
}
