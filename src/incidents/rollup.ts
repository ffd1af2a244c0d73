import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';

/** A UTC day in milliseconds: incident_days.day is resolved_at divided by it. */
export const DAY_MS = 86_400_000;

/**
 * A namespace of PostgreSQL's two-key advisory locks (rules 0x70637231, retention 0x70637232,
 * incidents 0x70637233): one tenant's recomputation at a time.
 */
const ROLLUP_LOCK_CLASS = 0x7063723a;

/** The day of an incident's resolution, in SQL: a literal, so that the select and the group by are one expression to PostgreSQL. */
const DAY = sql.raw(`resolved_at / ${DAY_MS}`);

/**
 * Brings the tenant's `incident_days` and `incident_host_days` up to date (migrations 0028, 0029): the days the triggers marked
 * stale since the last call are recomputed from the incidents, then unmarked, in one transaction.
 * Called by the analytics before they read; cheap when nothing changed (one indexed read, no write).
 *
 * Why it is right while incidents change meanwhile: the marks are deleted first and the days
 * recomputed after, in the same transaction; a change committed before the delete is in the
 * recomputation (PostgreSQL reads each statement at its own start, SQLite has one writer), and a
 * change committed after it left its mark, which the next call takes. On PostgreSQL an advisory
 * lock keeps two calls for one tenant apart; the ingest never takes it, nor waits for it.
 *
 * SQLite: the commit is not synced (synchronous=NORMAL: still atomic). The table is derived: a
 * power cut may lose the last recomputation and its unmarking together, never one without the other.
 */
export async function refreshIncidentDays(db: Kysely<Database>, dialect: Dialect, tenantId: string): Promise<number> {
  const stale = await db.selectFrom('incident_days_stale').select('day').where('tenant_id', '=', tenantId).limit(1).execute();
  if (stale.length === 0) return 0;
  const work = async (tx: Kysely<Database>): Promise<number> => {
    if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, hashtext(${tenantId}))`.execute(tx);
    const marked = await tx.deleteFrom('incident_days_stale').where('tenant_id', '=', tenantId).returning('day').execute();
    const days = [...new Set(marked.map((row) => Number(row.day)))].sort((a, b) => a - b);
    for (const [first, end] of runs(days)) {
      await tx.deleteFrom('incident_days').where('tenant_id', '=', tenantId).where('day', '>=', first).where('day', '<', end).execute();
      await sql`insert into incident_days (tenant_id, day, integration_id, alarm_name, severity, resolved, automated, total_ms, max_ms)
        select tenant_id, ${DAY}, coalesce(integration_id, ''), alarm_name, coalesce(severity, ''), count(*),
          sum(case when resolved_by = 'automation' then 1 else 0 end), sum(resolved_at - opened_at), max(resolved_at - opened_at)
        from incidents ${sql.raw(dialect === 'sqlite' ? 'indexed by incidents_resolved_time' : '')}
        where tenant_id = ${tenantId} and state = 'resolved' and resolved_at >= ${first * DAY_MS} and resolved_at < ${end * DAY_MS}
        group by tenant_id, ${DAY}, coalesce(integration_id, ''), alarm_name, coalesce(severity, '')`.execute(tx);
      await sql`delete from incident_host_days where tenant_id = ${tenantId} and day >= ${first} and day < ${end}`.execute(tx);
      await sql`insert into incident_host_days (tenant_id, day, host_key, resolved)
        select tenant_id, ${DAY}, host_key, count(*)
        from incidents ${sql.raw(dialect === 'sqlite' ? 'indexed by incidents_resolved_time' : '')}
        where tenant_id = ${tenantId} and state = 'resolved' and resolved_at >= ${first * DAY_MS} and resolved_at < ${end * DAY_MS} and host_key <> ''
        group by tenant_id, ${DAY}, host_key`.execute(tx);
    }
    return days.length;
  };
  if (dialect === 'postgres') return db.transaction().execute(work);
  return db.connection().execute(async (connection) => {
    await sql`pragma synchronous = NORMAL`.execute(connection);
    await sql`begin`.execute(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    } finally {
      await sql`pragma synchronous = FULL`.execute(connection);
    }
  });
}

/** Sorted days as runs of consecutive ones: [first, end) each, so a year marked at once is one statement. */
export function runs(days: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const day of days) {
    const last = out.at(-1);
    if (last && day === last[1]) last[1] = day + 1;
    else out.push([day, day + 1]);
  }
  return out;
}
