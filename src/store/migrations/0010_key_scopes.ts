import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 22: the key in every monitoring tool's webhook URL also enrolled agents, and enrolling
 * an existing host name took that host over. Keys now carry scopes (`webhook`, `enrol`): keys
 * made before this migration keep both, until the tenant narrows them. Enrolment has its own
 * address allowlist, and every enrolment of a host is recorded (who, from where, new or replaced).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text', (c) => c.notNull().defaultTo('["webhook","enrol"]')).execute();
  await db.schema.alterTable('tenants').addColumn('agent_allowlist', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema
    .createTable('host_enrolments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('host_id', 'text', (c) => c.notNull().references('hosts.id'))
    // enrolled: the host was new; replaced: an agent took over an existing host's name (--replace).
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    // The key is kept by id and by its name at the time: a key renamed or revoked later still tells who it was.
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('api_key_name', 'text', (c) => c.notNull())
    .addColumn('source_ip', 'text', (c) => c.notNull())
    .addColumn('agent_version', 'text', (c) => c.notNull())
    .addColumn('os', 'text', (c) => c.notNull())
    // Whether the replaced host's agent was connected when it was replaced.
    .addColumn('was_online', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('host_enrolments_host').on('host_enrolments').columns(['host_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('host_enrolments').execute();
  await db.schema.alterTable('tenants').dropColumn('agent_allowlist').execute();
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute();
}
