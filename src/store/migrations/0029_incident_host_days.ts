import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: the hosts with the most resolved incidents over a period without other filters, summed
 * from a rollup per tenant, UTC day and host key: at most hosts × days rows, where counting them from
 * the incidents read every one of the period's index entries (a million: 0.5 s of CPU on SQLite,
 * 1.7 s on PostgreSQL for 90 days, bench/incidents-analytics.js). Recomputed with `incident_days`
 * from the days migration 0028's triggers mark stale (incidents/rollup.ts); incidents without a
 * host are not in it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('incident_host_days')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('host_key', 'text', (c) => c.notNull())
    .addColumn('resolved', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('incident_host_days_pkey', ['tenant_id', 'day', 'host_key'])
    .execute();
  // The days resolved so far: computed, both rollups, at the first read.
  await sql`insert into incident_days_stale (tenant_id, day) select distinct tenant_id, resolved_at / 86400000 from incidents where state = 'resolved'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('incident_host_days').execute();
}
