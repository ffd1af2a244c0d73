import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 20: a tenant's git repositories that runbooks are read from (runbooks/git/). The credential
 * (a token or a deploy key) is sealed with the key that seals every secret, bound to the row's id;
 * `auth` says which kind it is, for people. `known_hosts` holds the SSH server's host keys (public,
 * not sealed). The last "test connection" is kept for the repository's page.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repositories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('credential', 'text')
    .addColumn('known_hosts', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('last_test_at', 'bigint')
    .addColumn('last_test_ok', 'integer')
    .addColumn('last_test_message', 'text')
    .addColumn('last_test_commit', 'text')
    .execute();
  await db.schema.createIndex('repositories_tenant_name').on('repositories').columns(['tenant_id', 'name']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('repositories').execute();
}
