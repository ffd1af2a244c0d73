import { Migrator, type Kysely, type Migration, type MigrationResult } from 'kysely';
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
};

/** The migrations this build knows, oldest first: the last is its schema version. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations);

/** Where the migrations are recorded (Kysely's table, named for us). */
export const MIGRATION_TABLE = 'pitcrew_migrations';

export interface MigrationReport {
  applied: string[];
}

/** Brings the schema to the latest version; safe to run from several processes at once. */
export async function migrateToLatest(store: Store): Promise<MigrationReport> {
  if (store.dialect === 'postgres') return migrate(store.db);
  // On SQLite Kysely takes no lock and no transaction (it assumes one process), so two processes
  // both found a migration pending and the second failed with "table already exists". One
  // IMMEDIATE transaction around the whole run takes the write lock before the state is read: the
  // other process waits for it (busy timeout), then finds the schema up to date.
  return writeTransaction(store, migrate);
}

async function migrate(db: Kysely<Database>): Promise<MigrationReport> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'pitcrew_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String((error as Error).message ?? error)}`);
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
