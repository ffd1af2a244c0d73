import { sql, type Kysely } from 'kysely';
import { UNDECIDED_ESCALATED } from '../executions/approvals.js';
import type { Database } from '../store/schema.js';
import { approvalNotification, type ApprovalAsking } from './approval-request.js';
import { enqueue, routingOf } from './outbox.js';
import { route } from './routing.js';

/**
 * A run whose rule says `onTimeout: "escalate"` reached its approval deadline undecided: it ended
 * `expired` (it never runs unattended), and the on-call contacts are told as an action limit's
 * escalation is (routing.ts: the contacts' channels whatever their mode, their addresses through the
 * SMTP channel, and the channels that hear errors). Once per execution: the message is keyed by it.
 * Returns the message id, or null when already told or when the execution is not such a run.
 */
export async function escalateUndecided(db: Kysely<Database>, asking: ApprovalAsking, tenantId: string, executionId: string, now = Date.now()): Promise<string | null> {
  const row = await db.selectFrom('executions').select(['id', 'hostname', 'spec', 'approval', 'event_id', 'state']).where('id', '=', executionId).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row || row.state !== 'expired') return null;
  const found = await approvalNotification(db, asking, tenantId, row.event_id, [row], false);
  if (!found || found.onTimeout !== 'escalate') return null;
  const notification = { ...found, timedOut: true };
  const routing = (await routingOf(db, [tenantId])).get(tenantId)!;
  const targets = route({ kind: 'escalation', severity: 'error', ruleId: notification.rule.id }, routing.channels, routing.contacts);
  return db.transaction().execute((tx) => enqueue(tx, { tenantId, dedupeKey: `approval_escalation:${executionId}`, ruleId: notification.rule.id, executionId, notification }, targets, now));
}

/** How far back a missed escalation is still worth sending: past it, the alert is history. */
export const OWED_LOOKBACK_MS = 6 * 3_600_000;

/**
 * Escalations owed: runs that expired undecided under `onTimeout: "escalate"` (their reason says
 * so, written in the expiry's own transaction) with no escalation message. The sweeping node sends
 * one right after its commit; this finds the ones a node that stopped in between never sent, on
 * the next minute's sweep of any node. The message's key keeps it once. Returns how many it wrote.
 */
export async function escalateOwed(db: Kysely<Database>, asking: ApprovalAsking, now = Date.now()): Promise<number> {
  const owed = await db
    .selectFrom('executions as e')
    .select(['e.id', 'e.tenant_id'])
    .where('e.state', '=', 'expired')
    .where('e.expires_at', '>', now - OWED_LOOKBACK_MS)
    .where('e.expires_at', '<=', now)
    .where('e.approval', 'is not', null)
    .where('e.reason', 'like', `%${UNDECIDED_ESCALATED}`)
    .where(({ exists, not, selectFrom }) => not(exists(selectFrom('notify_messages as m').select('m.id').whereRef('m.dedupe_key', '=', sql<string>`${'approval_escalation:'} || e.id`))))
    .limit(100)
    .execute();
  let written = 0;
  for (const row of owed) if (await escalateUndecided(db, asking, row.tenant_id, row.id)) written += 1;
  return written;
}
