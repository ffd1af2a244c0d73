import { actsOn } from '../engine/alert-match.js';
import { hostKey, type EventFacts } from '../engine/decide.js';
import { noHostReason, ruleHostOf } from '../integrations/rule-host.js';
import type { Rule } from '../rules/rule.js';
import type { BatchReads } from './batch-reads.js';
import type { Occurrence } from './occurrence.js';

/** One rule an occurrence raises, with what this rule reads of it: one event. */
export interface Raise {
  occurrence: Occurrence;
  rule: Rule;
  /** The host the event is about for this rule (an alert rule may name its own host label). */
  hostName: string | undefined;
  /** hostKey(hostName), '' when there is none. */
  hostKey: string;
  /** Why an alert gives this rule no host, and what to change; undefined when it gives one, or for other sources. */
  noHost: string | undefined;
  /** Set when the rule records this alert without acting on it: its state is not one the rule acts on. */
  ignoredState: string | undefined;
  /** The key a repeat is known by, and what a repeat gets: the original back (replay) or a duplicate recorded (record). */
  repeat: { key: string; mode: 'replay' | 'record' } | undefined;
}

/** The rules an occurrence raises, each with its reading of it (none when its credential failed). */
export function raisesOf(occurrence: Occurrence, reads: BatchReads): Raise[] {
  return reads.admitted(occurrence).map((rule) => raiseOf(occurrence, rule));
}

/** The rule's reading of the occurrence: the host it is about for this rule, whether its state acts, how a repeat is known. */
export function raiseOf(occurrence: Occurrence, rule: Rule): Raise {
  const selector = occurrence.rule;
  const alert = selector.by === 'integration' && rule.trigger.type === 'alert' ? { trigger: rule.trigger, facts: selector.alert } : undefined;
  const hostName = alert ? ruleHostOf(alert.trigger, alert.facts) : occurrence.payload.hostName;
  const ignoredState = occurrence.recordOnly ?? (alert && !actsOn(alert.trigger, alert.facts.state)
    ? `the alert is ${alert.facts.state} and the rule acts on ${alert.trigger.on ?? 'firing'} alerts (trigger.on): recorded, nothing run`
    : undefined);
  const repeat = occurrence.alertFingerprint !== undefined
    ? { key: occurrence.alertFingerprint, mode: 'record' as const }
    : occurrence.idempotencyKey !== undefined ? { key: occurrence.idempotencyKey, mode: 'replay' as const } : undefined;
  const noHost = alert && !hostName ? noHostReason(alert.trigger, alert.facts) : undefined;
  return { occurrence, rule, hostName, hostKey: hostName ? hostKey(hostName) : '', noHost, ignoredState, repeat };
}

/** What decide() is told of the event a raise records. */
export function eventFactsOf(raise: Raise): EventFacts & { receivedAt: number } {
  const { payload, receivedAt } = raise.occurrence;
  return { act: payload.act, hostName: raise.hostName, noHost: raise.noHost, alarmState: payload.alarmState, receivedAt, ignoredState: raise.ignoredState, env: payload.env };
}
