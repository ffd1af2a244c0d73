import type { ExecutionResult } from './result.js';
import type { ExecutionRow } from '../store/schema.js';
import type { ExecutionSpec } from './repository.js';
import { rebalance } from './fanout.js';
import { applyRunbookRead, type RunbookRead } from './runbook-read.js';
import { ACTIVE_STATES, endingOf, isTerminal, statesBefore, type ExecutionState } from './states.js';

/** What the ledger can be asked to do; each is a conditional move in the lifecycle. */
export type LedgerOp =
  | { kind: 'claim'; hostId: string; ids: string[] | 'all_queued'; sessionId: string; nodeId: string }
  | { kind: 'started'; hostId: string; executionId: string; startedAt: number }
  /** `hostId` null: a run by the service (no host) ended with a process's result. */
  | { kind: 'result'; hostId: string | null; result: ExecutionResult }
  /** `hostId`: asked for by that host's agent, so it moves only that host's executions. */
  | { kind: 'move'; ids: string[]; to: ExecutionState; reason: string; from?: ExecutionState[]; hostId?: string; nodeId?: string }
  /** A queued run whose host went offline, to another host its target may pick (executions/placement.ts). */
  | { kind: 'place'; id: string; fromHostId: string; to: { hostId: string; hostname: string; hostKey: string }; reason: string; hostId?: undefined }
  /** One event's git runbook was read (executions/runbook-stage.ts): all its waiting runs are released, or fail before dispatch. */
  | { kind: 'runbook'; eventId: string; read: RunbookRead; hostId?: undefined };

export interface Claimed {
  id: string;
  spec: ExecutionSpec;
}

export type Recorded = { state: ExecutionState; late: boolean } | undefined;
export type LedgerResult = Claimed[] | boolean | Recorded | string[];

/** The columns the planner reads. */
export type Current = Pick<ExecutionRow, 'id' | 'state' | 'host_id' | 'started_at' | 'finished_at' | 'late_result' | 'spec' | 'event_id' | 'held' | 'fanout_max_concurrency' | 'fanout_max_errors' | 'queued_at' | 'expires_at' | 'awaiting_runbook'>;

export interface Plan {
  results: LedgerResult[];
  /** Per execution, every column to set (merged when several operations touch it). */
  updates: Map<string, Partial<ExecutionRow>>;
  transitions: Array<{ execution_id: string; from_state: string; to_state: string; reason: string | null }>;
  artifacts: Array<{ execution_id: string; name: string; base64: string }>;
  /** Held fan-out executions a freed slot let go: queued now, to dispatch after the commit. */
  released: Array<{ id: string; hostId: string }>;
  /** Executions a host's operation changes: their UPDATE holds only while the row is still that host's. */
  hostOf: Map<string, string>;
  /** What a host's agent named that is not its host's (another host's, another tenant's, unknown): nothing changed. */
  refused: Array<{ hostId: string; executionId: string; kind: LedgerOp['kind'] }>;
}

/**
 * Applies a batch of operations, in order, to the current rows: a pure function, so that a
 * batch needs one trip to read and one to write. An operation whose execution is not in a state
 * it can move from (a repeat, a race) changes nothing. An operation a host's agent asked for
 * (it carries `hostId`: everything an agent says reaches the ledger so) changes only that
 * host's executions; another host's id, in this tenant or another, is refused and listed.
 */
export function planLedger(rows: Current[], queuedByHost: Map<string, string[]>, ops: LedgerOp[], now: number): Plan {
  const current = new Map(rows.map((row) => [row.id, { ...row }]));
  const plan: Plan = { results: [], updates: new Map(), transitions: [], artifacts: [], released: [], hostOf: new Map(), refused: [] };

  const move = (id: string, to: ExecutionState, reason: string | null, allowed: readonly ExecutionState[], set: Partial<ExecutionRow>, hostId?: string) => {
    const row = current.get(id);
    if (!row || !allowed.includes(row.state as ExecutionState) || (hostId !== undefined && row.host_id !== hostId)) return false;
    plan.transitions.push({ execution_id: id, from_state: row.state, to_state: to, reason });
    row.state = to;
    // Merged in place: on Node 20 `{ ...earlier, ...set, state, reason }` takes V8's slow path, ~1 % of the server's time per execution (bench/e2e.js profile).
    const update = plan.updates.get(id) ?? {};
    Object.assign(update, set);
    update.state = to;
    update.reason = reason;
    plan.updates.set(id, update);
    if (hostId !== undefined) plan.hostOf.set(id, hostId);
    return true;
  };

  for (const op of ops) {
    if (op.hostId !== undefined && op.hostId !== null) refuseForeign(current, op, op.hostId, plan);
    switch (op.kind) {
      case 'claim': {
        const ids = op.ids === 'all_queued' ? (queuedByHost.get(op.hostId) ?? []) : op.ids;
        // A held fan-out execution waits for a slot, however it is asked for.
        const claimed = ids.filter((id) => current.get(id)?.held !== 1 && move(id, 'dispatched', null, ['queued'], { dispatched_at: now, session_id: op.sessionId, node_id: op.nodeId }, op.hostId));
        plan.results.push(claimed.map((id) => ({ id, spec: JSON.parse(current.get(id)!.spec) as ExecutionSpec })));
        break;
      }
      case 'started':
        plan.results.push(move(op.executionId, 'running', null, ['dispatched'], { started_at: op.startedAt }, op.hostId));
        break;
      case 'result':
        plan.results.push(recordResult(current.get(op.result.executionId), op, move, plan));
        break;
      case 'move': {
        const set = moveSets(op, now);
        plan.results.push(op.ids.filter((id) => move(id, op.to, op.reason, op.from ?? statesBefore(op.to), set, op.hostId)));
        break;
      }
      case 'place':
        plan.results.push(place(current.get(op.id), op, plan));
        break;
      case 'runbook':
        plan.results.push(runbookRead(current, op, plan, move, now));
        break;
    }
  }
  rebalanceFanouts(current, plan, move, now);
  return plan;
}

/** What a move writes besides the state: a claim by the service (nodeId) is held by its node, as an agent's session is. */
function moveSets(op: Extract<LedgerOp, { kind: 'move' }>, now: number): Partial<ExecutionRow> {
  if (op.to === 'queued') return { session_id: null, node_id: null };
  if (op.to === 'dispatched') return op.nodeId ? { dispatched_at: now, node_id: op.nodeId } : {};
  if (op.to === 'running') return { started_at: now };
  return isActive(op.to) ? {} : { finished_at: now };
}

/** Every fan-out that had an execution end in this batch: release held ones, or stop after maxErrors. */
function rebalanceFanouts(current: Map<string, Current>, plan: Plan, move: Mover, now: number): void {
  const ended = new Set<string>();
  for (const t of plan.transitions) {
    const row = current.get(t.execution_id)!;
    if (isTerminal(t.to_state as ExecutionState) && (row.fanout_max_concurrency !== null || row.fanout_max_errors !== null)) ended.add(row.event_id);
  }
  for (const eventId of ended) {
    // A cloud tag filter's own run shares the event with the instances' runs, outside their fan-out.
    const members = [...current.values()].filter((row) => row.event_id === eventId && (row.fanout_max_concurrency !== null || row.fanout_max_errors !== null));
    const decision = rebalance(members);
    if (decision.kind === 'stop') {
      for (const id of decision.cancel) move(id, 'cancelled', decision.reason, ['queued'], { finished_at: now, held: 0 });
      continue;
    }
    for (const id of decision.release) {
      const row = current.get(id)!;
      row.held = 0;
      // Its wait for an agent starts now: the time it was held is not counted against its expiry.
      const expiresAt = now + (row.expires_at - row.queued_at);
      plan.updates.set(id, { ...plan.updates.get(id), held: 0, reason: null, expires_at: expiresAt });
      // A run by the service needs no push: the executor looks again as each of its runs ends.
      if (row.host_id !== null) plan.released.push({ id, hostId: row.host_id });
    }
  }
}

/** Lists the executions a host's operation names that are not that host's. */
function refuseForeign(current: Map<string, Current>, op: LedgerOp, hostId: string, plan: Plan): void {
  for (const id of namedBy(op)) {
    if (current.get(id)?.host_id !== hostId) plan.refused.push({ hostId, executionId: id, kind: op.kind });
  }
}

function namedBy(op: LedgerOp): string[] {
  switch (op.kind) {
    case 'claim':
      return op.ids === 'all_queued' ? [] : op.ids;
    case 'started':
      return [op.executionId];
    case 'result':
      return [op.result.executionId];
    case 'move':
      return op.ids;
    case 'place':
      return [op.id];
    case 'runbook':
      return [];
  }
}

/**
 * Moves a run that has not been sent to its host to another host, while it is still queued on the
 * host it was placed on: a run an agent took, or one another node moved already, stays where it is.
 * The script learns its new host (PITCREW_HOSTNAME); the move is in the run's history.
 */
function place(row: Current | undefined, op: Extract<LedgerOp, { kind: 'place' }>, plan: Plan): boolean {
  if (!row || row.state !== 'queued' || row.held !== 0 || row.host_id !== op.fromHostId) return false;
  const spec = JSON.parse(row.spec) as ExecutionSpec;
  if (spec.context.PITCREW_HOSTNAME !== undefined) spec.context.PITCREW_HOSTNAME = op.to.hostname;
  row.host_id = op.to.hostId;
  row.spec = JSON.stringify(spec);
  plan.updates.set(op.id, { ...plan.updates.get(op.id), host_id: op.to.hostId, hostname: op.to.hostname, host_key: op.to.hostKey, spec: row.spec, session_id: null, reason: op.reason });
  // The UPDATE holds only while the row is still on the host it is moved from.
  plan.hostOf.set(op.id, op.fromHostId);
  plan.transitions.push({ execution_id: op.id, from_state: 'queued', to_state: 'queued', reason: op.reason });
  plan.released.push({ id: op.id, hostId: op.to.hostId });
  return true;
}

/** A git runbook read applied to the runs still waiting for it: released with their script, or failed. */
function runbookRead(current: Map<string, Current>, op: Extract<LedgerOp, { kind: 'runbook' }>, plan: Plan, move: Mover, now: number): string[] {
  // Every run of the event at once, so a fan-out runs one commit's file, however many hosts it has.
  const rows = [...current.values()].filter((row) => row.event_id === op.eventId);
  const outcome = applyRunbookRead(rows, op.read, now);
  for (const [id, set] of outcome.updates) {
    Object.assign(current.get(id)!, set);
    plan.updates.set(id, { ...plan.updates.get(id), ...set });
  }
  if (outcome.failed !== undefined) {
    const reason = outcome.failed;
    return outcome.ids.filter((id) => move(id, 'failed', reason, ['queued'], { finished_at: now }));
  }
  for (const row of outcome.released) if (row.host_id !== null) plan.released.push({ id: row.id, hostId: row.host_id });
  return outcome.ids;
}

type Mover = (id: string, to: ExecutionState, reason: string | null, allowed: readonly ExecutionState[], set: Partial<ExecutionRow>, hostId?: string) => boolean;

function recordResult(row: Current | undefined, op: Extract<LedgerOp, { kind: 'result' }>, move: Mover, plan: Plan): Recorded {
  const { result } = op;
  if (!row || row.host_id !== op.hostId) return undefined;
  const ending = endingOf(result);
  // A run that ended before its agent said it started (an agent tells a short run's start in its
  // result, and a result can come before a started sent on a connection since lost): its history
  // still shows it running.
  if (row.state === 'dispatched' && result.startedAt !== null) move(result.executionId, 'running', null, ['dispatched'], { started_at: result.startedAt }, op.hostId ?? undefined);
  const moved = move(result.executionId, ending.state, ending.reason, ['dispatched', 'running'], {
    exit_code: result.exitCode,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    stdout_truncated: result.stdoutTruncated ? 1 : 0,
    stderr_truncated: result.stderrTruncated ? 1 : 0,
    started_at: row.started_at ?? result.startedAt,
    finished_at: result.finishedAt,
  }, op.hostId ?? undefined);
  if (moved) {
    row.finished_at = result.finishedAt;
    for (const artifact of result.artifacts) plan.artifacts.push({ execution_id: result.executionId, ...artifact });
    return { state: ending.state, late: false };
  }
  // The same result again: the agent offers what the service has not confirmed, and answers a
  // repeated delivery with what it knows; both can reach us after it was recorded.
  if (row.finished_at === result.finishedAt) return { state: row.state as ExecutionState, late: false };
  // Already ended (lost while the service was away, or expired): keep what the host reports
  // beside it, without changing a terminal state that was already reported.
  if (row.late_result === null) {
    const late = { ending: result.ending, exitCode: result.exitCode, signal: result.signal, finishedAt: result.finishedAt, stdout: result.stdout, stderr: result.stderr, reason: ending.reason };
    row.late_result = JSON.stringify(late);
    plan.updates.set(row.id, { ...plan.updates.get(row.id), late_result: row.late_result });
    if (op.hostId !== null) plan.hostOf.set(row.id, op.hostId);
  }
  return { state: row.state as ExecutionState, late: true };
}

function isActive(state: ExecutionState): boolean {
  return ACTIVE_STATES.includes(state);
}
