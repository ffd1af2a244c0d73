import type { ExecutionState } from '../api/types';

export const ACTIVE_STATES: readonly ExecutionState[] = ['awaiting_approval', 'queued', 'dispatched', 'running'];

export function isActive(state: ExecutionState): boolean {
  return ACTIVE_STATES.includes(state);
}
