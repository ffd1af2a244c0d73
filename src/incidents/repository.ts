import { sql, type Kysely, type Selectable } from 'kysely';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { hostKey } from '../engine/decide.js';
import type { Dialect } from '../store/database.js';
import { idFloor } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, IncidentRow } from '../store/schema.js';
import { scopeOf } from './book.js';
import { lockAlarms } from './reads.js';

type Db = Kysely<Database>;

export interface IncidentFilter {
  state?: 'open' | 'resolved' | undefined;
  integrationId?: string | undefined;
  hostname?: string | undefined;
  alarmName?: string | undefined;
  /** Opened at or after / at or before (epoch ms). */
  from?: number | undefined;
  to?: number | undefined;
}

/**
 * A tenant's incidents, newest opened first. Ids are UUIDv7 of the time each opened (book.ts), so
 * the order, the cursor and from/to are all ranges of the id, within whichever (tenant, …, id)
 * index the filter picks (migration 0026). Open incidents have no index by host or integration
 * (migration 0042: a new incident enters fewer b-trees); a tenant's open ones are few and read
 * through `incidents_tenant_open`. Those filters without a state read the open and the resolved
 * apart, newest first each, and merge them.
 */
export async function listIncidents(db: Db, tenantId: string, filter: IncidentFilter, page: PageRequest): Promise<IncidentRow[]> {
  const limit = page.limit + 1;
  if (filter.state || (!filter.hostname && !filter.integrationId)) return incidentsOf(db, tenantId, filter, page).limit(limit).execute();
  const [open, resolved] = await Promise.all((['open', 'resolved'] as const).map((state) => incidentsOf(db, tenantId, { ...filter, state }, page).limit(limit).execute()));
  return [...open!, ...resolved!].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).slice(0, limit);
}

function incidentsOf(db: Db, tenantId: string, filter: IncidentFilter, page: PageRequest) {
  let query = db.selectFrom('incidents').selectAll().where('tenant_id', '=', tenantId);
  if (filter.state) query = query.where('state', '=', filter.state);
  if (filter.integrationId) query = query.where('integration_id', '=', filter.integrationId.toLowerCase());
  if (filter.hostname) query = query.where('host_key', '=', hostKey(filter.hostname));
  if (filter.alarmName) query = query.where('alarm_name', '=', filter.alarmName);
  if (filter.from !== undefined) query = query.where('id', '>=', idFloor(filter.from));
  if (filter.to !== undefined) query = query.where('id', '<', idFloor(filter.to + 1));
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc');
}

/** One incident of the tenant; another tenant's is as unknown as one that never was. */
export async function getIncident(db: Db, tenantId: string, id: string): Promise<IncidentRow> {
  const row = await db.selectFrom('incidents').selectAll().where('id', '=', id.toLowerCase()).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('incident', id);
  return row;
}

/**
 * What belongs to an incident: the newest `limit` of its alerts and events, walked down their
 * chains from the incident's row by primary key (migration 0032), how many it has had, and the
 * newest `limit` executions among those of the events read and the first ones its row lists.
 */
export async function incidentParts(db: Db, tenantId: string, incident: IncidentRow, limit: number) {
  const [alertRows, eventRows] = await Promise.all([
    chainOf(db, 'alerts', tenantId, incident.last_alert_id, limit),
    chainOf(db, 'events', tenantId, incident.last_event_id, limit),
  ]);
  const eventIds = eventRows.map((event) => event.id);
  const listed = JSON.parse(incident.execution_ids) as string[];
  const executionRows = eventIds.length + listed.length === 0 ? [] : await db.selectFrom('executions').selectAll()
    .where((eb) => eb.or([
      ...(eventIds.length > 0 ? [eb('event_id', 'in', eventIds)] : []),
      ...(listed.length > 0 ? [eb('id', 'in', listed)] : []),
    ]))
    .where('tenant_id', '=', tenantId)
    .orderBy('id', 'desc').limit(limit).execute();
  return { alertRows, alertCount: Number(incident.alert_count), eventRows, eventCount: Number(incident.event_count), executionRows };
}

/** The newest `limit` rows of a chain from `newest` (each naming the one before), newest first; it ends where retention deleted. */
async function chainOf<T extends 'alerts' | 'events'>(db: Db, table: T, tenantId: string, newest: string | null, limit: number): Promise<Array<Selectable<Database[T]>>> {
  if (newest === null) return [];
  const rows = await sql<Selectable<Database[T]>>`with recursive chain (id, n) as (
      select cast(${newest} as text), 1
      union all
      select r.incident_previous_id, chain.n + 1 from ${sql.table(table)} r join chain on r.id = chain.id
        where chain.n < ${limit} and r.incident_previous_id is not null
    )
    select r.* from ${sql.table(table)} r join chain on r.id = chain.id where r.tenant_id = ${tenantId} order by chain.n`.execute(db);
  return rows.rows;
}

/**
 * A person resolves an open incident (POST /incidents/{id}/resolve): now, by them. On PostgreSQL
 * under its alarm's lock (reads.ts), so a firing the ingest is counting meanwhile lands on it
 * before, or opens the next incident after.
 */
export async function resolveByHand(db: Db, dialect: Dialect, tenantId: string, id: string, userId: string, now: number): Promise<IncidentRow> {
  return db.transaction().execute(async (tx) => {
    const seen = await getIncident(tx, tenantId, id);
    if (dialect === 'postgres') await tx.executeQuery(lockAlarms([scopeOf(seen.tenant_id, seen.integration_id, seen.incident_key)]));
    const row = await getIncident(tx, tenantId, id);
    if (row.state !== 'open') {
      throw new PitcrewError('PITCREW_ERR_CONFLICT', `incident ${row.id} was already resolved at ${new Date(Number(row.resolved_at)).toISOString()} (by ${row.resolved_by ?? 'unknown'}); nothing changed`);
    }
    const resolved = { state: 'resolved' as const, resolved_at: Math.max(now, Number(row.opened_at)), resolved_by: 'manual' as const, resolved_by_user: userId };
    await tx.updateTable('incidents').set(resolved).where('id', '=', row.id).where('state', '=', 'open').execute();
    return { ...row, ...resolved };
  });
}
