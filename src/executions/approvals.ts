import type { ApprovalTerms } from '../rules/approval.js';
import type { NewExecutionRow } from '../store/schema.js';

/**
 * What waiting for approval means for an execution's row (docs/approvals.md): it is created in
 * `awaiting_approval`, which nothing that dispatches reads (agents, the service's executor and the
 * runbook stage all take `queued` rows only), with its terms copied and its deadline in
 * `expires_at`, past which the sweeper ends it. It counts in the action limit from its approval on.
 */
export function awaitingApproval(row: NewExecutionRow, terms: ApprovalTerms): NewExecutionRow {
  return {
    ...row,
    state: 'awaiting_approval',
    reason: `waits for approval by ${article(terms.role)} ${terms.role} or above (Approve or Reject on the execution's page) until ${new Date(row.queued_at + terms.timeoutSeconds * 1000).toISOString()}; nothing runs until then`,
    // With its deadline: queued_at moves to the approval's time once approved.
    approval: JSON.stringify({ ...terms, deadline: row.queued_at + terms.timeoutSeconds * 1000 }),
    expires_at: row.queued_at + terms.timeoutSeconds * 1000,
  };
}

function article(role: string): string {
  return /^[aeiou]/.test(role) ? 'an' : 'a';
}

/** The terms stored on an execution that waited for approval, with its deadline (ms); null for one that never did. */
export function storedTerms(row: { approval: string | null }): (ApprovalTerms & { deadline: number }) | null {
  return row.approval ? (JSON.parse(row.approval) as ApprovalTerms & { deadline: number }) : null;
}

/** How the reason of a run that expired undecided ends when its rule escalates (notify/approval-escalation.ts finds them by it). */
export const UNDECIDED_ESCALATED = '; the on-call contacts are told';
