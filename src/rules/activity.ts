import type { Kysely } from 'kysely';
import { preparedQuery } from '../store/prepared.js';
import type { Database } from '../store/schema.js';

/** What last happened on a rule, for dashboards: its newest event and its newest execution. */
export interface RuleActivity {
  lastEvent: { id: string; outcome: string; received_at: number } | null;
  lastExecution: { id: string; state: string; hostname: string; queued_at: number; finished_at: number | null } | null;
  /** A cron rule's schedule: the tick it waits for, and a tick waiting for the previous run (overlap queue). */
  schedule: { next_at: number; waiting_tick: number | null } | null;
}

export const NO_ACTIVITY: RuleActivity = { lastEvent: null, lastExecution: null, schedule: null };

/**
 * The activity of a page of rules in four queries whatever its size. The newest ids come from
 * one `order by id desc limit 1` subquery per rule, which walks the (rule_id, id) indexes from
 * their end on SQLite and PostgreSQL alike; `max(id) ... group by` would read every event.
 */
export async function activityOf(db: Kysely<Database>, tenantId: string, ruleIds: string[]): Promise<Map<string, RuleActivity>> {
  const activity = new Map<string, RuleActivity>();
  if (ruleIds.length === 0) return activity;
  const newest = await db
    .selectFrom('rules as r')
    .where('r.tenant_id', '=', tenantId)
    .where('r.id', 'in', ruleIds)
    .select((eb) => [
      'r.id',
      eb.selectFrom('events as e').select('e.id').whereRef('e.rule_id', '=', 'r.id').orderBy('e.id', 'desc').limit(1).as('event_id'),
      eb.selectFrom('executions as x').select('x.id').whereRef('x.rule_id', '=', 'r.id').orderBy('x.id', 'desc').limit(1).as('execution_id'),
    ])
    .execute();
  const eventIds = newest.flatMap((row) => (row.event_id ? [row.event_id] : []));
  const executionIds = newest.flatMap((row) => (row.execution_id ? [row.execution_id] : []));
  const events = eventIds.length === 0 ? [] : await db.selectFrom('events').select(['id', 'outcome', 'received_at']).where('id', 'in', eventIds).execute();
  const executions = executionIds.length === 0
    ? []
    : await db.selectFrom('executions').select(['id', 'state', 'hostname', 'queued_at', 'finished_at']).where('id', 'in', executionIds).execute();
  const schedules = await db.selectFrom('schedules').select(['rule_id', 'next_at', 'waiting_tick']).where('tenant_id', '=', tenantId).where('rule_id', 'in', ruleIds).execute();
  const scheduleOf = new Map(schedules.map((row) => [row.rule_id, { next_at: Number(row.next_at), waiting_tick: row.waiting_tick === null ? null : Number(row.waiting_tick) }]));
  const eventById = new Map(events.map((event) => [event.id, event]));
  const executionById = new Map(executions.map((execution) => [execution.id, execution]));
  for (const row of newest) {
    activity.set(row.id, {
      lastEvent: (row.event_id && eventById.get(row.event_id)) || null,
      lastExecution: (row.execution_id && executionById.get(row.execution_id)) || null,
      schedule: scheduleOf.get(row.id) ?? null,
    });
  }
  return activity;
}

/** One rule's newest event and execution ids: built once (store/prepared.ts), read by every view of one rule. */
const newestOfRule = preparedQuery((db, tenantId: string, ruleId: string) => db
  .selectFrom('rules as r')
  .where('r.tenant_id', '=', tenantId)
  .where('r.id', '=', ruleId)
  .select((eb) => [
    eb.selectFrom('events as e').select('e.id').whereRef('e.rule_id', '=', 'r.id').orderBy('e.id', 'desc').limit(1).as('event_id'),
    eb.selectFrom('executions as x').select('x.id').whereRef('x.rule_id', '=', 'r.id').orderBy('x.id', 'desc').limit(1).as('execution_id'),
  ]));
const eventById = preparedQuery((db, id: string) => db.selectFrom('events').select(['id', 'outcome', 'received_at']).where('id', '=', id));
const executionById = preparedQuery((db, id: string) => db.selectFrom('executions').select(['id', 'state', 'hostname', 'queued_at', 'finished_at']).where('id', '=', id));
const scheduleOfRule = preparedQuery((db, tenantId: string, ruleId: string) => db.selectFrom('schedules').select(['next_at', 'waiting_tick']).where('tenant_id', '=', tenantId).where('rule_id', '=', ruleId));

/**
 * The activity of one rule, as `activityOf` gives it for a page, with statements built once: a
 * rule's view is read on every GET of it, and before every change of it (the audit's before-view).
 */
export async function activityOfRule(db: Kysely<Database>, tenantId: string, ruleId: string): Promise<RuleActivity> {
  const [newest] = await newestOfRule(db, tenantId, ruleId);
  if (!newest) return NO_ACTIVITY;
  const [[event], [execution], [schedule]] = await Promise.all([
    newest.event_id ? eventById(db, newest.event_id) : [],
    newest.execution_id ? executionById(db, newest.execution_id) : [],
    scheduleOfRule(db, tenantId, ruleId),
  ]);
  return {
    lastEvent: event ?? null,
    lastExecution: execution ?? null,
    schedule: schedule ? { next_at: Number(schedule.next_at), waiting_tick: schedule.waiting_tick === null ? null : Number(schedule.waiting_tick) } : null,
  };
}
