import type { Kysely } from 'kysely';
import type { ExecutionState } from '../../executions/states.js';
import type { UiLinks } from '../../notify/links.js';
import type { RunbookNotification } from '../../notify/notification.js';
import { enqueue, routingOf } from '../../notify/outbox.js';
import { route } from '../../notify/routing.js';
import { eventRef } from '../../notify/run-notification.js';
import type { Database } from '../../store/schema.js';
import { placeholderFields, renderRunbook } from './render.js';
import { isEmailRunbookSpec, type EmailRunbookSpec } from './spec.js';

/** The ledger's conditional move: returns the ids it moved. */
export type Move = (ids: string[], to: ExecutionState, reason: string, from: ExecutionState[]) => Promise<string[]>;

const PER_PASS = 100;

/**
 * Runs email_runbook executions (they have no host; the service runs them):
 *   queued      the runbook is rendered and its email put in the notify outbox (once: the message is
 *               keyed by the execution id), then the execution moves to dispatched;
 *   dispatched  once the email's delivery has ended, the execution succeeds or fails with the reason.
 * Every step is a conditional move in the ledger and idempotent, so a crash at any point, or two
 * nodes at once, only repeats a step that changes nothing the second time.
 */
export class EmailRunbookRunner {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly links: UiLinks,
    private readonly move: Move,
  ) {}

  async run(now = Date.now()): Promise<void> {
    await this.startQueued(now);
    await this.settleSent();
  }

  private async startQueued(now: number): Promise<void> {
    const queued = await this.db.selectFrom('executions').selectAll().where('state', '=', 'queued').where('host_id', 'is', null).orderBy('id').limit(PER_PASS).execute();
    for (const execution of queued) {
      const spec = JSON.parse(execution.spec) as unknown;
      if (!isEmailRunbookSpec(spec)) continue;
      const event = await this.db.selectFrom('events').selectAll().where('id', '=', execution.event_id).executeTakeFirstOrThrow();
      const routing = (await routingOf(this.db, [execution.tenant_id])).get(execution.tenant_id)!;
      const recipients = spec.recipients ?? [...routing.contacts.emails];
      const targets = route({ kind: 'runbook', severity: 'ok', ruleId: execution.rule_id, recipients }, routing.channels, routing.contacts);
      if (targets.length === 0) {
        const why = recipients.length === 0
          ? 'no one to send the runbook to: give the action recipients, or set escalation contacts with email addresses'
          : 'no email channel to send it with: create an email channel (its SMTP server sends the runbook)';
        await this.fail(execution.id, why, ['queued']);
        continue;
      }
      const notification = runbookNotification(spec, execution.id, event, execution.hostname, this.links);
      await this.db.transaction().execute((tx) => enqueue(tx, { tenantId: execution.tenant_id, dedupeKey: `runbook:${execution.id}`, ruleId: execution.rule_id, executionId: execution.id, notification }, targets, now));
      await this.move([execution.id], 'dispatched', `sending the runbook by email to ${recipients.join(', ')}`, ['queued']);
    }
  }

  private async settleSent(): Promise<void> {
    const sent = await this.db
      .selectFrom('executions')
      .innerJoin('notify_messages', 'notify_messages.execution_id', 'executions.id')
      .innerJoin('notify_deliveries', 'notify_deliveries.message_id', 'notify_messages.id')
      .select(['executions.id', 'notify_deliveries.state', 'notify_deliveries.last_error', 'notify_deliveries.recipients'])
      .where('executions.state', '=', 'dispatched')
      .where('executions.host_id', 'is', null)
      .limit(PER_PASS)
      .execute();
    for (const delivery of sent) {
      if (delivery.state === 'delivered') {
        const to = delivery.recipients ? (JSON.parse(delivery.recipients) as string[]).join(', ') : 'on-call';
        await this.move([delivery.id], 'succeeded', `the runbook was emailed to ${to}`, ['dispatched']);
      } else if (delivery.state === 'failed') {
        await this.move([delivery.id], 'failed', `the runbook email was not delivered: ${delivery.last_error ?? 'unknown error'}`, ['dispatched']);
      }
    }
  }

  /** queued → dispatched → failed: the lifecycle has no shortcut from queued to failed. */
  private async fail(id: string, reason: string, from: ExecutionState[]): Promise<void> {
    const moved = await this.move([id], 'dispatched', reason, from);
    if (moved.length > 0) await this.move([id], 'failed', reason, ['dispatched']);
  }
}

export function runbookNotification(spec: EmailRunbookSpec, executionId: string, event: Parameters<typeof eventRef>[0], hostname: string, links: UiLinks): RunbookNotification {
  const fields = placeholderFields(JSON.parse(event.payload) as Record<string, unknown>);
  const source = spec.script ? `${spec.notes}\n\n## Script\n\n\`\`\`\n${spec.script}\n\`\`\`\n` : spec.notes;
  const rendered = renderRunbook(source, fields);
  return {
    kind: 'runbook',
    severity: 'ok',
    rule: { id: event.rule_id, name: spec.ruleName, url: links.rule(event.rule_id) },
    event: eventRef(event, links),
    executionId,
    subject: `[pitcrew] Runbook: ${spec.ruleName} on ${hostname}`,
    html: rendered.html,
    text: rendered.text,
    missing: rendered.missing,
  };
}
