import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import { nextTick } from './cron.js';
import type { Rule } from './rule.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Keeps a rule's schedule row true to the rule, in the transaction that saves it: an enabled cron
 * rule waits for its next tick from now (a change of schedule, zone or a resume starts afresh:
 * nothing is caught up); any other rule, a paused or a deleted one, has none. A change that leaves
 * the schedule as it was (a new name, another script) keeps the tick it waits for, even one due now.
 */
export async function syncSchedule(db: Db, rule: Rule, now: number, previous?: Rule): Promise<void> {
  const next = rule.enabled && rule.trigger.type === 'cron' ? nextTick(rule.trigger, now) : undefined;
  // A rule that was not a cron rule before has no schedule to drop (a delete per PATCH otherwise).
  if (next === undefined) return previous && previous.trigger.type !== 'cron' ? undefined : dropSchedule(db, rule.id);
  const unchanged = previous !== undefined && previous.enabled && sameSchedule(previous.trigger, rule.trigger);
  await db.insertInto('schedules').values({ rule_id: rule.id, tenant_id: rule.tenantId, next_at: next, last_tick_at: null, updated_at: now })
    .onConflict((conflict) => (unchanged ? conflict.column('rule_id').doNothing() : conflict.column('rule_id').doUpdateSet({ next_at: next, waiting_tick: null, updated_at: now })))
    .execute();
}

function sameSchedule(a: Rule['trigger'], b: Rule['trigger']): boolean {
  return a.type === 'cron' && b.type === 'cron' && a.schedule === b.schedule && (a.timezone ?? 'UTC') === (b.timezone ?? 'UTC');
}

export async function dropSchedule(db: Db, ruleId: string): Promise<void> {
  await db.deleteFrom('schedules').where('rule_id', '=', ruleId).execute();
}
