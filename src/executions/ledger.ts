import type { FastifyBaseLogger } from 'fastify';
import { CompiledQuery, type Kysely } from 'kysely';
import type { ExecutionResult } from './result.js';
import { inBatchTransaction, type Committed } from '../store/batch.js';
import type { Dialect } from '../store/database.js';
import type { Durability } from '../store/durability.js';
import { GroupCommit } from '../store/group-commit.js';
import { newId } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import { Statements } from '../store/statements.js';
import type { RunbookRead } from './runbook-read.js';
import { planLedger, type Claimed, type Current, type LedgerOp, type LedgerResult, type Plan, type Recorded } from './plan.js';
import type { ExecutionState } from './states.js';

export type { Claimed, Recorded } from './plan.js';

export interface StateChange {
  executionId: string;
  state: ExecutionState;
}

/** Rows another domain writes in the transaction that changes executions (notify's outbox of ended ones, incidents' fixes). */
export interface LedgerOutbox {
  writes(transitions: Plan['transitions'], now: number): CompiledQuery[];
  /** After the commit is durable, when those statements wrote rows. */
  written(): void;
}


export interface LedgerHooks {
  /** Told of every state change after its commit (live views, notifications). */
  onChange(changes: StateChange[]): void;
  /** Told of queued executions to dispatch after the commit: held fan-out ones a freed slot released, runs moved to another host. */
  onReleased?(executions: Array<{ id: string; hostId: string }>): void;
  /** Each told after the commit when its own statements wrote rows. */
  outboxes?: LedgerOutbox[];
  /** Where an agent naming executions that are not its host's is reported. */
  logger: Pick<FastifyBaseLogger, 'warn'>;
}

/**
 * The ledger as one host's agent sees it: every operation carries the host, so it changes only
 * that host's executions (planLedger refuses the rest, and each UPDATE is conditional on the
 * host). An agent session holds this and nothing wider.
 */
export interface HostLedger {
  readonly hostId: string;
  claim(ids: string[] | 'all_queued', session: { sessionId: string; nodeId: string }): Promise<Claimed[]>;
  started(executionId: string, startedAt: number, mayWaitMs?: number): Promise<boolean>;
  result(result: ExecutionResult): Promise<Recorded>;
  move(ids: string[], to: ExecutionState, reason: string, from: ExecutionState[]): Promise<string[]>;
}

/**
 * ExecutionLedger.forHost: an object of two fields whose methods are the class's, not four closures
 * and their contexts; every agent connection keeps one for its life (bench/README.md, session 36: heap41).
 */
class LedgerOfHost implements HostLedger {
  constructor(
    private readonly ledger: ExecutionLedger,
    readonly hostId: string,
  ) {}

  claim(ids: string[] | 'all_queued', session: { sessionId: string; nodeId: string }): Promise<Claimed[]> {
    return this.ledger.claim(this.hostId, ids, session);
  }

  started(executionId: string, startedAt: number, mayWaitMs?: number): Promise<boolean> {
    return this.ledger.started(this.hostId, executionId, startedAt, mayWaitMs);
  }

  result(result: ExecutionResult): Promise<Recorded> {
    return this.ledger.result(this.hostId, result);
  }

  move(ids: string[], to: ExecutionState, reason: string, from: ExecutionState[]): Promise<string[]> {
    return this.ledger.moveOfHost(this.hostId, ids, to, reason, from);
  }
}

const CURRENT_COLUMNS = ['id', 'state', 'host_id', 'started_at', 'finished_at', 'late_result', 'spec', 'event_id', 'held', 'fanout_max_concurrency', 'fanout_max_errors', 'queued_at', 'expires_at', 'awaiting_runbook'] as const;
// The ledger's reads, written as text (store/statements.ts): they run for every batch of agent reports.
const SELECT_CURRENT = `select ${CURRENT_COLUMNS.map((c) => `"${c}"`).join(', ')} from "executions"`;

/**
 * Every change of an execution's state that agents and sweepers cause, committed with group
 * commit: many agents reporting at once share transactions. A batch is two trips to the database:
 * read the rows it touches (locked on PostgreSQL), then write what planLedger() decided, with the
 * commit. Each change is conditional on the current state, so a repeat or a race changes nothing.
 */
export class ExecutionLedger {
  private readonly queue: GroupCommit<LedgerOp, LedgerResult>;
  private readonly statements: Statements;
  private readonly outboxes: LedgerOutbox[];

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly durability: Durability,
    private readonly hooks: LedgerHooks,
  ) {
    this.statements = new Statements(dialect);
    this.outboxes = hooks.outboxes ?? [];
    this.queue = new GroupCommit((ops) => this.commit(ops), { maxBatch: 256, maxQueued: 100_000, name: 'execution ledger' });
  }

  /** What an agent session of this host may do: nothing to another host's executions. */
  forHost(hostId: string): HostLedger {
    return new LedgerOfHost(this, hostId);
  }

  /** queued → dispatched for this session; returns what to send to the agent. */
  claim(hostId: string, ids: string[] | 'all_queued', session: { sessionId: string; nodeId: string }): Promise<Claimed[]> {
    return this.queue.submit({ kind: 'claim', hostId, ids, ...session }) as Promise<Claimed[]>;
  }

  /** dispatched → running. `mayWaitMs`: how long the change may wait to share a commit (GroupCommit.submit). */
  started(hostId: string, executionId: string, startedAt: number, mayWaitMs = 0): Promise<boolean> {
    return this.queue.submit({ kind: 'started', hostId, executionId, startedAt }, mayWaitMs) as Promise<boolean>;
  }

  /** Stores an agent's result; undefined when the execution is not this host's. */
  result(hostId: string, result: ExecutionResult): Promise<Recorded> {
    return this.queue.submit({ kind: 'result', hostId, result }) as Promise<Recorded>;
  }

  /** A change of one host's executions only (HostLedger.move): the others named are left alone. */
  moveOfHost(hostId: string, ids: string[], to: ExecutionState, reason: string, from: ExecutionState[]): Promise<string[]> {
    return this.submitMove({ kind: 'move', ids, to, reason, from, hostId });
  }

  /** A change the service decides (sweeper, cancel, connection ended): any execution of any host. */
  move(ids: string[], to: ExecutionState, reason: string, from?: ExecutionState[]): Promise<string[]> {
    return this.submitMove({ kind: 'move', ids, to, reason, from });
  }

  /** Moves a queued run off a host that went offline (executions/placement.ts); true when it moved. */
  place(op: Omit<Extract<LedgerOp, { kind: 'place' }>, 'kind'>): Promise<boolean> {
    return this.queue.submit({ kind: 'place', ...op }) as Promise<boolean>;
  }

  /** queued → dispatched for runs the service makes itself, held by this node as a session holds an agent's. */
  claimForService(ids: string[], nodeId: string, reason: string): Promise<string[]> {
    return this.submitMove({ kind: 'move', ids, to: 'dispatched', reason, from: ['queued'], nodeId });
  }

  /** One event's git runbook read, for all its waiting runs: released to dispatch (told through onReleased), or failed; the ids changed. */
  runbookRead(eventId: string, read: RunbookRead): Promise<string[]> {
    return this.queue.submit({ kind: 'runbook', eventId, read }) as Promise<string[]>;
  }

  /** A run by the service ended with a process's result (the CLI Machine): stored as an agent's is. */
  serviceResult(result: ExecutionResult): Promise<Recorded> {
    return this.queue.submit({ kind: 'result', hostId: null, result }) as Promise<Recorded>;
  }

  private submitMove(op: Extract<LedgerOp, { kind: 'move' }>): Promise<string[]> {
    if (op.ids.length === 0) return Promise.resolve([]);
    return this.queue.submit(op) as Promise<string[]>;
  }

  drain(): Promise<void> {
    return this.queue.drain();
  }

  private async commit(ops: LedgerOp[]): Promise<Committed<LedgerResult[]>> {
    const now = Date.now();
    let outboxesWritten: LedgerOutbox[] = [];
    const { value: plan, durable } = await inBatchTransaction(this.db, this.durability, async (tx) => {
      const { reads, ending } = this.readQueries(ops);
      const found = await tx.begin(reads.map((r) => r.query));
      const rows = new Map<string, Current>();
      const queuedByHost = new Map<string, string[]>();
      found.forEach((result, i) => {
        const batch = result.rows as Current[];
        for (const row of batch) rows.set(row.id, row);
        const host = reads[i]!.queuedOfHost;
        if (host) queuedByHost.set(host, batch.map((row) => row.id));
      });
      const fanouts = this.fanoutQueries(ending, rows);
      const fanoutRows = fanouts.length > 0 ? (await tx.read(fanouts)).flatMap((result) => result.rows as Current[]) : [];
      for (const row of fanoutRows) rows.set(row.id, row);
      const planned = planLedger([...rows.values()], queuedByHost, ops, now);
      const outboxWrites = planned.transitions.length > 0 ? this.outboxes.map((outbox) => outbox.writes(planned.transitions, now)) : [];
      const own = this.writes(planned, now);
      const results = await tx.commit([...own, ...outboxWrites.flat()]);
      let at = own.length;
      outboxesWritten = this.outboxes.filter((_outbox, i) => {
        const rows = results.slice(at, (at += outboxWrites[i]?.length ?? 0)).reduce((sum, result) => sum + Number(result.numAffectedRows ?? 0n), 0);
        return rows > 0;
      });
      return planned;
    });
    this.reportRefused(plan.refused);
    const changes = plan.transitions.map((t) => ({ executionId: t.execution_id, state: t.to_state as ExecutionState }));
    return {
      value: plan.results,
      durable: durable.then(() => {
        if (changes.length > 0) this.hooks.onChange(changes);
        if (plan.released.length > 0) this.hooks.onReleased?.(plan.released);
        for (const outbox of outboxesWritten) outbox.written();
      }),
    };
  }

  /** One warning per host and kind of report: the host, and the executions it had no right to name. */
  private reportRefused(refused: Plan['refused']): void {
    const byHost = new Map<string, { hostId: string; report: string; executionIds: string[] }>();
    for (const { hostId, executionId, kind } of refused) {
      const key = `${hostId} ${kind}`;
      const entry = byHost.get(key) ?? { hostId, report: kind, executionIds: [] };
      entry.executionIds.push(executionId);
      byHost.set(key, entry);
    }
    for (const entry of byHost.values()) {
      this.hooks.logger.warn({ ...entry, executionIds: entry.executionIds.slice(0, 20), count: entry.executionIds.length }, 'an agent named executions that are not its host’s (another host’s, another tenant’s or unknown); nothing was changed');
    }
  }

  /** The rows the batch touches: named ones, and each claiming host's queued work; and the named ones it may end. */
  private readQueries(ops: LedgerOp[]): { reads: Array<{ query: CompiledQuery; queuedOfHost?: string }>; ending: Set<string> } {
    const ids = new Set<string>();
    const hosts = new Set<string>();
    const ending = new Set<string>();
    const events = new Set<string>();
    for (const op of ops) {
      if (op.kind === 'claim') {
        if (op.ids === 'all_queued') hosts.add(op.hostId);
        else op.ids.forEach((id) => ids.add(id));
      } else if (op.kind === 'started') {
        ids.add(op.executionId);
      } else if (op.kind === 'place') {
        ids.add(op.id);
      } else if (op.kind === 'runbook') {
        events.add(op.eventId);
      } else {
        for (const id of op.kind === 'move' ? op.ids : [op.result.executionId]) {
          ids.add(id);
          ending.add(id);
        }
      }
    }
    const forUpdate = this.forUpdate();
    const reads: Array<{ query: CompiledQuery; queuedOfHost?: string }> = [];
    // A move can name a whole fan-out: as many reads as the database's parameter limit needs.
    for (const some of this.statements.inLists([...ids])) {
      reads.push({ query: CompiledQuery.raw(`${SELECT_CURRENT} where "id" in (${this.statements.list(some.length)})${forUpdate}`, some) });
    }
    for (const some of this.statements.inLists([...events])) {
      // An event whose git runbook was read: all its runs, those waiting and its fan-out's others.
      reads.push({ query: CompiledQuery.raw(`${SELECT_CURRENT} where "event_id" in (${this.statements.list(some.length)})${forUpdate}`, some) });
    }
    for (const host of hosts) {
      const queued = `${SELECT_CURRENT} where "host_id" = ${this.statements.list(1)} and "state" = 'queued' and "held" = 0 order by "id" limit 1000${forUpdate}`;
      reads.push({ query: CompiledQuery.raw(queued, [host]), queuedOfHost: host });
    }
    return { reads, ending };
  }

  /**
   * Whole fan-outs whose executions may end here (planLedger releases or stops the rest), read
   * only when a row read is in one: a trip more then, and a read less for every other batch.
   */
  private fanoutQueries(ending: Set<string>, rows: Map<string, Current>): CompiledQuery[] {
    const events = new Set<string>();
    for (const id of ending) {
      const row = rows.get(id);
      if (row && (row.fanout_max_concurrency !== null || row.fanout_max_errors !== null)) events.add(row.event_id);
    }
    const forUpdate = this.forUpdate();
    return this.statements.inLists([...events]).map((some) => CompiledQuery.raw(`${SELECT_CURRENT} where "event_id" in (${this.statements.list(some.length)})${forUpdate}`, some));
  }

  /** PostgreSQL: lock the rows, so the state read is the state replaced. SQLite has one writer. */
  private forUpdate(): string {
    return this.dialect === 'postgres' ? ' for update' : '';
  }

  private writes(plan: Plan, now: number): CompiledQuery[] {
    const writes: CompiledQuery[] = [];
    for (const [id, set] of plan.updates) {
      // A host's change holds only while the row is that host's, in the database as in the plan.
      const hostId = plan.hostOf.get(id);
      writes.push(this.statements.updateById('executions', set, id, hostId === undefined ? {} : { host_id: hostId }));
    }
    if (plan.transitions.length > 0) {
      writes.push(...this.statements.inserts('execution_transitions', plan.transitions.map((t) => ({ id: newId(now), at: now, ...t }))));
    }
    if (plan.artifacts.length > 0) {
      const rows = plan.artifacts.map((a) => ({ id: newId(now), execution_id: a.execution_id, name: a.name, size: Buffer.byteLength(a.base64, 'base64'), content: a.base64 }));
      writes.push(this.db.insertInto('execution_artifacts').values(rows).compile());
    }
    return writes;
  }
}
