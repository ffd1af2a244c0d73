import { queuedRow } from '../../executions/repository.js';
import { SERVICE_HOSTNAME, type ServiceRunSpec } from '../../executions/service-runs.js';
import type { Rule } from '../../rules/rule.js';
import { newId } from '../../store/ids.js';
import type { NewEventRow, NewExecutionRow } from '../../store/schema.js';

/**
 * What an email_runbook execution does, copied from the rule when the event arrives (an edit of
 * the rule never changes what an earlier event sends). It runs on the service, not on a host.
 */
export interface EmailRunbookSpec extends ServiceRunSpec {
  kind: 'email_runbook';
  notes: string;
  script: string | null;
  /** The action's own recipients; null: the tenant's escalation contacts' addresses. */
  recipients: string[] | null;
  ruleName: string;
  timeoutSeconds: number;
}

export function emailRunbookExecutionRow(rule: Rule, event: NewEventRow, hostname: string | undefined, expirySeconds: number): NewExecutionRow {
  if (rule.action.type !== 'email_runbook') throw new Error(`rule ${rule.id} has no email_runbook action`);
  const spec: EmailRunbookSpec = {
    kind: 'email_runbook',
    notes: rule.action.runbook.notes,
    script: rule.action.runbook.script ?? null,
    recipients: rule.action.recipients ?? null,
    ruleName: rule.name,
    timeoutSeconds: expirySeconds,
  };
  const ids = { id: newId(event.received_at), tenantId: rule.tenantId, ruleId: rule.id, eventId: event.id };
  return queuedRow(ids, { hostId: null, hostname: hostname || SERVICE_HOSTNAME }, spec, event.received_at, expirySeconds);
}

export function isEmailRunbookSpec(spec: unknown): spec is EmailRunbookSpec {
  return typeof spec === 'object' && spec !== null && (spec as { kind?: unknown }).kind === 'email_runbook';
}
