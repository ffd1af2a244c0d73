/**
 * The decision of DESIGN.md §2: a pure function of the rule and the event. It performs no I/O;
 * ingress records its result on the event inside the transaction that stores the event.
 */

export interface RuleState {
  enabled: boolean;
}

export interface EventFacts {
  /** False when the caller asked for a dry run (`Act: false`). */
  act: boolean;
}

export type Decision =
  | { outcome: 'rule_off'; reason: string }
  | { outcome: 'dry_run'; reason: string }
  | { outcome: 'accepted'; reason: null };

export type Outcome = Decision['outcome'];

export function decide(rule: RuleState, event: EventFacts): Decision {
  if (!rule.enabled) return { outcome: 'rule_off', reason: 'the rule is turned off: the alarm is recorded and no action runs' };
  if (!event.act) return { outcome: 'dry_run', reason: 'Act was false: the alarm is recorded as a dry run and no action runs' };
  return { outcome: 'accepted', reason: null };
}
