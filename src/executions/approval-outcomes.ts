import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { ExecutionState } from './states.js';

/** How a person's decision, or the deadline, ended an execution's wait, in words: "approved by ana@example.com (slack): go". */
export interface ApprovalOutcome {
  decision: 'approved' | 'rejected' | 'expired' | 'cancelled';
  words: string;
}

/**
 * Where one execution of an approval request stands, for every channel that shows the request
 * (Slack's message, Teams' card): its state and reason now, and how its wait ended, in the words
 * of its history (the move out of awaiting_approval), or null while it still waits.
 */
export interface ApprovalStanding {
  state: string;
  reason: string | null;
  outcome: ApprovalOutcome | null;
}

/** The row read: the execution and its move out of awaiting_approval, if it made one (it makes one at most: states.ts). */
export interface StandingRow {
  id: string;
  state: string;
  reason: string | null;
  left_to: string | null;
  left_because: string | null;
}

const DECISIONS: Partial<Record<ExecutionState, ApprovalOutcome['decision']>> = { queued: 'approved', rejected: 'rejected', expired: 'expired', cancelled: 'cancelled' };

/** How each of these executions stands, by id, in one read; one no longer in pitcrew is absent. */
export async function approvalStandings(db: Kysely<Database>, executionIds: string[]): Promise<Map<string, ApprovalStanding>> {
  if (executionIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('executions as e')
    .leftJoin('execution_transitions as t', (join) => join.onRef('t.execution_id', '=', 'e.id').on('t.from_state', '=', 'awaiting_approval'))
    .select(['e.id', 'e.state', 'e.reason', 't.to_state as left_to', 't.reason as left_because'])
    .where('e.id', 'in', executionIds)
    .execute();
  return new Map(rows.map((row) => [row.id, standingOf(row)]));
}

export function standingOf(row: StandingRow): ApprovalStanding {
  const decision = row.left_to ? DECISIONS[row.left_to as ExecutionState] : undefined;
  return { state: row.state, reason: row.reason, outcome: decision ? { decision, words: row.left_because ?? decision } : null };
}

/** The outcomes of those that left their wait, by id: what a message shows in place of their buttons. */
export function outcomesOf(standings: Map<string, ApprovalStanding>): Record<string, ApprovalOutcome> {
  const outcomes: Record<string, ApprovalOutcome> = {};
  for (const [id, standing] of standings) if (standing.outcome) outcomes[id] = standing.outcome;
  return outcomes;
}
