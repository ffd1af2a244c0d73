import type { Kysely } from 'kysely';
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
