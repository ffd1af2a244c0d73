import type { Kysely } from 'kysely';
import type { ActionLimit, Action } from '../rules/schema.js';
import type { Database } from '../store/schema.js';
import type { Escalation } from './escalate.js';
import { preparedQuery } from '../store/prepared.js';

const PER_PASS = 100;

/**
 * From rule safety's records to people (docs/safety.md, "Action limits and escalation"): the
 * ingest transaction writes one `escalations` row per (rule, host, window), state `pending`; this
 * duty of the notifier's loop hands each to escalate() and marks it `notified`. escalate() writes
 * its message once per (rule, host, window start), so a crash between the two steps, or two nodes
 * taking the same row, still tells people once. Limited events that join a window later only
 * count on the record (limitedEvents): people were told when the limit was first reached.
 */
export class EscalationRelay {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly escalate: (escalation: Escalation) => Promise<string | null>,
    private readonly clock: () => number = Date.now,
  ) {}

  async run(): Promise<void> {
    const pending = await pendingEscalations(this.db);
    for (const row of pending) {
      const limit = limitOf(row);
      if (limit) {
        await this.escalate({
          tenantId: row.tenant_id,
          ruleId: row.rule_id,
          hostname: row.hostname,
          limit,
          windowStart: Number(row.window_start),
          // The limit stops an action once `max` executions are in the window.
          count: limit.max,
          // As recorded when it was raised (the action kind's words); rows older than migration 0007 name the rule's action kind now.
          notDone: row.not_done ?? `did not run the ${(JSON.parse(row.action) as Action).type} action on ${row.hostname} for this alarm or later ones in the window`,
          eventId: row.first_event_id,
        });
      }
      await this.db.updateTable('escalations').set({ state: 'notified', updated_at: this.clock() }).where('id', '=', row.id).where('state', '=', 'pending').execute();
    }
  }
}

/**
 * The limit in force when the escalation was raised, as the row recorded it. Rows from before
 * migration 0007 have only their window: the rule's current max stands in, if it still has one.
 */
function limitOf(row: { window_start: number; window_end: number; limit_max: number | null; action_limit: string | null }): { max: number; windowSeconds: number } | undefined {
  const windowSeconds = Math.round((Number(row.window_end) - Number(row.window_start)) / 1000);
  const max = row.limit_max ?? (row.action_limit ? (JSON.parse(row.action_limit) as ActionLimit).max : undefined);
  return max === undefined ? undefined : { max, windowSeconds };
}

/** Read by every notifier pass (built once: store/prepared.ts). */
const pendingEscalations = preparedQuery((db) => db
  .selectFrom('escalations')
  .innerJoin('rules', 'rules.id', 'escalations.rule_id')
  .select(['escalations.id', 'escalations.tenant_id', 'escalations.rule_id', 'escalations.hostname', 'escalations.window_start', 'escalations.window_end', 'escalations.limit_max', 'escalations.not_done', 'escalations.first_event_id', 'rules.action_limit', 'rules.action'])
  .where('escalations.state', '=', 'pending')
  .orderBy('escalations.id')
  .limit(PER_PASS));
