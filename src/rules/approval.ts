import type { Role } from '../identity/roles.js';
import type { Action, Approval } from './schema.js';

/** The terms an execution waits for a person's yes under (docs/approvals.md), copied onto it when it is created. */
export interface ApprovalTerms {
  role: Extract<Role, 'operator' | 'admin'>;
  timeoutSeconds: number;
  onTimeout: 'expire' | 'escalate';
}

export const APPROVAL_DEFAULTS = { role: 'operator', timeoutSeconds: 3600, onTimeout: 'expire' } as const;

/**
 * Whether a rule's executions wait for approval, and under which terms; null: they run at once.
 * A cloud `terminate` destroys what it acts on, so it asks unless the rule says `required: false`.
 */
export function approvalTerms(rule: { action: Action; approval: Approval | null }): ApprovalTerms | null {
  const required = rule.approval?.required ?? destroys(rule.action);
  if (!required) return null;
  return {
    role: rule.approval?.role ?? APPROVAL_DEFAULTS.role,
    timeoutSeconds: rule.approval?.timeoutSeconds ?? APPROVAL_DEFAULTS.timeoutSeconds,
    onTimeout: rule.approval?.onTimeout ?? APPROVAL_DEFAULTS.onTimeout,
  };
}

function destroys(action: Action): boolean {
  return action.type === 'cloud' && action.operation === 'terminate';
}
