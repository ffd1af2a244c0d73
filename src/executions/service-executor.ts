import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database, ExecutionRow } from '../store/schema.js';
import type { Recorded } from './plan.js';
import type { ExecutionResult } from './result.js';
import type { ExecutionState } from './states.js';
import { preparedQuery } from '../store/prepared.js';

/**
 * How a run by the service ended: a state and its reason, or a process's result (exit code and
 * output, stored as an agent's is; `skippedEnv`: payload names it was not given).
 */
export type RunEnd = RunState | { result: ExecutionResult; skippedEnv?: string[] };
export interface RunState {
  state: Extract<ExecutionState, 'succeeded' | 'failed'>;
  reason: string;
}

/** Live output of a run in process, for people watching it (executions/live.ts). */
export type OutputSink = (stream: 'stdout' | 'stderr', chunk: string) => void;

/** A place for one run (release it when the run ends), or undefined: none free now, it stays queued. */
export type Admission = (() => void) | undefined;

/**
 * How the service runs one kind's executions (the kinds of actions/ that run on no host).
 *
 * - `in_process`: the work happens in this process (a cloud API call). The execution is `running`,
 *   durably, before `run` begins; a node that dies meanwhile leaves it `lost`, never run again
 *   (executions/sweeper.ts), as an agent's run is.
 * - `hand_off`: the work is handed to a durable queue of its own (the notify outbox), keyed by the
 *   execution id so that a second hand-off changes nothing. The execution stays `dispatched` until
 *   `settle` reads its end there; one whose node died before the hand-off is queued again.
 */
export type ServiceRunner =
  /** `close`: lets go of what the runner keeps between runs (connections), once the executor stopped. */
  | { kind: string; mode: 'in_process'; run(execution: ExecutionRow, signal: AbortSignal, output: OutputSink): Promise<RunEnd>; admit?(execution: ExecutionRow): Admission; close?(): void }
  | { kind: string; mode: 'hand_off'; handOff(execution: ExecutionRow): Promise<RunState | { handedOff: string }>; settle(): Promise<Array<RunState & { id: string }>> };

/** The ledger's conditional moves the executor makes. */
export interface ServiceLedger {
  claimForService(ids: string[], nodeId: string, reason: string): Promise<string[]>;
  move(ids: string[], to: ExecutionState, reason: string, from: ExecutionState[]): Promise<string[]>;
  /** A run's result with its output, as an agent's is stored (running → its end). */
  serviceResult(result: ExecutionResult): Promise<Recorded>;
}

export interface ServiceExecutorDeps {
  db: Kysely<Database>;
  ledger: ServiceLedger;
  runners: readonly ServiceRunner[];
  nodeId: string;
  logger: FastifyBaseLogger;
  /** A pass at least this often; a commit that queued service work wakes it at once. */
  pollMs: number;
  /** Where live output of runs in process goes. */
  output?: (executionId: string, stream: 'stdout' | 'stderr', chunk: string) => void;
  clock?: () => number;
}

/** Why a run was told to stop: its timeout, a person's cancel (anything else is the service stopping). */
const TIMED_OUT = new Error('the run passed its timeout');
const CANCELLED = new Error('cancelled on request');

/**
 * Queued runs looked at per pass, oldest first within each tenant: a tenant whose runs wait for
 * room (its CLI cap) shows only its oldest few, so they never hide another tenant's work.
 */
const PER_TENANT_PASS = 20;
const PER_PASS = 1000;

/**
 * Runs the executions the service makes itself, on any node: each is claimed by one node (queued →
 * dispatched, held by that node), run by its kind's runner, ended through the ledger, and timed
 * out after its spec's timeoutSeconds.
 */
export class ServiceExecutor {
  private readonly runners: ReadonlyMap<string, ServiceRunner>;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> = Promise.resolve();
  private again = false;
  private stopped = true;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly aborts = new Map<string, AbortController>();
  private readonly unknownKinds = new Set<string>();

  constructor(private readonly deps: ServiceExecutorDeps) {
    this.runners = new Map(deps.runners.map((runner) => [runner.kind, runner]));
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.deps.pollMs).unref();
    this.wake();
  }

  /** Runs a pass now, or right after the one under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.again) return;
    this.again = true;
    this.pass = this.pass.then(async () => {
      this.again = false;
      if (this.stopped) return;
      await this.runOnce().catch((error: unknown) => this.deps.logger.error({ err: error }, 'service executor pass failed; next one in a moment'));
    });
  }

  /** Stops taking work; runs in process are told to stop and awaited (a stop mid-run leaves them lost). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const abort of this.aborts.values()) abort.abort();
    await this.pass;
    await Promise.all(this.inFlight);
    for (const runner of this.deps.runners) if (runner.mode === 'in_process') runner.close?.();
  }

  /** Stops a run in process on this node (a person's cancel); false when it does not run here. */
  cancel(executionId: string): boolean {
    const abort = this.aborts.get(executionId);
    abort?.abort(CANCELLED);
    return abort !== undefined;
  }

  /** One pass: ends of hand-offs, timeouts, then new work. */
  async runOnce(): Promise<void> {
    for (const runner of this.runners.values()) {
      if (runner.mode !== 'hand_off') continue;
      for (const end of await runner.settle()) await this.deps.ledger.move([end.id], end.state, end.reason, ['dispatched']);
    }
    await this.timeOut();
    await this.claimQueued();
  }

  private now(): number {
    return this.deps.clock?.() ?? Date.now();
  }

  private async claimQueued(): Promise<void> {
    const queued = await this.queuedByTenant();
    // A run whose runner has no place for it now (a tenant's concurrency cap) stays queued.
    const admitted = new Map<string, () => void>();
    for (const row of queued) {
      const runner = this.runnerOf(row);
      if (!runner) continue;
      const release = runner.mode === 'in_process' && runner.admit ? runner.admit(row) : () => undefined;
      if (release) admitted.set(row.id, release);
    }
    if (admitted.size === 0) return;
    const claimed = new Set(await this.deps.ledger.claimForService([...admitted.keys()], this.deps.nodeId, 'taken by the service to run').catch((error: unknown) => {
      for (const release of admitted.values()) release();
      throw error;
    }));
    for (const row of queued) {
      const release = admitted.get(row.id);
      if (!release) continue;
      if (!claimed.has(row.id)) {
        release(); // another node took it
        continue;
      }
      const running = this.runOne(this.runnerOf(row)!, row)
        .catch((error: unknown) => this.deps.logger.error({ err: error, executionId: row.id }, 'a run by the service failed to record its end; the sweeper settles it'))
        .finally(() => {
          release();
          this.wake();
        });
      this.inFlight.add(running);
      void running.finally(() => this.inFlight.delete(running));
    }
  }

  /** Every tenant's oldest queued runs by the service (window functions: SQLite 3.25+, PostgreSQL). */
  private async queuedByTenant(): Promise<ExecutionRow[]> {
    return queuedForService(this.deps.db);
  }

  private async runOne(runner: ServiceRunner, row: ExecutionRow): Promise<void> {
    const { ledger } = this.deps;
    if (runner.mode === 'hand_off') {
      const step = await runner.handOff(row).catch((error: unknown) => ({ state: 'failed' as const, reason: `the service could not hand it off: ${errorText(error)}` }));
      if ('state' in step) await ledger.move([row.id], step.state, step.reason, ['dispatched']);
      return;
    }
    // Stoppable from before it is running: a reader can see `running` once it commits, before the
    // ledger's sync ends, and a person's cancel then must find it (cancel() below).
    const abort = new AbortController();
    this.aborts.set(row.id, abort);
    // Durable before the work starts: a crash from here on leaves it lost, never run twice.
    const started = await ledger.move([row.id], 'running', 'running on the service', ['dispatched']).catch((error: unknown) => {
      this.aborts.delete(row.id);
      throw error;
    });
    if (started.length === 0) {
      this.aborts.delete(row.id);
      return;
    }
    const timeoutMs = timeoutSecondsOf(row) * 1000;
    const timer = setTimeout(() => abort.abort(TIMED_OUT), timeoutMs).unref();
    const output: OutputSink = (stream, chunk) => this.deps.output?.(row.id, stream, chunk);
    try {
      const end = await runner.run(row, abort.signal, output).catch((error: unknown) => ({ state: 'failed' as const, reason: errorText(error) }));
      if ('result' in end && end.skippedEnv?.length) this.deps.logger.warn({ executionId: row.id, names: end.skippedEnv }, 'left out payload variables a service run does not take');
      await this.recordEnd(row, end, abort.signal, timeoutMs);
    } finally {
      clearTimeout(timer);
      this.aborts.delete(row.id);
    }
  }

  /** Its end as the run reports it; past its timeout or cancelled, that (with what it printed); the service stopping: lost. */
  private async recordEnd(row: ExecutionRow, end: RunEnd, signal: AbortSignal, timeoutMs: number): Promise<void> {
    const { ledger } = this.deps;
    const stop = !signal.aborted ? undefined
      : signal.reason === TIMED_OUT ? { ending: 'timed_out' as const, reason: `ran past its timeout of ${timeoutMs / 1000} s and was stopped` }
        : signal.reason === CANCELLED ? { ending: 'cancelled' as const, reason: 'cancelled on request; it was stopped' }
          : undefined;
    if (signal.aborted && !stop) {
      await ledger.move([row.id], 'lost', 'the service stopped while it ran; it was not re-run', ['running']);
      return;
    }
    if ('result' in end) {
      await ledger.serviceResult(stop ? { ...end.result, ending: stop.ending, reason: `${stop.reason}; its process group was killed` } : end.result);
      return;
    }
    if (stop) await ledger.move([row.id], stop.ending, stop.reason, ['running']);
    else await ledger.move([row.id], end.state, end.reason, ['running']);
  }

  /** Hand-offs that never settled end `timed_out` after their spec's timeoutSeconds since dispatch. */
  private async timeOut(): Promise<void> {
    const now = this.now();
    const waiting = await handedOffBefore(this.deps.db, now - 1000);
    const overdue = waiting.filter((row) => this.runnerOf(row)?.mode === 'hand_off' && now - row.dispatched_at! > timeoutSecondsOf(row) * 1000);
    for (const row of overdue) {
      await this.deps.ledger.move([row.id], 'timed_out', `no end was known ${timeoutSecondsOf(row)} s after it was handed off (its timeout)`, ['dispatched']);
    }
  }

  private runnerOf(row: ExecutionRow): ServiceRunner | undefined {
    const kind = kindOf(row);
    const runner = this.runners.get(kind);
    if (!runner && !this.unknownKinds.has(kind)) {
      this.unknownKinds.add(kind);
      this.deps.logger.warn({ kind, executionId: row.id }, 'no runner for this kind of service run on this node; it waits for a node that has one, or expires');
    }
    return runner;
  }
}

function kindOf(row: ExecutionRow): string {
  return (JSON.parse(row.spec) as { kind?: string }).kind ?? 'script';
}

function timeoutSecondsOf(row: ExecutionRow): number {
  return (JSON.parse(row.spec) as { timeoutSeconds?: number }).timeoutSeconds ?? 300;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// Read every poll (built once: store/prepared.ts).
const queuedForService = preparedQuery((db) => ({
  compile: () => sql<ExecutionRow>`
    select * from (
      select e.*, row_number() over (partition by e.tenant_id order by e.id) as turn
      from executions e where e.state = 'queued' and e.host_id is null and e.held = 0
    ) queued where turn <= ${PER_TENANT_PASS} order by id limit ${PER_PASS}`.compile(db),
}));

const handedOffBefore = preparedQuery((db, dispatchedBefore: number) => db.selectFrom('executions').selectAll().where('state', '=', 'dispatched').where('host_id', 'is', null).where('dispatched_at', '<', dispatchedBefore).limit(1000));
