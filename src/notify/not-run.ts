import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { UiLinks } from './links.js';
import type { NotRunNotification } from './notification.js';
import { enqueue, routingOf } from './outbox.js';
import { route } from './routing.js';
import { eventRef } from './run-notification.js';

/**
 * Tells people that a scheduled tick ran nothing (no online host of its target), once per event:
 * the message's dedupe key is the event, so the scheduler can tell again after a crash (it does,
 * before it moves the schedule on) and people hear it once. Routed as an error: channels in mode
 * `all` or `errors`, within their rule filter. Returns the message id, or null when already told,
 * when no channel hears it, or when the event is gone.
 */
export async function tellNotRun(db: Kysely<Database>, links: UiLinks, tenantId: string, eventId: string, now = Date.now()): Promise<string | null> {
  const found = await db
    .selectFrom('events')
    .innerJoin('rules', 'rules.id', 'events.rule_id')
    .selectAll('events')
    .select(['rules.name as rule_name'])
    .where('events.id', '=', eventId)
    .where('events.tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!found) return null;
  const { rule_name: ruleName, ...event } = found;
  const scheduledTime = (JSON.parse(event.payload) as { scheduledTime?: unknown }).scheduledTime;
  const notification: NotRunNotification = {
    kind: 'not_run',
    severity: 'error',
    rule: { id: event.rule_id, name: ruleName, url: links.rule(event.rule_id) },
    event: eventRef(event, links),
    outcome: event.outcome,
    reason: event.reason ?? event.outcome,
    scheduledTime: typeof scheduledTime === 'string' ? scheduledTime : null,
  };
  const routing = (await routingOf(db, [tenantId])).get(tenantId)!;
  const targets = route({ kind: 'not_run', severity: 'error', ruleId: event.rule_id }, routing.channels, routing.contacts);
  // Nobody to tell: no message either (a per-second schedule with no host would write one a second).
  if (targets.length === 0) return null;
  return db.transaction().execute((tx) => enqueue(tx, { tenantId, dedupeKey: `not_run:${eventId}`, ruleId: event.rule_id, notification }, targets, now));
}
