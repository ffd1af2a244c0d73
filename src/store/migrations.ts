import { Migrator, PostgresAdapter, sql, type Kysely, type Migration, type MigrationResult } from 'kysely';
import { writeTransaction } from './write-transaction.js';
import * as initial from './migrations/0001_initial.js';
import * as hostsExecutions from './migrations/0002_hosts_executions.js';
import * as safety from './migrations/0003_safety.js';
import * as notify from './migrations/0005_notify.js';
import * as eventsLean from './migrations/0006_events_lean.js';
import * as escalationLimit from './migrations/0007_escalation_limit.js';
import * as retention from './migrations/0008_retention.js';
import * as hostKeys from './migrations/0009_host_keys.js';
import * as keyScopes from './migrations/0010_key_scopes.js';
import * as eventSource from './migrations/0011_event_source.js';
import * as integrations from './migrations/0012_integrations.js';
import * as hostShortNames from './migrations/0013_host_short_names.js';
import * as alerts from './migrations/0014_alerts.js';
import * as schedules from './migrations/0015_schedules.js';
import * as placement from './migrations/0016_placement.js';
import * as credentials from './migrations/0017_credentials.js';
import * as hostInstances from './migrations/0018_host_instances.js';
import * as runbooks from './migrations/0019_runbooks.js';
import * as runbookRefs from './migrations/0020_runbook_refs.js';
import * as repositories from './migrations/0021_repositories.js';
import * as eventRequestedBy from './migrations/0022_event_requested_by.js';
import * as identity from './migrations/0023_identity.js';
import * as auditLog from './migrations/0024_audit_log.js';
import * as sso from './migrations/0025_sso.js';
import * as incidents from './migrations/0026_incidents.js';
import * as imports from './migrations/0027_imports.js';
import * as incidentAnalytics from './migrations/0028_incident_analytics.js';
import * as incidentHostDays from './migrations/0029_incident_host_days.js';
import * as incidentOpenList from './migrations/0030_incident_open_list.js';
import * as graphSnapshots from './migrations/0031_graph_snapshots.js';
import * as incidentChains from './migrations/0032_incident_chains.js';
import * as approvals from './migrations/0033_approvals.js';
import * as incidentDayIndexes from './migrations/0034_incident_day_indexes.js';
import * as graphSecret from './migrations/0035_graph_secret.js';
import * as chatMessageRefs from './migrations/0036_chat_message_refs.js';
import * as chatRefsIndex from './migrations/0038_chat_refs_index.js';
import * as slackClicks from './migrations/0040_slack_clicks.js';
import * as incidentResolutionWrites from './migrations/0041_incident_resolution_writes.js';
import * as incidentOpenIndexes from './migrations/0042_incident_open_indexes.js';
import * as previousReleaseIndexNames from './migrations/0043_previous_release_index_names.js';
import * as incidentStaleMarksAlways from './migrations/0044_incident_stale_marks_always.js';
import * as incidentStaleMarksWhen from './migrations/0045_incident_stale_marks_when.js';
import * as idempotencyKeysByEvent from './migrations/0046_idempotency_keys_by_event.js';
import type { Store } from './database.js';
import type { Database } from './schema.js';

/** Every migration, in order. Listed explicitly: nothing is loaded by scanning folders. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_hosts_executions': hostsExecutions,
  '0003_safety': safety,
  '0005_notify': notify,
  '0006_events_lean': eventsLean,
  '0007_escalation_limit': escalationLimit,
  '0008_retention': retention,
  '0009_host_keys': hostKeys,
  '0010_key_scopes': keyScopes,
  '0011_event_source': eventSource,
  '0012_integrations': integrations,
  '0013_host_short_names': hostShortNames,
  '0014_alerts': alerts,
  '0015_schedules': schedules,
  '0016_placement': placement,
  '0017_credentials': credentials,
  '0018_host_instances': hostInstances,
  '0019_runbooks': runbooks,
  '0020_runbook_refs': runbookRefs,
  '0021_repositories': repositories,
  '0022_event_requested_by': eventRequestedBy,
  '0023_identity': identity,
  '0024_audit_log': auditLog,
  '0025_sso': sso,
  '0026_incidents': incidents,
  '0027_imports': imports,
  '0028_incident_analytics': incidentAnalytics,
  '0029_incident_host_days': incidentHostDays,
  '0030_incident_open_list': incidentOpenList,
  '0031_graph_snapshots': graphSnapshots,
  '0032_incident_chains': incidentChains,
  '0033_approvals': approvals,
  '0034_incident_day_indexes': incidentDayIndexes,
  '0035_graph_secret': graphSecret,
  '0036_chat_message_refs': chatMessageRefs,
  '0038_chat_refs_index': chatRefsIndex,
  '0040_slack_clicks': slackClicks,
  '0041_incident_resolution_writes': incidentResolutionWrites,
  '0042_incident_open_indexes': incidentOpenIndexes,
  '0043_previous_release_index_names': previousReleaseIndexNames,
  '0044_incident_stale_marks_always': incidentStaleMarksAlways,
  '0045_incident_stale_marks_when': incidentStaleMarksWhen,
  '0046_idempotency_keys_by_event': idempotencyKeysByEvent,
};

/** The migrations this build knows, oldest first: the last is its schema version. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations);

/** Where the migrations are recorded (Kysely's table, named for us). */
export const MIGRATION_TABLE = 'pitcrew_migrations';

/**
 * Where the migrations after release 0.1.0's are recorded. 0.1.0 refuses to start when its table
 * names a migration it does not know (Kysely: "corrupted migrations"), which made going back to its
 * binary after an upgrade impossible (docs/operations.md, "When an upgrade fails"). Its table keeps
 * its own migrations only; this release and later ones start on a newer release's schema (`newer`
 * below), so no later release needs a table of its own.
 */
export const LATER_MIGRATION_TABLE = 'pitcrew_migrations_after_0_1';
const FIRST_RELEASE_LAST = '0031_graph_snapshots';
/** LOCK_ID of kysely/dist/esm/dialect/postgres/postgres-adapter.js: the advisory lock of its migrator. */
const KYSELY_MIGRATION_LOCK = '3853314791062309107';

const firstRelease = MIGRATION_NAMES.slice(0, MIGRATION_NAMES.indexOf(FIRST_RELEASE_LAST) + 1);
const ledgers = [
  { table: MIGRATION_TABLE, names: firstRelease },
  { table: LATER_MIGRATION_TABLE, names: MIGRATION_NAMES.slice(firstRelease.length) },
];

/** What a node says when it starts on a newer release's schema (the migrations named beside it). */
export const NEWER_SCHEMA = 'the database was migrated by a newer pitcrew release; this one runs on its schema unchanged. Go forward again when you can: going back more than one release is not supported (docs/operations.md)';

export interface MigrationReport {
  applied: string[];
  /** Migrations of a newer release found applied: this build runs on that release's schema, unchanged. */
  newer: string[];
}

/** Brings the schema to the latest version; safe to run from several processes at once. */
export async function migrateToLatest(store: Store): Promise<MigrationReport> {
  if (store.dialect === 'postgres') return store.db.connection().execute(async (db) => {
    // The lock Kysely's migrator takes, held over both tables' runs (it is re-entrant within a session):
    // of nodes starting at once, one applies every migration and the others find them applied.
    await sql`select pg_advisory_lock(${sql.raw(KYSELY_MIGRATION_LOCK)})`.execute(db);
    try {
      return await migrate(db);
    } finally {
      await sql`select pg_advisory_unlock(${sql.raw(KYSELY_MIGRATION_LOCK)})`.execute(db);
    }
  });
  // On SQLite Kysely takes no lock and no transaction (it assumes one process), so two processes
  // both found a migration pending and the second failed with "table already exists". One
  // IMMEDIATE transaction around the whole run takes the write lock before the state is read: the
  // other process waits for it (busy timeout), then finds the schema up to date.
  // A migration may rewrite a whole table in one statement inside that transaction: its statement
  // journal, as large as the table, goes to a temporary file, not to memory as the service's
  // batches' do (database.ts). temp_store cannot change within a transaction.
  await sql`pragma temp_store = FILE`.execute(store.db);
  try {
    return await writeTransaction(store, migrate);
  } finally {
    await sql`pragma temp_store = MEMORY`.execute(store.db);
  }
}

async function migrate(db: Kysely<Database>): Promise<MigrationReport> {
  await moveLaterRecords(db);
  const recorded = await recordedMigrations(db);
  const known = new Set(MIGRATION_NAMES);
  const newer = recorded.filter((name) => !known.has(name));
  if (newer.length > 0) {
    // A newer release migrated this database: every release only adds to the schema, so this one runs on it as it is.
    const missing = MIGRATION_NAMES.filter((name) => !recorded.includes(name));
    if (missing.length === 0) return { applied: [], newer };
    throw new Error(`database migration failed: the database records migrations this release does not know (${newer.join(', ')}) but lacks some it does (${missing.join(', ')}): it was not migrated by a later pitcrew release`);
  }
  const applied: string[] = [];
  for (const ledger of ledgers) applied.push(...await runLedger(db, ledger.table, ledger.names));
  return { applied, newer: [] };
}

async function runLedger(db: Kysely<Database>, table: string, names: readonly string[]): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => Object.fromEntries(names.map((name) => [name, migrations[name]!])) },
    migrationTableName: table,
    migrationLockTableName: `${table}_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error).message ?? error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Every migration the database records, in both tables, by name. */
export async function recordedMigrations(db: Kysely<Database>): Promise<string[]> {
  const names: string[] = [];
  for (const { table } of ledgers) {
    if (!await tableExists(db, table)) continue;
    const rows = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
    names.push(...rows.rows.map((r) => r.name));
  }
  return names.sort();
}

/**
 * A database migrated by a build of this release before the tables split recorded every migration in
 * the first: those after 0.1.0's move to the later table, under the migration lock. A stop between
 * the copy and the delete leaves rows in both; the next start finishes the move.
 */
async function moveLaterRecords(db: Kysely<Database>): Promise<void> {
  if (!await tableExists(db, MIGRATION_TABLE)) return;
  const later = sql`name > ${FIRST_RELEASE_LAST}`;
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(MIGRATION_TABLE)} where ${later}`.execute(db);
  if (Number(rows[0]!.n) === 0) return;
  // Kysely's own shape for a migration table (kysely/dist/esm/migration/migrator.js).
  await sql`create table if not exists ${sql.table(LATER_MIGRATION_TABLE)} (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(db);
  await sql`insert into ${sql.table(LATER_MIGRATION_TABLE)} (name, timestamp) select name, timestamp from ${sql.table(MIGRATION_TABLE)} where ${later} on conflict do nothing`.execute(db);
  await sql`delete from ${sql.table(MIGRATION_TABLE)} where ${later}`.execute(db);
}

async function tableExists(db: Kysely<Database>, table: string): Promise<boolean> {
  const { rows } = db.getExecutor().adapter instanceof PostgresAdapter
    ? await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(db)
    : await sql<{ found: string | null }>`select name as found from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  return rows[0]?.found != null;
}
