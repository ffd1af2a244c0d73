import type { ExecutionRow } from '../store/schema.js';
import type { ExecutionState } from './states.js';
import { counted } from '../errors/counts.js';

/** The columns a fan-out's rebalancing reads. */
export type FanoutMember = Pick<ExecutionRow, 'id' | 'state' | 'held' | 'fanout_max_concurrency' | 'fanout_max_errors' | 'host_id' | 'awaiting_runbook'>;

/** Why an execution of a fan-out waits, over hosts or over a cloud action's instances. */
export function heldReason(maxConcurrency: number, what: 'host' | 'instance'): string {
  return `waiting for its turn: this fan-out runs on at most ${counted(maxConcurrency, what)} at once (maxConcurrency)`;
}

/** What counts against maxErrors: the script ran and did not succeed, or may have and was lost. */
export const ERROR_STATES: readonly ExecutionState[] = ['failed', 'timed_out', 'lost'];

export type Rebalance =
  | { kind: 'stop'; cancel: string[]; reason: string }
  | { kind: 'release'; release: string[] };

/**
 * One event's executions over tag targets, after some of them moved (docs/safety.md, fan-out):
 * once maxErrors of them failed, every one that has not been dispatched is cancelled; otherwise
 * held ones are released, oldest first, while fewer than maxConcurrency are under way.
 * Pure: the ledger applies the answer in the transaction that made the move.
 */
export function rebalance(members: readonly FanoutMember[]): Rebalance {
  const first = members[0];
  if (!first) return { kind: 'release', release: [] };
  const maxErrors = first.fanout_max_errors;
  const errors = members.filter((m) => ERROR_STATES.includes(m.state as ExecutionState)).length;
  const waiting = members.filter((m) => m.state === 'queued');
  if (maxErrors !== null && errors >= maxErrors) {
    // A fan-out is over hosts (their agents) or over a cloud action's instances (the service's runs).
    const what = first.host_id === null ? 'instance' : 'host';
    const reason = `cancelled before it ran: ${counted(errors, what)} of this fan-out failed (maxErrors ${maxErrors}), so the rest were stopped`;
    return { kind: 'stop', cancel: waiting.map((m) => m.id), reason };
  }
  const maxConcurrency = first.fanout_max_concurrency;
  if (maxConcurrency === null) return { kind: 'release', release: [] };
  const underway = members.filter((m) => m.state === 'dispatched' || m.state === 'running' || (m.state === 'queued' && m.held === 0)).length;
  // A run still waiting for its git runbook is released by the read (executions/runbook-read.ts), not here.
  const held = waiting.filter((m) => m.held === 1 && m.awaiting_runbook !== 1).map((m) => m.id).sort();
  return { kind: 'release', release: held.slice(0, Math.max(0, maxConcurrency - underway)) };
}
