import { PostgresAdapter, sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: the incident bookkeeping may cost the alert ingest at most 10 % of its throughput
 * (bench/alerts.js). `alerts_incident` and `events_incident` (migration 0026), keyed by incident,
 * took an entry per alert and per event in as many places of each index as a batch had incidents:
 * the commit rewrote each of those pages into the WAL (re-firing: 1.5 × the CPU per alert of the
 * build before incidents; 1.2 × without the two indexes).
 *
 * An incident's alerts and events are now a chain, newest first: the incident row names its newest
 * of each and counts them, each alert and event names the one of its incident before it. The ingest
 * writes the pointers into rows it writes anyway (the incident's row is updated for the occurrence
 * in the same statement); the incident's page walks the newest 100 of each by primary key
 * (incidents/repository.ts). Retention deletes the oldest alerts and events: a chain ends there.
 *
 * PostgreSQL: incidents' pages keep room (fillfactor) so an occurrence's update, which changes no
 * indexed column, stays on its page (a HOT update: no index entry written).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('incidents').addColumn('last_alert_id', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('alert_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('incidents').addColumn('last_event_id', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('alerts').addColumn('incident_previous_id', 'text').execute();
  await db.schema.alterTable('events').addColumn('incident_previous_id', 'text').execute();

  // The chains of what is stored, read through the indexes about to go.
  for (const table of ['alerts', 'events']) {
    await sql.raw(`update ${table} set incident_previous_id = (select max(p.id) from ${table} p where p.incident_id = ${table}.incident_id and p.id < ${table}.id) where incident_id is not null`).execute(db);
  }
  await sql`update incidents set
    last_alert_id = (select max(id) from alerts where incident_id = incidents.id),
    alert_count = (select count(*) from alerts where incident_id = incidents.id),
    last_event_id = (select max(id) from events where incident_id = incidents.id),
    event_count = (select count(*) from events where incident_id = incidents.id)`.execute(db);

  await db.schema.dropIndex('alerts_incident').execute();
  await db.schema.dropIndex('events_incident').execute();
  if (postgres) await sql`alter table incidents set (fillfactor = 70)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) await sql`alter table incidents reset (fillfactor)`.execute(db);
  await sql`create index alerts_incident on alerts (incident_id, id) where incident_id is not null`.execute(db);
  await sql`create index events_incident on events (incident_id, id) where incident_id is not null`.execute(db);
  await db.schema.alterTable('events').dropColumn('incident_previous_id').execute();
  await db.schema.alterTable('alerts').dropColumn('incident_previous_id').execute();
  for (const column of ['event_count', 'last_event_id', 'alert_count', 'last_alert_id']) await db.schema.alterTable('incidents').dropColumn(column).execute();
}
