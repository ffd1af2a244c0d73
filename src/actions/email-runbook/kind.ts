import { describeHost } from '../../engine/alarm-history.js';
import type { Rule } from '../../rules/rule.js';
import type { ActionKind, KindSpec } from '../kind.js';
import { times } from '../../errors/counts.js';

/**
 * What an email_runbook execution does, copied from the rule when the event arrives (an edit of
 * the rule never changes what an earlier event sends). It runs on the service, not on a host.
 */
export interface EmailRunbookSpec extends KindSpec {
  kind: 'email_runbook';
  /** How the runbook is written, shown on the execution. */
  interpreter: 'markdown';
  notes: string;
  script: string | null;
  /** The action's own recipients; null: the tenant's escalation contacts' addresses. */
  recipients: string[] | null;
  ruleName: string;
  timeoutSeconds: number;
}

type EmailRunbookAction = Extract<Rule['action'], { type: 'email_runbook' }>;

/**
 * The rule's runbook mailed to people, once per event, about the rule's host or the payload's,
 * within the action limit per (rule, host it is about): an alert storm must not become a storm of
 * mail. Reaching the limit escalates nothing: the runbook already went to the humans an
 * escalation would reach.
 */
export const emailRunbookKind: ActionKind = {
  type: 'email_runbook',
  escalatesAtLimit: false,
  plan(rule, event) {
    return { runsOn: 'service', runs: [{ about: rule.target.type === 'specific_host' ? rule.target.hostname : event.hostName }] };
  },
  limitedReason(used, about, limit) {
    return `the runbook was mailed ${times(used)} about ${describeHost(about)} within ${limit.windowSeconds} s, its action limit (max ${limit.max}): not sent again`;
  },
  spec(rule, run): EmailRunbookSpec {
    const action = emailRunbookAction(rule);
    return {
      kind: 'email_runbook',
      interpreter: 'markdown',
      notes: action.runbook.notes ?? '',
      script: action.runbook.script ?? null,
      ...(action.runbook.runbookId === undefined ? {} : { runbook: { runbookId: action.runbook.runbookId, version: action.runbook.resolvedVersion!, name: action.runbook.name!, sha256: action.runbook.sha256! } }),
      recipients: action.recipients ?? null,
      ruleName: rule.name,
      timeoutSeconds: run.expirySeconds,
    };
  },
  describe() {
    return 'email the runbook to on-call';
  },
  notDone(rule, hostname) {
    return `did not mail the runbook of rule "${rule.name}" about ${hostname} for this alarm or later ones in the window`;
  },
};

export function isEmailRunbookSpec(spec: unknown): spec is EmailRunbookSpec {
  return typeof spec === 'object' && spec !== null && (spec as { kind?: unknown }).kind === 'email_runbook';
}

function emailRunbookAction(rule: Rule): EmailRunbookAction {
  if (rule.action.type !== 'email_runbook') throw new Error(`rule ${rule.id} has no email_runbook action`);
  return rule.action;
}
