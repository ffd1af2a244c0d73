import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: the incident bookkeeping may cost the alert ingest at most 10 % of its throughput
 * (bench/alerts.js). A new incident entered seven b-trees; those by host (tenant, host, id) and by
 * integration (integration, state, id) at a random place each, so each dirtied its own page and
 * WAL frame at commit, and a resolution moved the integration's entry from its open range to its
 * resolved one (a delete and an insert). Open incidents are few per tenant: what filters them by
 * host or integration reads `incidents_tenant_open` (migration 0030) and filters its rows
 * (incidents/repository.ts). Both indexes keep resolved incidents only: a new incident enters five
 * b-trees, and a resolution writes one entry in each instead of moving the integration's.
 *
 * `incidents_tenant_alarm` stays whole: the previous release names it (`indexed by`, SQLite) for
 * the alarm's newest labels, which a partial index cannot serve.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index incidents_tenant_host_resolved on incidents (tenant_id, host_key, id) where state = 'resolved'`.execute(db);
  await sql`create index incidents_integration_resolved on incidents (integration_id, id) where state = 'resolved'`.execute(db);
  await db.schema.dropIndex('incidents_tenant_host').execute();
  await db.schema.dropIndex('incidents_integration').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('incidents_tenant_host').on('incidents').columns(['tenant_id', 'host_key', 'id']).execute();
  await db.schema.createIndex('incidents_integration').on('incidents').columns(['integration_id', 'state', 'id']).execute();
  await db.schema.dropIndex('incidents_integration_resolved').execute();
  await db.schema.dropIndex('incidents_tenant_host_resolved').execute();
}
