import type { Kysely } from 'kysely';
import { approvalStandings, outcomesOf } from '../../executions/approval-outcomes.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { ApprovalNotification } from '../notification.js';
import { preparedQuery } from '../../store/prepared.js';

/** The approval's longest wait (7 days, rules/approval.ts) and a day to spare: older requests are settled. */
const LOOK_BACK_MS = 8 * 86_400_000;
/** Past its deadline and this, every run of a request has been decided or expired, and told: the request is not read again. */
const SETTLED_AFTER_MS = 3_600_000;

/**
 * Queues the update of each chat message that asked for an approval since decided (issue 42 step 4;
 * docs/approvals.md "In Slack"), whoever decided and however: from Slack, the UI, the API, the
 * e-mail's link, or nobody before the deadline. A notifier duty rather than a write at each
 * decision: the request's message may land after the decision (its delivery retried), and the
 * decisions are taken in four places. Reads the deliveries that kept where their message landed
 * (message_ref, an index of their own), and for each execution of its event decided since,
 * writes one update, keyed by the execution and the delivery, so other nodes and later passes
 * write nothing more. The update is a delivery to the same channel with the same message_ref: the
 * deliverer sends it (chat.update), retried and recorded as any send. Returns how many it wrote.
 */
export async function queueOutcomeUpdates(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const asked = await askedOnSlack(db, now - LOOK_BACK_MS);
  let written = 0;
  for (const delivery of asked) {
    const request = JSON.parse(delivery.body) as ApprovalNotification;
    if (request.timedOut || Date.parse(request.deadline) + SETTLED_AFTER_MS < now) continue;
    const outcomes = outcomesOf(await approvalStandings(db, request.executions.map((e) => e.id)));
    const due = await notYetTold(db, Object.keys(outcomes).map((executionId) => updateKey(executionId, delivery.id)));
    for (const executionId of Object.keys(outcomes)) {
      if (!due.has(updateKey(executionId, delivery.id))) continue;
      if (await writeUpdate(db, { ...delivery, message_ref: delivery.message_ref! }, executionId, { ...request, outcomes }, now)) written += 1;
    }
  }
  return written;
}

function updateKey(executionId: string, deliveryId: string): string {
  return `approval-outcome:${executionId}:${deliveryId}`;
}

/** The keys of those not yet written. */
async function notYetTold(db: Kysely<Database>, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const written = await db.selectFrom('notify_messages').select('dedupe_key').where('dedupe_key', 'in', keys).execute();
  const taken = new Set(written.map((row) => row.dedupe_key));
  return new Set(keys.filter((key) => !taken.has(key)));
}

interface AskedDelivery {
  id: string;
  tenant_id: string;
  channel_id: string;
  message_ref: string;
  rule_id: string | null;
}

async function writeUpdate(db: Kysely<Database>, delivery: AskedDelivery, executionId: string, notification: ApprovalNotification, now: number): Promise<boolean> {
  const outcome = notification.outcomes![executionId]!;
  const host = notification.executions.find((e) => e.id === executionId)?.hostname ?? executionId;
  return db.transaction().execute(async (tx) => {
    const id = newId(now);
    const inserted = await tx.insertInto('notify_messages').values({
      id, tenant_id: delivery.tenant_id, kind: 'approval', dedupe_key: updateKey(executionId, delivery.id), severity: 'ok',
      rule_id: delivery.rule_id, execution_id: executionId, title: `Approval request updated: ${notification.rule.name} on ${host} ${outcome.words}`,
      body: JSON.stringify(notification), created_at: now,
    }).onConflict((oc) => oc.column('dedupe_key').doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
    await tx.insertInto('notify_deliveries').values({
      id: newId(now), message_id: id, tenant_id: delivery.tenant_id, channel_id: delivery.channel_id, audience: 'channel', recipients: null,
      state: 'pending', attempts: 0, next_attempt_at: now, created_at: now, message_ref: delivery.message_ref,
    }).execute();
    return true;
  });
}

/** Read by every notifier pass (built once: store/prepared.ts). */
const askedOnSlack = preparedQuery((db, createdAfter: number) => db
  .selectFrom('notify_deliveries as d')
  .innerJoin('notify_messages as m', 'm.id', 'd.message_id')
  // Slack's messages only: another platform's kept place is that platform's to update.
  .innerJoin('notify_channels as c', 'c.id', 'd.channel_id')
  .where('c.type', '=', 'slack')
  .select(['d.id', 'd.tenant_id', 'd.channel_id', 'd.message_ref', 'm.dedupe_key', 'm.body', 'm.rule_id'])
  .where('d.message_ref', 'is not', null)
  .where('m.kind', '=', 'approval')
  .where('m.dedupe_key', 'like', 'approval:%')
  .where('m.created_at', '>', createdAfter));
