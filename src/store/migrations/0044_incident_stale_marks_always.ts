import { PostgresAdapter, sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * PostgreSQL: a change to a resolved incident always leaves its own stale mark. The triggers of
 * migrations 0028 and 0041 skipped the mark when the day was already marked, which loses a change
 * made while that day is recomputed (incidents/rollup.ts). The recomputation deletes the day's mark
 * (uncommitted) and reads the incidents; a writer's trigger, reading committed rows, still sees
 * the mark and skips its own; the writer commits after the recomputation's read, which commits
 * without the change and with no mark left. The day's numbers stayed wrong until something else
 * touched that day (reproduced with psql, bench/README.md session 37; test/incidents-analytics.test.ts).
 *
 * Without the skip the writer's mark is a row the recomputation's delete did not see: the next
 * recomputation takes it. The cost is a mark per statement (updates, 0041) or per row (inserts
 * and deletes of resolved incidents: imports, retention) where a day already marked took none;
 * every recomputation deletes all of a day's marks. SQLite is unchanged: its recomputation holds
 * the write lock, so no writer runs beside it.
 */
const CHANGED = ['state', 'resolved_at', 'opened_at', 'resolved_by', 'alarm_name', 'severity', 'integration_id', 'tenant_id'];

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
  const differs = `(${CHANGED.map((c) => `o.${c}`).join(', ')}) is distinct from (${CHANGED.map((c) => `n.${c}`).join(', ')})`;
  await sql.raw(`
    create or replace function incidents_mark_stale_days_updated() returns trigger language plpgsql as $$
    begin
      insert into incident_days_stale (tenant_id, day)
      select distinct marked.tenant_id, marked.day from (
        select o.tenant_id, o.resolved_at / 86400000 as day from old_rows o join new_rows n on n.id = o.id where o.state = 'resolved' and ${differs}
        union all
        select n.tenant_id, n.resolved_at / 86400000 from old_rows o join new_rows n on n.id = o.id where n.state = 'resolved' and ${differs}
      ) as marked
      ${unlessMarked('marked.tenant_id', 'marked.day')};
      return null;
    end $$`).execute(db);
}
