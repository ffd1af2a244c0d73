import type { Action, ActionLimit, Approval, Flapping, Target, Trigger } from './schema.js';

/** A rule as the service holds it: the validated input plus what the service assigned. */
export interface Rule {
  id: string;
  tenantId: string;
  name: string;
  enabled: boolean;
  trigger: Trigger;
  /** Set for webhook triggers: the <trigger_id> of the webhook URL. */
  triggerId: string | null;
  action: Action;
  target: Target;
  infrastructureType: string;
  actionLimit: ActionLimit | null;
  flapping: Required<Flapping>;
  /** As set; null: none set (rules/approval.ts gives what that means for the action). */
  approval: Approval | null;
  createdAt: number;
  updatedAt: number;
}

export const FLAPPING_DEFAULTS: Required<Flapping> = { enabled: false, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 };

export function withFlappingDefaults(flapping: Flapping | undefined): Required<Flapping> {
  return { ...FLAPPING_DEFAULTS, ...flapping };
}

/** How a tag target picks its hosts: as the rule says, else one host for a schedule, all of them otherwise. */
export function pickOf(rule: { trigger?: { type: string }; target: Pick<Rule['target'], 'pick'> }): 'all' | 'one' {
  return rule.target.pick ?? (rule.trigger?.type === 'cron' ? 'one' : 'all');
}
