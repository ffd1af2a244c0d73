import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { serviceRunKey } from '../engine/decide.js';
import type { Database } from '../store/schema.js';
import { SERVICE_HOSTNAME } from './service-runs.js';

/** What a stored execution counts against in its rule's action limit: its host, or for a service run the host it is about. */
export function limitCountKey(row: { host_id: string | null; hostname: string }): string {
  return row.host_id ?? serviceRunKey(row.hostname === SERVICE_HOSTNAME ? undefined : row.hostname);
}

/**
 * The executions of a rule queued after `since`, every one created counting (but a fix's
 * companion capture of graphs), per host and
 * hostname: how many, and when the oldest was queued. Read by ingest to decide (at most the
 * limit's max per host are ever in the window) and by the rule's limit usage to show. One that
 * waited for approval counts only once approved, which queued it anew (queued_at: approval-decision.ts),
 * so the range stays on the index (rule_id, queued_at) (docs/approvals.md).
 */
export function executionsInWindow(db: Kysely<Database>, ruleId: string, since: number) {
  return db
    .selectFrom('executions')
    .select((eb) => ['host_id', 'hostname', eb.fn.countAll<number>().as('used'), eb.fn.min('queued_at').as('oldest')])
    .where('rule_id', '=', ruleId)
    .where('queued_at', '>', since)
    .where('companion', '=', 0)
    .where((eb) => eb.or([eb('approval', 'is', null), eb('approved_at', 'is not', null)]))
    .groupBy(['host_id', 'hostname']);
}

export interface WindowRow {
  host_id: string | null;
  hostname: string;
  used: number | string;
  oldest: number | string | null;
}

export interface WindowCount {
  hostId: string | null;
  hostname: string;
  used: number;
  oldest: number;
}

/** The rows of executionsInWindow per limitCountKey: a renamed host keeps its count, a service run counts for the host it is about. */
export function countPerLimitKey(rows: readonly WindowRow[]): Map<string, WindowCount> {
  const counted = new Map<string, WindowCount>();
  for (const row of rows) {
    const key = limitCountKey(row);
    const known = counted.get(key);
    counted.set(key, {
      hostId: row.host_id,
      hostname: known?.hostname ?? row.hostname,
      used: (known?.used ?? 0) + Number(row.used),
      oldest: Math.min(known?.oldest ?? Infinity, Number(row.oldest)),
    });
  }
  return counted;
}

/** A namespace of PostgreSQL's two-key advisory locks, apart from the single-key ones nodes hold. */
const RULE_LOCK_CLASS = 0x70637231;

/**
 * PostgreSQL: a transaction lock per rule, so that service nodes sharing the database count a
 * rule's window one after the other (each then reads what the other committed) and a limit holds
 * exactly across nodes. SQLite has a single writer already.
 */
export function lockRules(db: Kysely<Database>, ruleIds: readonly string[]): CompiledQuery {
  // One statement, keys in ascending order: two transactions wanting the same rules never deadlock.
  return sql`select pg_advisory_xact_lock(${RULE_LOCK_CLASS}, k) from (select distinct hashtext(id) as k from unnest(${ruleIds}::text[]) as id order by k) as ordered`.compile(db);
}
