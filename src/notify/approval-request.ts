import { sql, type Kysely } from 'kysely';
import { approvalLinkQuery } from '../executions/approval-link.js';
import { storedTerms } from '../executions/approvals.js';
import type { Database, ExecutionRow } from '../store/schema.js';
import type { UiLinks } from './links.js';
import { MAX_LISTED, type ApprovalNotification } from './notification.js';
import { enqueue, routingOf } from './outbox.js';
import { route } from './routing.js';
import { eventRef, type DescribeAction } from './run-notification.js';
import { preparedQuery } from '../store/prepared.js';

const EVENTS_PER_PASS = 100;

/** What building a request needs besides the database. */
export interface ApprovalAsking {
  links: UiLinks;
  /** The key of the e-mail's signed links (executions/approval-link.ts). */
  linkKey: Buffer;
  describe: DescribeAction;
}

/**
 * Tells the channels that an event's runs wait for approval (docs/approvals.md), once per event:
 * the message's dedupe key is the event, so another node or a later pass writes nothing, and the
 * key's absence is what finds the events still to tell. A notifier duty rather than a write in
 * ingest's transaction: ingest's hot path stays as it was, and a pass (every PITCREW_NOTIFY_POLL_MS)
 * is soon enough for a person who has minutes to decide. Returns how many messages it wrote.
 */
export async function askForApprovals(db: Kysely<Database>, asking: ApprovalAsking, now = Date.now()): Promise<number> {
  const due = await eventsToAsk(db, now);
  let written = 0;
  for (const { event_id: eventId, tenant_id: tenantId } of due) {
    if (await askForEvent(db, asking, tenantId, eventId, now)) written += 1;
  }
  return written;
}

async function askForEvent(db: Kysely<Database>, asking: ApprovalAsking, tenantId: string, eventId: string, now: number): Promise<boolean> {
  const waiting = await db.selectFrom('executions').select(['id', 'hostname', 'spec', 'approval']).where('event_id', '=', eventId).where('state', '=', 'awaiting_approval').orderBy('hostname').execute();
  const notification = await approvalNotification(db, asking, tenantId, eventId, waiting, true);
  if (!notification) return false;
  const routing = (await routingOf(db, [tenantId])).get(tenantId)!;
  const targets = route({ kind: 'approval', severity: 'error', ruleId: notification.rule.id }, routing.channels, routing.contacts);
  // Written even with no target: the message is the record that this event was asked about.
  const id = await db.transaction().execute((tx) => enqueue(tx, { tenantId, dedupeKey: approvalKey(eventId), ruleId: notification.rule.id, executionId: waiting[0]!.id, notification }, targets, now));
  return id !== null;
}

/** The key of an event's approval request, written once (askForEvent) and read by the chats that update it. */
function approvalKey(eventId: string): string {
  return `approval:${eventId}`;
}

/** The approval request told for an event; null when none was (no channel, or decided before the pass). */
export async function approvalRequestOf(db: Kysely<Database>, eventId: string): Promise<ApprovalNotification | null> {
  const message = await db.selectFrom('notify_messages').select('body').where('dedupe_key', '=', approvalKey(eventId)).executeTakeFirst();
  return message ? (JSON.parse(message.body) as ApprovalNotification) : null;
}

type Waiting = Pick<ExecutionRow, 'id' | 'hostname' | 'spec' | 'approval'>;

/** The message about runs of one event that wait (or waited) for approval; null when the event is gone. */
export async function approvalNotification(db: Kysely<Database>, { links, linkKey, describe }: ApprovalAsking, tenantId: string, eventId: string, waiting: Waiting[], withLinks: boolean): Promise<ApprovalNotification | null> {
  const event = await db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirst();
  const terms = waiting[0] ? storedTerms(waiting[0]) : null;
  if (!event || !terms) return null;
  const rule = await db.selectFrom('rules').select(['id', 'name']).where('id', '=', event.rule_id).executeTakeFirstOrThrow();
  return {
    kind: 'approval',
    severity: 'error',
    rule: { id: rule.id, name: rule.name, url: links.rule(rule.id) },
    event: eventRef(event, links),
    action: describe(JSON.parse(waiting[0]!.spec) as Parameters<DescribeAction>[0]),
    role: terms.role,
    deadline: new Date(terms.deadline).toISOString(),
    onTimeout: terms.onTimeout,
    executions: waiting.slice(0, MAX_LISTED).map((e) => ({
      id: e.id, hostname: e.hostname, url: links.execution(e.id),
      ...(withLinks ? { decideUrl: links.decide(e.id, approvalLinkQuery(linkKey, { tenantId, executionId: e.id }, storedTerms(e)!.deadline)) } : {}),
    })),
    total: waiting.length,
  };
}

/** Read by every notifier pass (built once: store/prepared.ts). */
const eventsToAsk = preparedQuery((db, now: number) => db
  .selectFrom('executions as e')
  .select(['e.event_id', 'e.tenant_id'])
  .where('e.state', '=', 'awaiting_approval')
  .where('e.expires_at', '>', now)
  .where(({ exists, not, selectFrom }) => not(exists(selectFrom('notify_messages as m').select('m.id').whereRef('m.dedupe_key', '=', sql<string>`${'approval:'} || e.event_id`))))
  .where(({ exists, selectFrom }) => exists(selectFrom('notify_channels as c').select('c.id').whereRef('c.tenant_id', '=', 'e.tenant_id').where('c.mode', '!=', 'disabled')))
  .groupBy(['e.event_id', 'e.tenant_id'])
  .limit(EVENTS_PER_PASS));
