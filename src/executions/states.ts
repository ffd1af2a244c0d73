import type { ExecutionResult } from './result.js';

/**
 * The execution lifecycle (DESIGN.md §2, docs/executions.md):
 *
 *   awaiting_approval ──> queued   (a person approved: docs/approvals.md)
 *     └──> rejected | expired | cancelled   (a person said no, nobody decided in time, cancelled)
 *
 *   queued ──> dispatched ──> running ──> succeeded | failed | timed_out | cancelled | lost
 *     │            │  └──> (a result can arrive before `started`: fast scripts, refusals)
 *     │            └──> queued   (its agent connection ended before the agent started it)
 *     └──> cancelled | expired   (never reached an agent)
 *
 * Terminal states never change. Every change is a conditional UPDATE on the current state plus
 * an append-only transition row, in one transaction.
 */
export const EXECUTION_STATES = ['awaiting_approval', 'queued', 'dispatched', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired', 'rejected'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export const ACTIVE_STATES: readonly ExecutionState[] = ['awaiting_approval', 'queued', 'dispatched', 'running'];
export const TERMINAL_STATES: readonly ExecutionState[] = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired', 'rejected'];

const NEXT: Record<ExecutionState, readonly ExecutionState[]> = {
  awaiting_approval: ['queued', 'rejected', 'expired', 'cancelled'],
  queued: ['dispatched', 'cancelled', 'expired'],
  dispatched: ['queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'lost'],
  running: ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost'],
  succeeded: [],
  failed: [],
  timed_out: [],
  cancelled: [],
  lost: [],
  expired: [],
  rejected: [],
};

export function isTerminal(state: ExecutionState): boolean {
  return NEXT[state].length === 0;
}

export function canMove(from: ExecutionState, to: ExecutionState): boolean {
  return NEXT[from].includes(to);
}

/** Whether `to` lies ahead of `from` on some path of the lifecycle (a stored state read late is not). */
export function isAhead(from: ExecutionState, to: ExecutionState): boolean {
  const seen = new Set<ExecutionState>();
  const next = [...NEXT[from]];
  while (next.length > 0) {
    const state = next.pop()!;
    if (state === to) return true;
    if (!seen.has(state)) {
      seen.add(state);
      next.push(...NEXT[state]);
    }
  }
  return false;
}

/** The states from which `to` can be reached. */
export function statesBefore(to: ExecutionState): ExecutionState[] {
  return EXECUTION_STATES.filter((from) => canMove(from, to));
}

/** How an agent's report of a run ends the execution. */
export function endingOf(result: ExecutionResult): { state: ExecutionState; reason: string | null } {
  switch (result.ending) {
    case 'exited':
      return result.exitCode === 0
        ? { state: 'succeeded', reason: null }
        : { state: 'failed', reason: result.exitCode === null ? `killed by ${result.signal ?? 'a signal'}` : `exit code ${result.exitCode}` };
    case 'timed_out':
      return { state: 'timed_out', reason: result.reason ?? 'the script ran past its timeout; its process group was killed' };
    case 'cancelled':
      return { state: 'cancelled', reason: result.reason ?? 'cancelled on request; the process group was killed' };
    case 'refused':
      return { state: 'failed', reason: `refused by the agent: ${result.reason ?? 'no reason given'}` };
    case 'failed_to_start':
      return { state: 'failed', reason: `the script could not start: ${result.reason ?? 'no reason given'}` };
  }
}
