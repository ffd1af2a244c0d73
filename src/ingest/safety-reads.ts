import { CompiledQuery, sql, type Kysely, type QueryResult } from 'kysely';
import { IDEMPOTENCY_TTL_MS, type StoredOutcome } from '../engine/decide.js';
import type { AlarmState } from '../engine/alarm-history.js';
import type { SkippedEnv } from './alert.js';
import { countPerLimitKey, executionsInWindow, lockRules, type WindowRow } from '../executions/limit-window.js';
import type { Rule } from '../rules/rule.js';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import type { Statements } from '../store/statements.js';
import { pair, type BatchHistory } from './batch-history.js';

/** What a rule's events need read before deciding, per (rule, payload host) or idempotency key. */
export interface GuardedEvent {
  rule: Rule;
  hostKey: string;
  idempotencyKey: string | undefined;
}

interface Reader {
  query: CompiledQuery;
  load(rows: unknown[], history: BatchHistory): void;
}

/**
 * The statements that read the history of a batch's guarded rules (flapping, action limit,
 * idempotency keys), run in the ingest transaction right after its first reads. On PostgreSQL
 * they start by taking a transaction lock per guarded rule (lockRules), so that service nodes
 * sharing the database decide one after the other for the same rule.
 */
export function safetyReads(db: Kysely<Database>, statements: Statements, dialect: Dialect, events: GuardedEvent[], now: number) {
  const readers: Reader[] = [];
  const byRule = new Map<string, { rule: Rule; hostKeys: Set<string>; keys: Set<string> }>();
  for (const { rule, hostKey, idempotencyKey } of events) {
    const entry = byRule.get(rule.id) ?? { rule, hostKeys: new Set<string>(), keys: new Set<string>() };
    entry.hostKeys.add(hostKey);
    if (idempotencyKey !== undefined) entry.keys.add(idempotencyKey);
    byRule.set(rule.id, entry);
  }
  const guarded: string[] = [];
  const keyed = new Map<string, Set<string>>();
  for (const { rule, hostKeys, keys } of byRule.values()) {
    if (rule.flapping.enabled) readers.push(alarmsReader(db, rule, [...hostKeys], now));
    if (rule.actionLimit) readers.push(executionsReader(db, rule, now));
    if (rule.actionLimit && rule.actionLimit.onLimit !== 'drop') readers.push(escalationsReader(db, rule, now));
    if (keys.size > 0) keyed.set(rule.id, keys);
    if (rule.flapping.enabled || rule.actionLimit || keys.size > 0) guarded.push(rule.id);
  }
  if (keyed.size > 0) readers.push(...idempotencyReaders(statements, keyed, now));
  const queries = readers.map((r) => r.query);
  if (dialect === 'postgres' && guarded.length > 0) queries.unshift(lockRules(db, guarded));
  return {
    queries,
    /** Fills the history from the results of `queries`, in the same order. */
    load(results: QueryResult<unknown>[], history: BatchHistory): void {
      const offset = results.length - readers.length;
      readers.forEach((reader, i) => reader.load(results[offset + i]!.rows, history));
    },
  };
}

interface AlarmRow {
  host_key: string;
  recent: number | string;
  changes: number | string;
  outcome: string;
  received_at: number;
  alarm_state: string | null;
}

/**
 * Per payload host: the latest alarm within the look-back, and the alarms and state changes within
 * the window. The counts stop one past the settings' thresholds, which is all decide() needs to
 * know: an alert storm of a million events costs no more to judge than its first few.
 */
function alarmsReader(db: Kysely<Database>, rule: Rule, hostKeys: string[], now: number): Reader {
  const { windowSeconds, cooldownSeconds, maxEvents, maxStateChanges } = rule.flapping;
  const windowStart = now - windowSeconds * 1000;
  const lookBack = now - Math.max(windowSeconds, cooldownSeconds) * 1000;
  // By received time, not by id: ids stay ordered when a clock steps back, times say what happened when.
  const perHost = hostKeys.map((hostKey) => {
    const ofHost = sql`rule_id = ${rule.id} and host_key = ${hostKey}`;
    return sql`select cast(${hostKey} as text) as host_key,
      (select count(*) from (select 1 from events where ${ofHost} and received_at > ${windowStart} limit ${maxEvents + 1}) as r) as recent,
      (select count(*) from (select 1 from events where ${ofHost} and received_at > ${windowStart} and state_changed = 1 limit ${maxStateChanges + 1}) as c) as changes,
      last.outcome, last.received_at, last.alarm_state
      from (select outcome, received_at, alarm_state from events where ${ofHost} and received_at >= ${lookBack} order by received_at desc, id desc limit 1) as last`;
  });
  return {
    query: sql.join(perHost, sql` union all `).compile(db),
    load: (rows, history) => {
      for (const row of rows as AlarmRow[]) {
        history.alarms.set(pair(rule.id, row.host_key), {
          recent: Number(row.recent),
          stateChanges: Number(row.changes),
          last: { at: Number(row.received_at), suppressed: row.outcome === 'flapping', state: row.alarm_state as AlarmState | null },
        });
      }
    },
  };
}

/**
 * Executions of the rule within the action limit's window, every one created counting: per host,
 * and for runs the service makes itself (email_runbook) per host they are about (serviceRunKey).
 */
function executionsReader(db: Kysely<Database>, rule: Rule, now: number): Reader {
  return {
    query: executionsInWindow(db, rule.id, now - rule.actionLimit!.windowSeconds * 1000).compile(),
    load: (rows, history) => {
      const counts = new Map<string, number>();
      for (const [key, { used }] of countPerLimitKey(rows as WindowRow[])) counts.set(key, used);
      history.executions.set(rule.id, counts);
    },
  };
}

function escalationsReader(db: Kysely<Database>, rule: Rule, now: number): Reader {
  const query = db
    .selectFrom('escalations')
    .select(['host_id', 'window_start', 'window_end'])
    .where('rule_id', '=', rule.id)
    .where('window_end', '>', now)
    .compile();
  return {
    query,
    load: (rows, history) => {
      for (const row of rows as Array<{ host_id: string; window_start: number; window_end: number }>) {
        const key = pair(rule.id, row.host_id);
        const known = history.escalations.get(key);
        if (!known || known.windowStart < Number(row.window_start)) {
          history.escalations.set(key, { windowStart: Number(row.window_start), windowEnd: Number(row.window_end) });
        }
      }
    },
  };
}

interface KeyRow {
  rule_id: string;
  key: string;
  fingerprint: string;
  event_id: string;
  outcome: string;
  reason: string | null;
  skipped_env: string;
}

/**
 * The originals of the batch's idempotency keys still within 24 h, and their executions: two
 * statements for the whole batch, whatever the number of rules (a scheduler pass stores a tick of
 * each of a thousand rules, each with its key: two statements per rule made PostgreSQL's ingest of
 * them take 1.7 s, bench/cron.js). The statements ask for every key with every rule; only the
 * pairs the batch holds are kept.
 */
function idempotencyReaders(statements: Statements, keyed: Map<string, Set<string>>, now: number): Reader[] {
  const ruleIds = [...keyed.keys()];
  const keys = [...new Set([...keyed.values()].flatMap((set) => [...set]))];
  // Written as text (store/statements.ts): every alert of an integration carries a key, and Kysely's
  // builder took longer to compile these two than SQLite took to run them (bench/alerts.js, CPU profile).
  const live = `"idempotency_keys"."rule_id" in (${statements.list(ruleIds.length)}) and "idempotency_keys"."key" in (${statements.list(keys.length, ruleIds.length)})`
    + ` and "idempotency_keys"."created_at" > ${statements.list(1, ruleIds.length + keys.length)}`;
  const parameters = [...ruleIds, ...keys, now - IDEMPOTENCY_TTL_MS];
  const originals = CompiledQuery.raw(
    'select "idempotency_keys"."rule_id", "idempotency_keys"."key", "idempotency_keys"."fingerprint", "events"."id" as "event_id", "events"."outcome", "events"."reason", "events"."skipped_env"'
      + ` from "idempotency_keys" inner join "events" on "events"."id" = "idempotency_keys"."event_id" where ${live}`,
    parameters,
  );
  const executions = CompiledQuery.raw(`select "id", "event_id" from "executions" where "event_id" in (select "idempotency_keys"."event_id" from "idempotency_keys" where ${live}) order by "id"`, parameters);
  let found: KeyRow[] = [];
  return [
    { query: originals, load: (rows) => void (found = (rows as KeyRow[]).filter((row) => keyed.get(row.rule_id)?.has(row.key))) },
    {
      query: executions,
      load: (rows, history) => {
        const byEvent = new Map<string, string[]>();
        for (const row of rows as Array<{ id: string; event_id: string }>) {
          const ids = byEvent.get(row.event_id);
          if (ids) ids.push(row.id);
          else byEvent.set(row.event_id, [row.id]);
        }
        for (const row of found) {
          history.remember(row.rule_id, row.key, {
            original: { eventId: row.event_id, outcome: row.outcome as StoredOutcome, reason: row.reason, executionIds: byEvent.get(row.event_id) ?? [] },
            fingerprint: row.fingerprint,
            skippedEnv: JSON.parse(row.skipped_env) as SkippedEnv[],
          });
        }
      },
    },
  ];
}
