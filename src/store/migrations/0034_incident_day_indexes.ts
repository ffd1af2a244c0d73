import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: the analytics over a million incidents answer in under a second, also right after a
 * million landed at once (an upgrade through migration 0028, a history imported): the call then
 * recomputes its period's days of the rollups (incidents/rollup.ts). Grouped by UTC day from an
 * index ordered by time, SQLite looked every incident up in a temporary b-tree of the groups: 30
 * days at a million, 540 ms of CPU for incident_days and 330 ms for incident_host_days. Ordered by
 * the day itself (an index on the expression), the groups come out one after another, nothing to
 * look up: 140 ms and ~100 ms (bench/README.md).
 *
 * - `incidents_resolved_day` replaces `incidents_resolved_time` (tenant, resolved_at, …): by day,
 *   then the rollup's keys, and what it sums; `resolved_at` and `host_key` last, so that it still
 *   covers the hosts of a short period (analytics-reads.ts) and whoever reads times within a day.
 * - `incidents_resolved_day_host`: the per-day hosts (incident_host_days), resolved incidents that
 *   name a host only. One index more for the ingest to keep: an entry per resolution.
 *
 * The expression is the rollups' own (`resolved_at / 86400000`, rollup.ts DAY): a query groups and
 * ranges by the very expression the index holds, or neither database takes it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index incidents_resolved_day on incidents (tenant_id, (resolved_at / 86400000), integration_id, alarm_name, severity, opened_at, resolved_by, resolved_at, host_key)
    where state = 'resolved'`.execute(db);
  await sql`create index incidents_resolved_day_host on incidents (tenant_id, (resolved_at / 86400000), host_key, resolved_at) where state = 'resolved' and host_key <> ''`.execute(db);
  await db.schema.dropIndex('incidents_resolved_time').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index incidents_resolved_time on incidents (tenant_id, resolved_at, integration_id, alarm_name, severity, opened_at, resolved_by, host_key) where state = 'resolved'`.execute(db);
  await db.schema.dropIndex('incidents_resolved_day_host').execute();
  await db.schema.dropIndex('incidents_resolved_day').execute();
}
