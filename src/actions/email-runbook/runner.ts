import type { Kysely } from 'kysely';
import type { RunState, ServiceRunner } from '../../executions/service-executor.js';
import type { UiLinks } from '../../notify/links.js';
import type { RunbookNotification } from '../../notify/notification.js';
import { enqueue, routingOf } from '../../notify/outbox.js';
import { route } from '../../notify/routing.js';
import { eventRef } from '../../notify/run-notification.js';
import type { Database, ExecutionRow } from '../../store/schema.js';
import { placeholderFields, renderRunbook } from './render.js';
import { isEmailRunbookSpec, type EmailRunbookSpec } from './kind.js';
import { preparedQuery } from '../../store/prepared.js';

const PER_PASS = 100;

/**
 * Runs email_runbook executions (they have no host; the service's executor runs them,
 * executions/service-executor.ts) by handing them to the notify outbox:
 *   hand-off  the runbook is rendered and its email put in the outbox, once: the message is keyed
 *             by the execution id, so a hand-off repeated after a crash changes nothing;
 *   settle    once the email's delivery has ended, the execution succeeds or fails with the reason.
 */
export class EmailRunbookRunner implements Extract<ServiceRunner, { mode: 'hand_off' }> {
  readonly kind = 'email_runbook';
  readonly mode = 'hand_off';

  constructor(
    private readonly db: Kysely<Database>,
    private readonly links: UiLinks,
    private readonly clock: () => number = Date.now,
  ) {}

  async handOff(execution: ExecutionRow): Promise<RunState | { handedOff: string }> {
    const spec = JSON.parse(execution.spec) as unknown;
    if (!isEmailRunbookSpec(spec)) return { state: 'failed', reason: 'not an email_runbook execution' };
    const event = await this.db.selectFrom('events').selectAll().where('id', '=', execution.event_id).executeTakeFirstOrThrow();
    const routing = (await routingOf(this.db, [execution.tenant_id])).get(execution.tenant_id)!;
    const recipients = spec.recipients ?? [...routing.contacts.emails];
    const targets = route({ kind: 'runbook', severity: 'ok', ruleId: execution.rule_id, recipients }, routing.channels, routing.contacts);
    if (targets.length === 0) {
      const reason = recipients.length === 0
        ? 'no one to send the runbook to: give the action recipients, or set escalation contacts with email addresses'
        : 'no email channel to send it with: create an email channel (its SMTP server sends the runbook)';
      return { state: 'failed', reason };
    }
    const notification = await runbookNotification(spec, execution.id, event, execution.hostname, this.links);
    await this.db.transaction().execute((tx) => enqueue(tx, { tenantId: execution.tenant_id, dedupeKey: `runbook:${execution.id}`, ruleId: execution.rule_id, executionId: execution.id, notification }, targets, this.clock()));
    return { handedOff: `sending the runbook by email to ${recipients.join(', ')}` };
  }

  async settle(): Promise<Array<RunState & { id: string }>> {
    const sent = await sentRunbooks(this.db);
    const ends: Array<RunState & { id: string }> = [];
    for (const delivery of sent) {
      if (delivery.state === 'delivered') {
        const to = delivery.recipients ? (JSON.parse(delivery.recipients) as string[]).join(', ') : 'on-call';
        ends.push({ id: delivery.id, state: 'succeeded', reason: `the runbook was emailed to ${to}` });
      } else if (delivery.state === 'failed') {
        ends.push({ id: delivery.id, state: 'failed', reason: `the runbook email was not delivered: ${delivery.last_error ?? 'unknown error'}` });
      }
    }
    return ends;
  }
}

export async function runbookNotification(spec: EmailRunbookSpec, executionId: string, event: Parameters<typeof eventRef>[0], hostname: string, links: UiLinks): Promise<RunbookNotification> {
  const fields = placeholderFields(JSON.parse(event.payload) as Record<string, unknown>);
  const source = spec.script ? `${spec.notes}\n\n## Script\n\n\`\`\`\n${spec.script}\n\`\`\`\n` : spec.notes;
  const rendered = await renderRunbook(source, fields);
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

/** Read every poll of the service executor (built once: store/prepared.ts). */
const sentRunbooks = preparedQuery((db) => db
  .selectFrom('executions')
  .innerJoin('notify_messages', 'notify_messages.execution_id', 'executions.id')
  .innerJoin('notify_deliveries', 'notify_deliveries.message_id', 'notify_messages.id')
  .select(['executions.id', 'notify_deliveries.state', 'notify_deliveries.last_error', 'notify_deliveries.recipients'])
  .where('executions.state', '=', 'dispatched')
  .where('executions.host_id', 'is', null)
  .limit(PER_PASS));
