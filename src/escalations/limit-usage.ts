import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import { countPerLimitKey, executionsInWindow } from '../executions/limit-window.js';
import type { Rule } from '../rules/rule.js';
import { ActionLimit } from '../rules/schema.js';
import type { Database } from '../store/schema.js';
import { presentEscalation, EscalationView } from './presenter.js';
import { openEscalations } from './repository.js';

export const HostLimitUsage = Type.Object({
  hostId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null for runs the service makes itself (email_runbook), counted per host they are about' }),
  hostname: Type.String(),
  used: Type.Integer({ description: 'executions of the rule on this host within the last windowSeconds' }),
  max: Type.Integer(),
  remaining: Type.Integer(),
  limited: Type.Boolean({ description: 'true: the next alarm for this host is escalated or dropped instead of acting' }),
  nextSlotAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when limited: when the oldest counted execution leaves the window' }),
  escalation: Type.Union([EscalationView, Type.Null()], { description: 'the escalation whose window is open for this host' }),
});

export const LimitUsageView = Type.Object({
  ruleId: Type.String({ format: 'uuid' }),
  actionLimit: Type.Union([ActionLimit, Type.Null()]),
  asOf: Type.String({ format: 'date-time' }),
  hosts: Type.Array(HostLimitUsage, { description: 'every host with an execution of the rule in the window, or an open escalation; busiest first' }),
});

export type LimitUsageView = Static<typeof LimitUsageView>;

/** How much of its action limit a rule has used on each host, right now (sliding window). */
export async function limitUsage(db: Kysely<Database>, rule: Rule, now = Date.now()): Promise<LimitUsageView> {
  const view: LimitUsageView = { ruleId: rule.id, actionLimit: rule.actionLimit, asOf: new Date(now).toISOString(), hosts: [] };
  const limit = rule.actionLimit;
  if (!limit) return view;
  const windowMs = limit.windowSeconds * 1000;
  const counted = countPerLimitKey(await executionsInWindow(db, rule.id, now - windowMs).execute());
  const escalations = new Map((await openEscalations(db, rule.id, now)).map((row) => [row.host_id, row]));
  const hosts = new Map<string, Static<typeof HostLimitUsage>>();
  for (const [key, { hostId, hostname, used, oldest }] of counted) {
    const limited = used >= limit.max;
    hosts.set(key, {
      hostId,
      hostname,
      used,
      max: limit.max,
      remaining: Math.max(0, limit.max - used),
      limited,
      nextSlotAt: limited ? new Date(oldest + windowMs).toISOString() : null,
      escalation: null,
    });
  }
  for (const [hostId, row] of escalations) {
    const usage = hosts.get(hostId) ?? { hostId, hostname: row.hostname, used: 0, max: limit.max, remaining: limit.max, limited: false, nextSlotAt: null, escalation: null };
    hosts.set(hostId, { ...usage, escalation: presentEscalation(row) });
  }
  view.hosts = [...hosts.values()].sort((a, b) => b.used - a.used || a.hostname.localeCompare(b.hostname));
  return view;
}
