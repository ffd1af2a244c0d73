import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { STALE_CHANGES } from './0028_incident_analytics.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: the incident bookkeeping may cost the alert ingest at most 10 % of its throughput
 * (bench/alerts.js `fire+resolve`). A resolution wrote an entry into five indexes of resolved
 * incidents and, on PostgreSQL, ran the stale-day trigger's function once per row. Measured per
 * resolution (bench/incident-resolution.js, bench/README.md): `incidents_resolved_host` (tenant,
 * host, …: an entry at a random place among every resolution ever) wrote the most WAL of them, and
 * the row trigger's function ~10-20 µs of PostgreSQL's CPU.
 *
 * - `incidents_resolved_host` goes. What read it (the analytics asked for one host, the hosts of a
 *   long filtered period) reads `incidents_resolved_day_host`, which now covers what they read: one
 *   host is a probe per day of the period (tenant, day, host), the same entries in the same order
 *   per day. Its entries land within the day of resolution, as the day index's do.
 * - PostgreSQL: the update trigger runs once per statement over its transition tables, so that a
 *   batch's hundred resolutions mark their day with one insert instead of a hundred function calls.
 *   Same marks: an update marks the old day of a row resolved before it and the new day of a row
 *   resolved after it, when a column the rollups read changed. Inserts and deletes keep their row
 *   triggers (imports of resolved incidents, retention): not on the ingest's path.
 */

/**
 * The statement trigger's function: the days of the updated rows resolved before or after, when a
 * column the rollups read changed, marked stale unless `unless` (migration 0044 drops the condition).
 */
export function staleDaysUpdatedFunction(unless: string, create: 'create' | 'create or replace' = 'create'): string {
  const differs = `(${STALE_CHANGES.map((c) => `o.${c}`).join(', ')}) is distinct from (${STALE_CHANGES.map((c) => `n.${c}`).join(', ')})`;
  return `
    ${create} function incidents_mark_stale_days_updated() returns trigger language plpgsql as $$
    begin
      insert into incident_days_stale (tenant_id, day)
      select distinct marked.tenant_id, marked.day from (
        select o.tenant_id, o.resolved_at / 86400000 as day from old_rows o join new_rows n on n.id = o.id where o.state = 'resolved' and ${differs}
        union all
        select n.tenant_id, n.resolved_at / 86400000 from old_rows o join new_rows n on n.id = o.id where n.state = 'resolved' and ${differs}
      ) as marked
      ${unless};
      return null;
    end $$`;
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql`drop index incidents_resolved_day_host`.execute(db);
  await sql`create index incidents_resolved_day_host on incidents (tenant_id, (resolved_at / 86400000), host_key, resolved_at, integration_id, alarm_name, severity, opened_at, resolved_by)
    where state = 'resolved' and host_key <> ''`.execute(db);
  await db.schema.dropIndex('incidents_resolved_host').execute();
  if (!postgres) return;
  await sql.raw(staleDaysUpdatedFunction('where not exists (select 1 from incident_days_stale s where s.tenant_id = marked.tenant_id and s.day = marked.day)')).execute(db);
  await sql`drop trigger incidents_stale_update on incidents`.execute(db);
  await sql`create trigger incidents_stale_update after update on incidents referencing old table as old_rows new table as new_rows
    for each statement execute function incidents_mark_stale_days_updated()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await sql`drop trigger incidents_stale_update on incidents`.execute(db);
    await sql`drop function incidents_mark_stale_days_updated()`.execute(db);
    await sql.raw(`create trigger incidents_stale_update after update on incidents for each row
      when ((old.state = 'resolved' or new.state = 'resolved') and (${STALE_CHANGES.map((c) => `old.${c}`).join(', ')}) is distinct from (${STALE_CHANGES.map((c) => `new.${c}`).join(', ')}))
      execute function incidents_mark_stale_day()`).execute(db);
  }
  await sql`create index incidents_resolved_host on incidents (tenant_id, host_key, resolved_at, integration_id, severity, alarm_name, opened_at, resolved_by) where state = 'resolved'`.execute(db);
  await sql`drop index incidents_resolved_day_host`.execute(db);
  await sql`create index incidents_resolved_day_host on incidents (tenant_id, (resolved_at / 86400000), host_key, resolved_at) where state = 'resolved' and host_key <> ''`.execute(db);
}
