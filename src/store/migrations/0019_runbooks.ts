import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 20: the runbook store (runbooks/). A runbook is a name plus its versions; every save adds a
 * version row and nothing updates or deletes one, except deleting the whole runbook. `runbooks`
 * holds what lists and the name check need (the latest version's name and number); the primary key
 * (runbook_id, version) is what keeps two saves at once from both becoming the same version.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('runbooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('latest_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .execute();
  await db.schema.createIndex('runbooks_tenant_name').on('runbooks').columns(['tenant_id', 'name']).unique().execute();
  await db.schema
    .createTable('runbook_versions')
    .addColumn('runbook_id', 'text', (c) => c.notNull().references('runbooks.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('interpreter', 'text', (c) => c.notNull())
    .addColumn('script', 'text', (c) => c.notNull())
    // JSON array of the environment names the script expects.
    .addColumn('env', 'text', (c) => c.notNull())
    // Hex SHA-256 of the script's UTF-8 bytes: what an execution records and the agent checks.
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addPrimaryKeyConstraint('runbook_versions_pk', ['runbook_id', 'version'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('runbook_versions').execute();
  await db.schema.dropTable('runbooks').execute();
}
