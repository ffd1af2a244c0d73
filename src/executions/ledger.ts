import type { Kysely, Transaction } from 'kysely';
import type { ExecutionResult } from '../agents/protocol.js';
import type { Dialect } from '../store/database.js';
import { GroupCommit } from '../store/group-commit.js';
import { newId } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import { moveExecutions, type ExecutionSpec } from './repository.js';
import { endingOf, type ExecutionState } from './states.js';

export interface Claimed {
  id: string;
  spec: ExecutionSpec;
}

export type Recorded = { state: ExecutionState; late: boolean } | undefined;

export interface StateChange {
  executionId: string;
  state: ExecutionState;
}

type Op =
  | { kind: 'claim'; hostId: string; ids: string[] | 'all_queued'; sessionId: string; nodeId: string }
  | { kind: 'started'; hostId: string; executionId: string; startedAt: number }
  | { kind: 'result'; hostId: string; result: ExecutionResult }
  | { kind: 'move'; ids: string[]; to: ExecutionState; reason: string; from?: ExecutionState[] };

type OpResult = Claimed[] | boolean | Recorded | string[];

/**
 * Every change of an execution's state that agents and sweepers cause, committed with group
 * commit: many agents reporting at once share transactions. Each change is conditional on the
 * current state (moveExecutions), so a repeat or a race changes nothing twice.
 */
export class ExecutionLedger {
  private readonly queue: GroupCommit<Op, OpResult>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /** Told of every state change after its commit (live views, notifications). */
    private readonly onChange: (changes: StateChange[]) => void,
  ) {
    this.queue = new GroupCommit((ops) => this.commit(ops), { maxBatch: 256, maxQueued: 100_000, name: 'execution ledger' });
  }

  /** queued → dispatched for this session; returns what to send to the agent. */
  claim(hostId: string, ids: string[] | 'all_queued', session: { sessionId: string; nodeId: string }): Promise<Claimed[]> {
    return this.queue.submit({ kind: 'claim', hostId, ids, ...session }) as Promise<Claimed[]>;
  }

  started(hostId: string, executionId: string, startedAt: number): Promise<boolean> {
    return this.queue.submit({ kind: 'started', hostId, executionId, startedAt }) as Promise<boolean>;
  }

  /** Stores an agent's result; undefined when the execution is not this host's. */
  result(hostId: string, result: ExecutionResult): Promise<Recorded> {
    return this.queue.submit({ kind: 'result', hostId, result }) as Promise<Recorded>;
  }

  move(ids: string[], to: ExecutionState, reason: string, from?: ExecutionState[]): Promise<string[]> {
    return this.queue.submit({ kind: 'move', ids, to, reason, from }) as Promise<string[]>;
  }

  drain(): Promise<void> {
    return this.queue.drain();
  }

  private async commit(ops: Op[]): Promise<OpResult[]> {
    const changes: StateChange[] = [];
    const results = await this.db.transaction().execute(async (tx) => {
      const out: OpResult[] = [];
      for (const op of ops) out.push(await this.apply(tx, op, changes));
      return out;
    });
    if (changes.length > 0) this.onChange(changes);
    return results;
  }

  private async apply(tx: Transaction<Database>, op: Op, changes: StateChange[]): Promise<OpResult> {
    const now = Date.now();
    const lock = this.dialect === 'postgres';
    const note = (ids: string[], state: ExecutionState) => {
      for (const executionId of ids) changes.push({ executionId, state });
      return ids;
    };
    switch (op.kind) {
      case 'claim': {
        const ids = op.ids === 'all_queued' ? await queuedFor(tx, op.hostId) : op.ids;
        const moved = await moveExecutions(tx, { ids, to: 'dispatched', reason: null, at: now, hostId: op.hostId, from: ['queued'], set: { dispatched_at: now, session_id: op.sessionId, node_id: op.nodeId } }, lock);
        note(moved, 'dispatched');
        if (moved.length === 0) return [];
        const rows = await tx.selectFrom('executions').select(['id', 'spec']).where('id', 'in', moved).orderBy('id').execute();
        return rows.map((row) => ({ id: row.id, spec: JSON.parse(row.spec) as ExecutionSpec }));
      }
      case 'started': {
        const moved = await moveExecutions(tx, { ids: [op.executionId], to: 'running', reason: null, at: now, hostId: op.hostId, from: ['dispatched'], set: { started_at: op.startedAt } }, lock);
        return note(moved, 'running').length === 1;
      }
      case 'result':
        return recordResult(tx, op.hostId, op.result, lock, now, changes);
      case 'move':
        return note(await moveExecutions(tx, { ids: op.ids, to: op.to, reason: op.reason, at: now, from: op.from, set: op.to === 'queued' ? { session_id: null, node_id: null } : finishedAt(op.to, now) }, lock), op.to);
    }
  }
}

async function queuedFor(tx: Transaction<Database>, hostId: string): Promise<string[]> {
  const rows = await tx.selectFrom('executions').select('id').where('host_id', '=', hostId).where('state', '=', 'queued').orderBy('id').limit(1000).execute();
  return rows.map((row) => row.id);
}

function finishedAt(state: ExecutionState, now: number): { finished_at?: number } {
  return ['queued', 'dispatched', 'running'].includes(state) ? {} : { finished_at: now };
}

async function recordResult(tx: Transaction<Database>, hostId: string, result: ExecutionResult, lock: boolean, now: number, changes: StateChange[]): Promise<Recorded> {
  const current = await tx.selectFrom('executions').select(['id', 'state', 'started_at', 'late_result']).where('id', '=', result.executionId).where('host_id', '=', hostId).executeTakeFirst();
  if (!current) return undefined;
  const ending = endingOf(result);
  const moved = await moveExecutions(tx, {
    ids: [result.executionId],
    to: ending.state,
    reason: ending.reason,
    at: now,
    hostId,
    from: ['dispatched', 'running'],
    set: {
      exit_code: result.exitCode,
      signal: result.signal,
      stdout: result.stdout,
      stderr: result.stderr,
      stdout_truncated: result.stdoutTruncated ? 1 : 0,
      stderr_truncated: result.stderrTruncated ? 1 : 0,
      started_at: current.started_at ?? result.startedAt,
      finished_at: result.finishedAt,
    },
  }, lock);
  if (moved.length === 1) {
    changes.push({ executionId: result.executionId, state: ending.state });
    if (result.artifacts.length > 0) {
      await tx
        .insertInto('execution_artifacts')
        .values(result.artifacts.map((a) => ({ id: newId(now), execution_id: result.executionId, name: a.name, size: Buffer.byteLength(a.base64, 'base64'), content: a.base64 })))
        .execute();
    }
    return { state: ending.state, late: false };
  }
  // Already ended (lost while the service was away, or expired): keep what the host reports
  // beside it, without changing a terminal state that was already reported.
  if (current.late_result === null) {
    const late = { ending: result.ending, exitCode: result.exitCode, signal: result.signal, finishedAt: result.finishedAt, stdout: result.stdout, stderr: result.stderr, reason: ending.reason };
    await tx.updateTable('executions').set({ late_result: JSON.stringify(late) }).where('id', '=', result.executionId).execute();
  }
  return { state: current.state as ExecutionState, late: true };
}
