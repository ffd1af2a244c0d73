import type { Kysely } from 'kysely';
import { hostKey } from '../engine/decide.js';
import { notFound } from '../errors/catalogue.js';
import type { Database } from '../store/schema.js';
import type { UiLinks } from './links.js';
import type { EscalationNotification } from './notification.js';
import { enqueue, routingOf } from './outbox.js';
import { route } from './routing.js';
import { eventRef } from './run-notification.js';

/** An action limit reached for (rule, host) in a window (issue 5's escalation record). */
export interface Escalation {
  tenantId: string;
  ruleId: string;
  hostname: string;
  limit: { max: number; windowSeconds: number };
  /** Start of the limit's window, epoch ms: with rule and host, what makes an escalation one. */
  windowStart: number;
  /** Executions counted in the window when the limit stopped the action. */
  count: number;
  /** What pitcrew did not do, e.g. "did not run the autofix script for the alarm at 03:12". */
  notDone: string;
  /** The event the limit stopped, when known: its fields and link go into the message. */
  eventId?: string | null;
}

/**
 * Tells people that an action limit stopped pitcrew, exactly once per (rule, host, window start):
 * the message's dedupe key is that triple, so a second call (another node, another limited
 * event of the same window, a retry after a crash) writes nothing. Returns the message id, or
 * null when this escalation was already sent (or is being sent).
 */
export async function escalate(db: Kysely<Database>, links: UiLinks, escalation: Escalation, now = Date.now()): Promise<string | null> {
  const { tenantId, ruleId } = escalation;
  const rule = await db.selectFrom('rules').select(['id', 'name']).where('id', '=', ruleId).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!rule) throw notFound('rule', ruleId);
  const event = escalation.eventId
    ? await db.selectFrom('events').selectAll().where('id', '=', escalation.eventId).where('tenant_id', '=', tenantId).executeTakeFirst()
    : undefined;
  const notification: EscalationNotification = {
    kind: 'escalation',
    severity: 'error',
    rule: { id: rule.id, name: rule.name, url: links.rule(rule.id) },
    hostname: escalation.hostname,
    limit: escalation.limit,
    count: escalation.count,
    windowStart: new Date(escalation.windowStart).toISOString(),
    notDone: escalation.notDone,
    event: event ? eventRef(event, links) : null,
  };
  const routing = (await routingOf(db, [tenantId])).get(tenantId)!;
  const targets = route({ kind: 'escalation', severity: 'error', ruleId }, routing.channels, routing.contacts);
  const dedupeKey = `escalation:${ruleId}:${hostKey(escalation.hostname)}:${escalation.windowStart}`;
  return db.transaction().execute((tx) => enqueue(tx, { tenantId, dedupeKey, ruleId, notification }, targets, now));
}
