import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { staleDaysUpdatedFunction } from './0041_incident_resolution_writes.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * PostgreSQL: a change to a resolved incident always leaves its own stale mark. The triggers of
 * migrations 0028 and 0041 skipped the mark when the day was already marked, which loses a change
 * made while that day is recomputed (incidents/rollup.ts). The recomputation deletes the day's mark
 * (uncommitted) and reads the incidents; a writer's trigger, reading committed rows, still sees
 * the mark and skips its own; the writer commits after the recomputation's read, which commits
 * without the change and with no mark left. The day's numbers stayed wrong until something else
 * touched that day (reproduced with psql; test/incidents-analytics.test.ts interleaves the two).
 *
 * Without the skip the writer's mark is a row the recomputation's delete did not see: the next
 * recomputation takes it. The cost is a mark per statement (updates, 0041) or per row (inserts
 * and deletes of resolved incidents: imports, retention) where a day already marked took none;
 * every recomputation deletes all of a day's marks. SQLite is unchanged: its recomputation holds
 * the write lock, so no writer runs beside it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await markFunctions(db, false);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await markFunctions(db, true);
}

/** The two mark functions as 0028 and 0041 made them (`skipMarked`), or always marking. Their triggers stay. */
async function markFunctions(db: Kysely<any>, skipMarked: boolean): Promise<void> {
  const unlessMarked = (tenant: string, day: string) => (skipMarked ? `where not exists (select 1 from incident_days_stale s where s.tenant_id = ${tenant} and s.day = ${day})` : '');
  const markRow = (row: 'old' | 'new') => `insert into incident_days_stale (tenant_id, day) select ${row}.tenant_id, ${row}.resolved_at / 86400000
          ${unlessMarked(`${row}.tenant_id`, `${row}.resolved_at / 86400000`)};`;
  await sql.raw(`
    create or replace function incidents_mark_stale_day() returns trigger language plpgsql as $$
    begin
      if tg_op <> 'INSERT' and old.state = 'resolved' then
        ${markRow('old')}
      end if;
      if tg_op <> 'DELETE' and new.state = 'resolved' then
        ${markRow('new')}
      end if;
      return null;
    end $$`).execute(db);
  await sql.raw(staleDaysUpdatedFunction(unlessMarked('marked.tenant_id', 'marked.day'), 'create or replace')).execute(db);
}
