import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 19: a tenant's cloud credentials (credentials/). The secret is sealed with the key that
 * seals channel secrets, bound to the row's id; `summary` holds what people may see (the provider's
 * non-secret identifiers, masked). A credential's last test is kept for its page.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('last_test_at', 'bigint')
    .addColumn('last_test_ok', 'integer')
    .addColumn('last_test_message', 'text')
    .execute();
  await db.schema.createIndex('credentials_tenant_name').on('credentials').columns(['tenant_id', 'name']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('credentials').execute();
}
