import { PostgresAdapter, type Kysely, type Transaction } from 'kysely';
import type { AlarmObservation } from '../integrations/observation.js';
import type { Database, IncidentRow } from '../store/schema.js';
import { Statements } from '../store/statements.js';
import { IncidentBook, scopeOf, type Sighting } from './book.js';
import { lockAlarms, settingsOf } from './reads.js';
import { incidentWrites } from './writes.js';

/** What applying a page did. */
export interface Applied {
  /** The incident each observation belongs to, in the order given; null for one left alone (a resolution of nothing known). */
  incidentIds: Array<string | null>;
  /** Incidents opened (some resolved in the same page). */
  opened: number;
  /** Incidents resolved: by an observation, or (openKeys) because the tool no longer lists them. */
  resolved: number;
  /** Stored incidents that changed otherwise: an occurrence counted. */
  updated: number;
}

/** Keys per statement: well within either database's parameter limit. */
const KEYS_PER_READ = 5000;

/**
 * Applies what an import read from a tool (integrations/observation.ts ImportPage) to the
 * integration's incidents, by the rules the ingest follows for the same tool's notifications
 * (book.ts): so an alarm imported and the same alarm arriving by webhook are one incident.
 *
 * Idempotent: an observation repeats what an incident knows when its tool time is not after the
 * incident's last counted firing (a firing) or falls within it (a resolution), so a page applied
 * twice, or a page overlapping the one before, counts nothing twice. Observations are applied in
 * the order of their times, whatever the page's. A firing older than the incidents known of its
 * alarm (the history of a tool whose alerts pitcrew already took by webhook) becomes an incident
 * when its resolution is in the same page; an importer reads history a whole alarm's span at a time.
 *
 * `openKeys`: every key the tool lists as firing now (Alertmanager's GET /api/v2/alerts): an open
 * incident of this integration whose key is not there is resolved at `receivedAt`.
 *
 * `db` may be a transaction (the importer's, storing its cursor with the page); else one is begun.
 * On PostgreSQL it takes the alarms' locks the ingest takes (reads.ts lockAlarms).
 */
export async function applyObservations(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  integrationId: string,
  observations: readonly AlarmObservation[],
  receivedAt: number,
  options: { openKeys?: readonly string[] } = {},
): Promise<Applied> {
  const work = async (tx: Kysely<Database>): Promise<Applied> => {
    const postgres = tx.getExecutor().adapter instanceof PostgresAdapter;
    const order = observations.map((o, i) => ({ o, i, at: o.at ?? receivedAt })).sort((a, b) => a.at - b.at || a.i - b.i);
    const keys = [...new Set(observations.map((o) => o.incidentKey))];
    const openOfIntegration = () => tx.selectFrom('incidents').selectAll().where('integration_id', '=', integrationId).where('tenant_id', '=', tenantId).where('state', '=', 'open').execute();
    if (postgres) {
      // Every alarm this page may change, its open ones included when openKeys may resolve them: locked before they are read.
      const absentMayClose = options.openKeys ? (await openOfIntegration()).map((row) => row.incident_key) : [];
      const scopes = [...keys, ...absentMayClose].map((key) => scopeOf(tenantId, integrationId, key));
      if (scopes.length > 0) await tx.executeQuery(lockAlarms(scopes));
    }
    const since = order.length > 0 ? Math.min(order[0]!.at, receivedAt) : receivedAt;
    const known = new Map<string, IncidentRow>();
    for (let start = 0; start < keys.length; start += KEYS_PER_READ) {
      const some = keys.slice(start, start + KEYS_PER_READ);
      const ofKeys = tx.selectFrom('incidents').selectAll().where('tenant_id', '=', tenantId).where('integration_id', '=', integrationId).where('incident_key', 'in', some);
      for (const row of await ofKeys.where('state', '=', 'open').execute()) known.set(row.id, row);
      // Resolved ones the page may repeat: those that ended at or after its first observation.
      for (const row of await ofKeys.where('state', '=', 'resolved').where('resolved_at', '>=', since).execute()) known.set(row.id, row);
    }
    if (options.openKeys) for (const row of await openOfIntegration()) known.set(row.id, row);
    const settings = await tx.selectFrom('tenants').select(['id', 'incident_automation_seconds', 'incident_quiet_seconds']).where('id', '=', tenantId).execute();

    const book = new IncidentBook([...known.values()], settingsOf(settings), 'import');
    const incidentIds: Array<string | null> = new Array(observations.length).fill(null);
    for (const { o, i } of order) {
      const sighting: Sighting = { tenantId, integrationId, observation: o, receivedAt, repeat: { by: 'import' } };
      incidentIds[i] = book.sight(sighting);
    }
    if (options.openKeys) book.resolveAbsent(tenantId, integrationId, new Set(options.openKeys), receivedAt);

    const { inserts, touched, resolving } = book.changes();
    for (const query of incidentWrites(new Statements(postgres ? 'postgres' : 'sqlite'), postgres ? 'postgres' : 'sqlite', book)) await tx.executeQuery(query);
    return {
      incidentIds,
      opened: inserts.length,
      resolved: resolving.length + inserts.filter((row) => row.state === 'resolved').length,
      updated: touched.length,
    };
  };
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
