import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { sqliteStaleTriggers, STALE_CHANGES } from './0028_incident_analytics.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38, SQLite: the stale-day triggers test for a day's mark in their WHEN clause, not in
 * their body. A row trigger's body costs its statements every time it runs: the insert, its
 * cursors on `incident_days_stale` and the NOT EXISTS probe, ~5 µs per incident resolved, even
 * when the day is already marked (as it is for every resolution of a day but the first). A WHEN
 * clause is only an expression, so the probe there costs ~1 µs. The update trigger becomes two,
 * one per day it may mark (the old row's, the new row's), each with its own WHEN (measured per
 * resolved row in one process, the variants interleaved: 18.7 → 14.9 µs, 15.1 → 12.1 µs;
 * without any trigger 14.0 and 11.3; bench/README.md, session 40).
 *
 * The same marks as before: a row resolved before a change marks its old day, one resolved after
 * it its new day, when a column the rollups read changed, unless the day is marked already.
 * PostgreSQL is unchanged (its update trigger runs once per statement, migrations 0041 and 0044).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await dropAll(db, ['incidents_stale_insert', 'incidents_stale_update', 'incidents_stale_delete']);
  const changed = STALE_CHANGES.map((c) => `old.${c} is not new.${c}`).join(' or ');
  const unmarked = (row: 'old' | 'new') => `not exists (select 1 from incident_days_stale where tenant_id = ${row}.tenant_id and day = ${row}.resolved_at / 86400000)`;
  const mark = (row: 'old' | 'new') => `insert into incident_days_stale (tenant_id, day) values (${row}.tenant_id, ${row}.resolved_at / 86400000);`;
  await sql.raw(`create trigger incidents_stale_insert after insert on incidents
    when new.state = 'resolved' and ${unmarked('new')} begin ${mark('new')} end`).execute(db);
  for (const row of ['old', 'new'] as const) {
    await sql.raw(`create trigger incidents_stale_update_${row} after update on incidents
      when ${row}.state = 'resolved' and (${changed}) and ${unmarked(row)} begin ${mark(row)} end`).execute(db);
  }
  await sql.raw(`create trigger incidents_stale_delete after delete on incidents
    when old.state = 'resolved' and ${unmarked('old')} begin ${mark('old')} end`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await dropAll(db, ['incidents_stale_insert', 'incidents_stale_update_old', 'incidents_stale_update_new', 'incidents_stale_delete']);
  for (const trigger of sqliteStaleTriggers()) await sql.raw(trigger).execute(db);
}

async function dropAll(db: Kysely<any>, triggers: readonly string[]): Promise<void> {
  for (const trigger of triggers) await sql.raw(`drop trigger ${trigger}`).execute(db);
}
