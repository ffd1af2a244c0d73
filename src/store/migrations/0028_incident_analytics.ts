import { PostgresAdapter, sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38.3-4: the analytics over resolved incidents (incidents/analytics-reads.ts), which must
 * answer over a million incidents in under a second on SQLite and PostgreSQL (bench/incidents-analytics.js).
 *
 * - `incident_days`: per tenant, UTC day of resolution, integration ('' for a webhook's), alarm
 *   name and severity ('' for none): how many resolved, how many by automation, the sum and the
 *   longest of their resolution times. The counts, means, MTTR by day and automation share read
 *   it: a year of 200 alarms is at most 73,000 rows, where the same numbers from the incidents
 *   took 1.4 s per grouping over a million rows on SQLite, even with a covering index (measured).
 * - It is derived data, recomputed from the incidents a UTC day at a time
 *   (incidents/rollup.ts). Every change to a resolved incident (resolved, re-dated, deleted by
 *   retention, by whatever code does it) marks its day stale in `incident_days_stale`, by the
 *   triggers below, in the transaction that changed it; the analytics recompute the stale days
 *   of their tenant before reading. Why not keep the counts by triggers in place: two ingest
 *   transactions resolving the same alarm on two hosts would both update one rollup row, and with
 *   two such alarms in opposite orders on PostgreSQL, one of them would be aborted as a deadlock
 *   and its whole batch of webhook calls with it. A stale mark is an insert into a table without a
 *   unique key: no transaction ever waits for another on it. (The trigger skips the insert when
 *   the day is already marked; two transactions marking one day at once may both insert: harmless.)
 * - Three covering indexes over resolved incidents, partial like the one they replace: by time
 *   (recomputing a day; hosts over a short period), by alarm (the percentiles of the slowest
 *   alarms, the hosts of a candidate, the day a rule was created), by host (hosts over a long
 *   period; everything when the analytics are asked for one host). Covering, because reading the
 *   rows themselves in index order is a random read per incident: 10 s per million on SQLite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('incident_days')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    // Days since 1970-01-01 UTC of resolved_at.
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('alarm_name', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('resolved', 'integer', (c) => c.notNull())
    .addColumn('automated', 'integer', (c) => c.notNull())
    // Resolution times (resolved_at - opened_at), milliseconds.
    .addColumn('total_ms', 'bigint', (c) => c.notNull())
    .addColumn('max_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('incident_days_pkey', ['tenant_id', 'day', 'integration_id', 'alarm_name', 'severity'])
    .execute();

  await db.schema
    .createTable('incident_days_stale')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('incident_days_stale_day').on('incident_days_stale').columns(['tenant_id', 'day']).execute();

  await db.schema.dropIndex('incidents_tenant_resolved').execute();
  await sql`create index incidents_resolved_time on incidents (tenant_id, resolved_at, integration_id, alarm_name, severity, opened_at, resolved_by, host_key) where state = 'resolved'`.execute(db);
  await sql`create index incidents_resolved_alarm on incidents (tenant_id, alarm_name, resolved_at, opened_at, integration_id, severity, host_key) where state = 'resolved'`.execute(db);
  await sql`create index incidents_resolved_host on incidents (tenant_id, host_key, resolved_at, integration_id, severity, alarm_name, opened_at, resolved_by) where state = 'resolved'`.execute(db);

  if (postgres) {
    await sql.raw(`
      create function incidents_mark_stale_day() returns trigger language plpgsql as $$
      begin
        if tg_op <> 'INSERT' and old.state = 'resolved' then
          insert into incident_days_stale (tenant_id, day) select old.tenant_id, old.resolved_at / 86400000
            where not exists (select 1 from incident_days_stale where tenant_id = old.tenant_id and day = old.resolved_at / 86400000);
        end if;
        if tg_op <> 'DELETE' and new.state = 'resolved' then
          insert into incident_days_stale (tenant_id, day) select new.tenant_id, new.resolved_at / 86400000
            where not exists (select 1 from incident_days_stale where tenant_id = new.tenant_id and day = new.resolved_at / 86400000);
        end if;
        return null;
      end $$`).execute(db);
    await sql`create trigger incidents_stale_insert after insert on incidents for each row when (new.state = 'resolved') execute function incidents_mark_stale_day()`.execute(db);
    await sql.raw(`create trigger incidents_stale_update after update on incidents for each row
      when ((old.state = 'resolved' or new.state = 'resolved') and (${STALE_CHANGES.map((c) => `old.${c}`).join(', ')}) is distinct from (${STALE_CHANGES.map((c) => `new.${c}`).join(', ')}))
      execute function incidents_mark_stale_day()`).execute(db);
    await sql`create trigger incidents_stale_delete after delete on incidents for each row when (old.state = 'resolved') execute function incidents_mark_stale_day()`.execute(db);
  } else {
    for (const trigger of sqliteStaleTriggers()) await sql.raw(trigger).execute(db);
  }

  // Incidents resolved before this migration: their days are computed at the first read.
  await sql`insert into incident_days_stale (tenant_id, day) select distinct tenant_id, resolved_at / 86400000 from incidents where state = 'resolved'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const trigger of ['incidents_stale_insert', 'incidents_stale_update', 'incidents_stale_delete']) {
    await sql.raw(postgres ? `drop trigger ${trigger} on incidents` : `drop trigger ${trigger}`).execute(db);
  }
  if (postgres) await sql`drop function incidents_mark_stale_day()`.execute(db);
  await db.schema.dropIndex('incidents_resolved_host').execute();
  await db.schema.dropIndex('incidents_resolved_alarm').execute();
  await db.schema.dropIndex('incidents_resolved_time').execute();
  await sql`create index incidents_tenant_resolved on incidents (tenant_id, resolved_at) where state = 'resolved'`.execute(db);
  await db.schema.dropTable('incident_days_stale').execute();
  await db.schema.dropTable('incident_days').execute();
}

/** A change counts when it can change a day's numbers: a resolved incident's state, times, who resolved it, or what it is grouped by. */
export const STALE_CHANGES = ['state', 'resolved_at', 'opened_at', 'resolved_by', 'alarm_name', 'severity', 'integration_id', 'tenant_id'];

/** SQLite's three triggers as this migration made them (migration 0045 replaced them; its down puts them back). */
export function sqliteStaleTriggers(): string[] {
  const mark = (row: 'old' | 'new') => `insert into incident_days_stale (tenant_id, day) select ${row}.tenant_id, ${row}.resolved_at / 86400000
      where ${row}.state = 'resolved' and not exists (select 1 from incident_days_stale where tenant_id = ${row}.tenant_id and day = ${row}.resolved_at / 86400000);`;
  return [
    `create trigger incidents_stale_insert after insert on incidents when new.state = 'resolved' begin ${mark('new')} end`,
    `create trigger incidents_stale_update after update on incidents
      when (old.state = 'resolved' or new.state = 'resolved') and (${STALE_CHANGES.map((c) => `old.${c} is not new.${c}`).join(' or ')})
      begin ${mark('old')} ${mark('new')} end`,
    `create trigger incidents_stale_delete after delete on incidents when old.state = 'resolved' begin ${mark('old')} end`,
  ];
}
