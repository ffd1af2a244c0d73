import type { Kysely } from 'kysely';
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
 * index the filter picks (migration 0026).
 */
export async function listIncidents(db: Db, tenantId: string, filter: IncidentFilter, page: PageRequest): Promise<IncidentRow[]> {
  let query = db.selectFrom('incidents').selectAll().where('tenant_id', '=', tenantId);
  if (filter.state) query = query.where('state', '=', filter.state);
  if (filter.integrationId) query = query.where('integration_id', '=', filter.integrationId.toLowerCase());
  if (filter.hostname) query = query.where('host_key', '=', hostKey(filter.hostname));
  if (filter.alarmName) query = query.where('alarm_name', '=', filter.alarmName);
  if (filter.from !== undefined) query = query.where('id', '>=', idFloor(filter.from));
  if (filter.to !== undefined) query = query.where('id', '<', idFloor(filter.to + 1));
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

/** One incident of the tenant; another tenant's is as unknown as one that never was. */
export async function getIncident(db: Db, tenantId: string, id: string): Promise<IncidentRow> {
  const row = await db.selectFrom('incidents').selectAll().where('id', '=', id.toLowerCase()).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('incident', id);
  return row;
}

/** What belongs to an incident, the newest `limit` of each, and how many there are. */
export async function incidentParts(db: Db, tenantId: string, incidentId: string, limit: number) {
  const alerts = db.selectFrom('alerts').where('incident_id', '=', incidentId).where('tenant_id', '=', tenantId);
  const events = db.selectFrom('events').where('incident_id', '=', incidentId).where('tenant_id', '=', tenantId);
  const [alertRows, alertCount, eventRows, eventCount, executionRows] = await Promise.all([
    alerts.selectAll().orderBy('id', 'desc').limit(limit).execute(),
    alerts.select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    events.selectAll().orderBy('id', 'desc').limit(limit).execute(),
    events.select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    db.selectFrom('executions').selectAll()
      .where('event_id', 'in', events.select('events.id'))
      .where('tenant_id', '=', tenantId)
      .orderBy('id', 'desc').limit(limit).execute(),
  ]);
  return { alertRows, alertCount: Number(alertCount.n), eventRows, eventCount: Number(eventCount.n), executionRows };
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
