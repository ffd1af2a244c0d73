import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 37.3: single sign-on. `sso_providers` holds a tenant's OpenID Connect and SAML identity
 * providers; an OIDC client secret is sealed (SecretBox, bound to the row's id) and never read back
 * through the API. `sso_pending` holds a sign-in between its start and the identity provider's
 * answer (state, nonce, PKCE verifier, or a SAML request id): in the database rather than in one
 * node's memory, so the answer may reach any node of a cluster, and deleted when read, so a
 * state is used once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text')
    .addColumn('role_mapping', 'text', (c) => c.notNull())
    .addColumn('jit', 'integer', (c) => c.notNull())
    .addColumn('required', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_providers_tenant_name').on('sso_providers').columns(['tenant_id', 'name']).unique().execute();
  await db.schema
    .createTable('sso_pending')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_pending_expires').on('sso_pending').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_pending').execute();
  await db.schema.dropTable('sso_providers').execute();
}
