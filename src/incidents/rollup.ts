import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { preparedQuery } from '../store/prepared.js';

/** A UTC day in milliseconds: incident_days.day is resolved_at divided by it. */
export const DAY_MS = 86_400_000;

/**
 * A namespace of PostgreSQL's two-key advisory locks (rules 0x70637231, retention 0x70637232,
 * incidents 0x70637233): one tenant's recomputation at a time.
 */
export const ROLLUP_LOCK_CLASS = 0x7063723a;

/**
 * The day of an incident's resolution, in SQL: a literal, so that the select and the group by are one expression to
 * PostgreSQL, and the expression of the day indexes (migration 0034), which a query must repeat to the letter.
 */
export const DAY_SQL = `resolved_at / ${DAY_MS}`;
const DAY = sql.raw(DAY_SQL);

/** This process's analytics calls under way (analytics-reads.ts), which its background gives way to. */
let analyticsCalls = 0;

/** Runs an analytics call; this process's background starts no recomputation meanwhile (afterAnalyticsCalls). */
export async function duringAnalyticsCall<T>(call: () => Promise<T>): Promise<T> {
  analyticsCalls++;
  try {
    return await call();
  } finally {
    analyticsCalls--;
  }
}

/**
 * Resolves once no analytics call is under way in this process, or after `maxMs`. On two cores the background's
 * transaction beside the call made at once after a million incidents landed (its stale days read from the
 * incidents) doubled the call on PostgreSQL: 2.1-2.5 s against 0.95-1.2 s without (bench/README.md, session 32).
 * Bounded, so that a stream of calls only slows the background.
 */
export async function afterAnalyticsCalls(maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  while (analyticsCalls > 0 && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Which of a tenant's stale days a recomputation takes, and whether it waits for another one of the tenant's. */
export interface RefreshScope {
  /** Only the stale days in [firstDay, endDay): a request recomputes the days it reads, no more. */
  within?: { firstDay: number; endDay: number } | undefined;
  /** At most this many stale days, the latest first (a dashboard's period ends today). */
  maxDays?: number | undefined;
  /**
   * True (a request): wait for another recomputation of the tenant to end, then take what it left.
   * False (the background): on PostgreSQL, give way at once and recompute nothing.
   */
  wait: boolean;
}

/**
 * Brings the tenant's `incident_days` and `incident_host_days` up to date (migrations 0028, 0029): the days the triggers marked
 * stale (those the scope takes) are recomputed from the incidents, then unmarked, in one transaction: one grouped
 * pass over the incidents per run of consecutive days, for each rollup. Returns how many days it recomputed.
 * Called by the background (rollup-refresher.ts) soon after days are marked, and by the analytics before they read,
 * for the days they read: cheap when nothing changed (one indexed read, no write).
 *
 * Why it is right while incidents change meanwhile: the marks are deleted first and the days
 * recomputed after, in the same transaction; a change committed before the delete is in the
 * recomputation (PostgreSQL reads each statement at its own start, SQLite has one writer), and a
 * change committed after it left its mark, which the next call takes: its own mark, even when the
 * day looked marked to it (the mark this call deleted, not yet committed: migration 0044). On PostgreSQL an advisory
 * lock keeps two recomputations of one tenant apart (two nodes' backgrounds, a request); the ingest never takes it,
 * nor waits for it. Two at once would still be right, only wasted: each recomputes whole days from the incidents.
 *
 * SQLite: the commit is not synced (synchronous=NORMAL: still atomic). The table is derived: a
 * power cut may lose the last recomputation and its unmarking together, never one without the other.
 */
export async function refreshIncidentDays(db: Kysely<Database>, dialect: Dialect, tenantId: string, scope: RefreshScope): Promise<number> {
  let marked = db.selectFrom('incident_days_stale').select('day').where('tenant_id', '=', tenantId);
  if (scope.within) marked = marked.where('day', '>=', scope.within.firstDay).where('day', '<', scope.within.endDay);
  if ((await marked.limit(1).execute()).length === 0) return 0;
  const work = async (tx: Kysely<Database>): Promise<number> => {
    if (dialect === 'postgres' && !(await lockTenant(tx, tenantId, scope.wait))) return 0;
    const days = await unmark(tx, tenantId, scope);
    if (dialect === 'postgres') await planForGrouping(tx);
    for (const [first, end] of runs(days)) await recompute(tx, dialect, tenantId, first, end);
    return days.length;
  };
  if (dialect === 'postgres') return db.transaction().execute(work);
  return db.connection().execute(async (connection) => {
    await sql`pragma synchronous = NORMAL`.execute(connection);
    // Immediate: the write lock first (a deferred transaction that reads, then writes after another connection wrote, fails as busy).
    await sql`begin immediate`.execute(connection);
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

/** The tenant's days marked stale within the period, ascending, once each. */
export async function staleDaysWithin(db: Kysely<Database>, tenantId: string, period: { firstDay: number; endDay: number }): Promise<number[]> {
  const rows = await db.selectFrom('incident_days_stale').select('day').distinct().where('tenant_id', '=', tenantId)
    .where('day', '>=', period.firstDay).where('day', '<', period.endDay).orderBy('day').execute();
  return rows.map((row) => Number(row.day));
}

/** The tenants with stale days, at most `limit`. */
export async function tenantsWithStaleDays(db: Kysely<Database>, limit: number): Promise<string[]> {
  const rows = await staleTenants(db, limit);
  return rows.map((row) => row.tenant_id);
}

/** Read every second by the refresher (built once: store/prepared.ts). */
const staleTenants = preparedQuery((db, limit: number) => db.selectFrom('incident_days_stale').select('tenant_id').distinct().limit(limit));

async function lockTenant(tx: Kysely<Database>, tenantId: string, wait: boolean): Promise<boolean> {
  if (wait) {
    await sql`select pg_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, hashtext(${tenantId}))`.execute(tx);
    return true;
  }
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${ROLLUP_LOCK_CLASS}, hashtext(${tenantId})) as locked`.execute(tx);
  return rows[0]?.locked === true;
}

/** Deletes the marks of the days the scope takes; returns those days, ascending, once each (a day may be marked twice). */
async function unmark(tx: Kysely<Database>, tenantId: string, scope: RefreshScope): Promise<number[]> {
  let picked = tx.selectFrom('incident_days_stale').select('day').distinct().where('tenant_id', '=', tenantId);
  if (scope.within) picked = picked.where('day', '>=', scope.within.firstDay).where('day', '<', scope.within.endDay);
  if (scope.maxDays !== undefined) picked = picked.orderBy('day', 'desc').limit(scope.maxDays);
  const days = (await picked.execute()).map((row) => Number(row.day));
  if (days.length === 0) return [];
  await tx.deleteFrom('incident_days_stale').where('tenant_id', '=', tenantId).where('day', 'in', days).execute();
  return days.sort((a, b) => a - b);
}

/**
 * PostgreSQL estimates a group per incident for the groupings below (it cannot tell how many days
 * `resolved_at / 86400000` makes) and sorts a million rows on disk in 4 MB of work_mem, in parallel
 * workers, with JIT: 5.0 s and 3.5 s for 90 days at a million incidents on this shared 2-core
 * machine. Hashed in memory (18,000 and 150,000 groups: 20 and 65 MB at most), one process, no JIT:
 * 1.5 s and 1.1 s (EXPLAIN ANALYZE, bench/README.md). For this transaction only.
 */
async function planForGrouping(tx: Kysely<Database>): Promise<void> {
  await sql`select set_config('work_mem', '96MB', true), set_config('enable_sort', 'off', true), set_config('jit', 'off', true),
    set_config('max_parallel_workers_per_gather', '0', true)`.execute(tx);
}

/**
 * Recomputes both rollups for the days [first, end) from the incidents: one grouped pass each, over an index
 * ordered by the day and the rollup's keys (migration 0034), so that the groups come out in order, none looked up
 * or sorted. The tenant is a constant, not a grouping key.
 */
async function recompute(tx: Kysely<Database>, dialect: Dialect, tenantId: string, first: number, end: number): Promise<void> {
  await tx.deleteFrom('incident_days').where('tenant_id', '=', tenantId).where('day', '>=', first).where('day', '<', end).execute();
  await sql`insert into incident_days (tenant_id, day, integration_id, alarm_name, severity, resolved, automated, total_ms, max_ms)
    ${dayGroupsOfIncidents(dialect, tenantId, first, end)}`.execute(tx);
  await tx.deleteFrom('incident_host_days').where('tenant_id', '=', tenantId).where('day', '>=', first).where('day', '<', end).execute();
  await sql`insert into incident_host_days (tenant_id, day, host_key, resolved)
    select ${tenantId}, ${DAY}, host_key, count(*)
    from incidents ${indexed(dialect, 'incidents_resolved_day_host')} where ${resolvedOnDays(tenantId, first, end)} and host_key <> ''
    group by ${DAY}, host_key`.execute(tx);
}

/**
 * The select of incident_days' rows (the tenant first) for the days [first, end), from the incidents, narrowed by
 * `conditions` on the rollup's keys as it stores them ('' for null). Grouped by day and the keys as stored (nulls
 * apart from ''), as the index orders them, then those few groups again by the rollup's key, in memory: the rare
 * alarm seen both without a severity and with an empty one is one row.
 */
export function dayGroupsOfIncidents(dialect: Dialect, tenantId: string, first: number, end: number, conditions: ReadonlyArray<RawBuilder<unknown>> = []): RawBuilder<unknown> {
  return sql`select ${tenantId} as tenant_id, day, coalesce(integration_id, '') as integration_id, alarm_name, coalesce(severity, '') as severity,
      sum(resolved) as resolved, sum(automated) as automated, sum(total_ms) as total_ms, max(max_ms) as max_ms
    from (select ${DAY} as day, integration_id, alarm_name, severity, count(*) as resolved,
        sum(case when resolved_by = 'automation' then 1 else 0 end) as automated, sum(resolved_at - opened_at) as total_ms, max(resolved_at - opened_at) as max_ms
      from incidents ${indexed(dialect, 'incidents_resolved_time')} where ${sql.join([resolvedOnDays(tenantId, first, end), ...conditions], sql` and `)}
      group by ${DAY}, integration_id, alarm_name, severity) as by_day
    group by day, coalesce(integration_id, ''), alarm_name, coalesce(severity, '')`;
}

/** The tenant's incidents resolved on the days [first, end): ranged by the day indexes' expression (migration 0034). */
export function resolvedOnDays(tenantId: string, first: number, end: number): RawBuilder<unknown> {
  return sql`tenant_id = ${tenantId} and state = 'resolved' and ${DAY} >= ${first} and ${DAY} < ${end}`;
}

/** The incidents' indexes a read names on SQLite. */
export type IncidentIndex = 'incidents_resolved_time' | 'incidents_resolved_day_host' | 'incidents_resolved_alarm' | 'incidents_tenant_alarm' | 'incidents_open_webhook';

/** SQLite: the index to read (without statistics its planner may take another, analytics-reads.ts); PostgreSQL picks. */
export function indexed(dialect: Dialect, name: IncidentIndex): RawBuilder<unknown> {
  return sql.raw(dialect === 'sqlite' ? `indexed by ${name}` : '');
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
