import { PostgresAdapter, sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Release 0.1.0 names two indexes that migrations 0034 and 0041 dropped: `incidents_resolved_time`
 * (its rollups' recompute and the hosts of a period) and `incidents_resolved_host` (its analytics of
 * one host). On SQLite a statement whose `indexed by` names a missing index fails to prepare, so
 * 0.1.0 run on this schema (going back after an upgrade, docs/operations.md) answered its incident
 * analytics with errors. Two indexes of this release take those names instead, so that a resolution
 * writes no entry more than before:
 *
 * - `incidents_resolved_day` becomes `incidents_resolved_time`: it covers every column 0.1.0's reads
 *   take (by time within the tenant's entries, as its own index did, only scanned in day order);
 * - `incidents_tenant_host_resolved` (tenant, host, id) becomes `incidents_resolved_host`: 0.1.0's
 *   reads of one host find that host's incidents in it, and look their rows up.
 *
 * Both keep `where state = 'resolved'`, a term each of 0.1.0's statements names as written, which
 * is what lets SQLite use a partial index. PostgreSQL renames in place; SQLite builds each anew.
 */
const RENAMES: Array<[from: string, to: string, definition: string]> = [
  ['incidents_resolved_day', 'incidents_resolved_time',
    "(tenant_id, (resolved_at / 86400000), integration_id, alarm_name, severity, opened_at, resolved_by, resolved_at, host_key) where state = 'resolved'"],
  ['incidents_tenant_host_resolved', 'incidents_resolved_host', "(tenant_id, host_key, id) where state = 'resolved'"],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [from, to, definition] of RENAMES) await rename(db, from, to, definition);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [from, to, definition] of RENAMES) await rename(db, to, from, definition);
}

async function rename(db: Kysely<any>, from: string, to: string, definition: string): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter index ${sql.ref(from)} rename to ${sql.ref(to)}`.execute(db);
    return;
  }
  await sql`create index ${sql.ref(to)} on incidents ${sql.raw(definition)}`.execute(db);
  await sql`drop index ${sql.ref(from)}`.execute(db);
}
