import { createHash } from 'node:crypto';
import { assertNever, type AgentMessage, type Execute, type ExecutionResult, type Hello, type ServiceMessage } from '../src/agents/protocol.js';
import { checkScript } from './allowlist.js';
import type { Journal } from './journal.js';
import type { Logger } from './log.js';
import type { Stream } from './launcher.js';
import { ScriptRun, type RunnerSettings } from './runner.js';

/*
 * The agent's core, apart from the transport: what to do with each execute, cancel and recorded,
 * with the journal deciding what has been seen before. At most once: an id is run only if the
 * journal has never heard of it, and it is in the journal before its process exists.
 */

/** The live connection, when there is one. Messages sent while there is none are not queued: results stay in the journal. */
export interface Link {
  send(message: AgentMessage): void;
}

export interface Address {
  hostId: string;
  tenantId: string;
}

export interface ExecutorDeps {
  journal: Journal;
  runner: RunnerSettings;
  /** --allow patterns; empty: no allowlist. */
  allow: readonly string[];
  log: Logger;
  /** Live output is coalesced into one message per stream per this many ms. */
  outputFlushMs?: number;
}

/**
 * How long `started` waits before it is sent. A run that ends sooner tells its start in its
 * result, one message instead of two: most remediation commands end within it, and each message
 * costs a TLS write here and a wake-up, a parse and a ledger change on the service (bench/e2e).
 * 100 ms, not 20: on a busy machine even `true` takes longer than 20 ms from its spawn to its
 * exit and closed pipes (a p50 of 51-83 ms in bench/e2e's cold burst, 32 in flight on two
 * loaded cores), so nearly every run paid for both messages just when CPU was short. A person
 * sees `running` at most 0.1 s later, and the start time it records is the spawn's either way.
 */
const STARTED_HOLD_MS = 100;

interface ActiveRun {
  run?: ScriptRun;
  startedAt?: number;
  /** Set while `started` is held back (STARTED_HOLD_MS). */
  startedTimer?: NodeJS.Timeout;
  pending: Record<Stream, string>;
  flushTimer?: NodeJS.Timeout;
}

export class Executor {
  private link: Link | undefined;
  private address: Address | undefined;
  private readonly active = new Map<string, ActiveRun>();
  private readonly work = new Set<Promise<void>>();

  constructor(private readonly deps: ExecutorDeps) {}

  /** For hello: what runs now, what a previous agent process left unfinished, and what ended unheard. */
  resumeState(): Pick<Hello, 'running' | 'interrupted' | 'finished'> {
    const finished = this.deps.journal.undeliveredResults().map((result) => result.executionId);
    return { running: [...this.active.keys()], interrupted: this.deps.journal.interruptions(), finished };
  }

  /**
   * The service welcomed us: from now on its address is the only one we accept. The welcome also
   * means it processed the hello, including the interruptions it listed, so those are done.
   */
  async connected(link: Link, address: Address, reportedInterruptions: string[]): Promise<void> {
    this.link = link;
    this.address = address;
    for (const id of reportedInterruptions) await this.deps.journal.acknowledged(id);
    const undelivered = this.deps.journal.undeliveredResults();
    if (undelivered.length > 0) this.deps.log.info('offering results the service has not confirmed', { executionIds: undelivered.map((r) => r.executionId) });
    for (const result of undelivered) link.send({ type: 'finished', result });
  }

  disconnected(): void {
    this.link = undefined;
    for (const active of this.active.values()) {
      clearTimeout(active.flushTimer);
      active.flushTimer = undefined;
      active.pending = { stdout: '', stderr: '' };
    }
  }

  handle(message: Exclude<ServiceMessage, { type: 'welcome' }>): Promise<void> {
    switch (message.type) {
      case 'execute':
        return this.track(this.execute(message));
      case 'cancel':
        return this.cancel(message.executionId, 'cancelled on request; the script was stopped');
      case 'recorded':
        return this.deps.journal.acknowledged(message.executionId);
      default:
        return assertNever(message);
    }
  }

  /** Stops every run (agent shutdown) and waits until their results are in the journal. */
  async stopAll(reason: string): Promise<void> {
    for (const id of this.active.keys()) await this.cancel(id, reason);
    await this.settled();
    this.deps.runner.runDirs.removeKept();
    this.deps.runner.launcher.close();
  }

  /** Resolves when no execution is in progress. */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work]);
  }

  private async execute(message: Execute): Promise<void> {
    const id = message.executionId;
    const address = this.address;
    const log = this.deps.log;
    if (!address || message.hostId !== address.hostId || message.tenantId !== address.tenantId) {
      log.warn('refused an execution addressed to another host or tenant', { executionId: id, hostId: message.hostId, tenantId: message.tenantId });
      // Not journaled: the id belongs to another host's queue, not to ours.
      this.send({ type: 'finished', result: refused(id, `addressed to host ${message.hostId} in tenant ${message.tenantId}, but this agent is host ${address?.hostId ?? '(not welcomed)'} in tenant ${address?.tenantId ?? '-'}; not run`) });
      return;
    }
    const active = this.active.get(id);
    if (active) {
      if (active.startedAt !== undefined) this.tellStarted(id, active);
      return;
    }
    const entry = this.deps.journal.get(id);
    if (entry) {
      if (entry.state === 'finished') this.send({ type: 'finished', result: entry.result });
      log.info('ignored a repeated delivery', { executionId: id, journal: entry.state });
      return;
    }
    const altered = scriptAltered(message);
    if (altered) {
      log.warn('refused a script whose hash is not the one the service recorded', { executionId: id });
      return this.finish(refused(id, altered));
    }
    const verdict = checkScript(message.script, message.interpreter, this.deps.allow);
    if (!verdict.allowed) {
      log.warn('refused a script outside the allowlist', { executionId: id, reason: verdict.reason });
      return this.finish(refused(id, verdict.reason));
    }
    const run: ActiveRun = { pending: { stdout: '', stderr: '' } };
    this.active.set(id, run);
    const journaled = this.deps.journal.starting(id).then(
      () => undefined,
      (error: unknown) => `the agent could not write its journal (${(error as Error).message}), so it did not run the script`,
    );
    run.run = new ScriptRun(message, this.deps.runner, {
      spawned: (pgid, cwd) => {
        run.startedAt = Date.now();
        run.startedTimer = setTimeout(() => this.tellStarted(id, run), STARTED_HOLD_MS);
        this.deps.journal.running(id, pgid).catch((error: unknown) => log.error('could not journal a running script', { executionId: id, error: (error as Error).message }));
        log.info('running a script', { executionId: id, interpreter: message.interpreter, flavour: message.flavour, timeoutSeconds: message.timeoutSeconds, cwd });
      },
      output: (stream, text) => this.queueOutput(id, run, stream, text),
      skippedEnv: (names) => log.warn('left out environment variables the agent does not pass to scripts', { executionId: id, names }),
    }, journaled);
    const result = await run.run.result;
    this.flushOutput(id, run);
    // Ended within the hold: the result carries startedAt, and the service records the start from it.
    clearTimeout(run.startedTimer);
    this.active.delete(id);
    log.info('script finished', { executionId: id, ending: result.ending, exitCode: result.exitCode, signal: result.signal });
    await this.finish(result);
  }

  private async finish(result: ExecutionResult): Promise<void> {
    // Sent before it is on disk: the journal already holds the run as started, so nothing re-runs
    // it, and the result is kept in memory and re-offered until the service confirms it.
    const journaled = this.deps.journal.finished(result);
    this.send({ type: 'finished', result });
    try {
      await journaled;
    } catch (error) {
      this.deps.log.error('could not journal a result; it is lost if this agent stops before the service confirms it', { executionId: result.executionId, error: (error as Error).message });
    }
  }

  private async cancel(executionId: string, reason: string): Promise<void> {
    const active = this.active.get(executionId);
    if (!active) {
      this.deps.log.info('cancel for an execution that is not running here; ignored', { executionId });
      return;
    }
    active.run?.cancel(reason);
  }

  private queueOutput(id: string, run: ActiveRun, stream: Stream, text: string): void {
    if (!this.link) return;
    run.pending[stream] += text;
    run.flushTimer ??= setTimeout(() => this.flushOutput(id, run), this.deps.outputFlushMs ?? 100);
  }

  private flushOutput(executionId: string, run: ActiveRun): void {
    clearTimeout(run.flushTimer);
    run.flushTimer = undefined;
    // Output of a run the service has not been told has started: the start goes first.
    if (run.startedTimer !== undefined && (run.pending.stdout || run.pending.stderr)) this.tellStarted(executionId, run);
    for (const stream of ['stdout', 'stderr'] as const) {
      if (run.pending[stream]) this.send({ type: 'output', executionId, stream, chunk: run.pending[stream] });
      run.pending[stream] = '';
    }
  }

  private tellStarted(executionId: string, run: ActiveRun): void {
    clearTimeout(run.startedTimer);
    run.startedTimer = undefined;
    this.send({ type: 'started', executionId, startedAt: run.startedAt! });
  }

  private send(message: AgentMessage): void {
    this.link?.send(message);
  }

  private track(promise: Promise<void>): Promise<void> {
    const tracked = promise
      .catch((error: unknown) => this.deps.log.error('an execution failed inside the agent', { error: (error as Error).stack ?? String(error) }))
      .finally(() => this.work.delete(tracked));
    this.work.add(tracked);
    return tracked;
  }
}

function refused(executionId: string, reason: string): ExecutionResult {
  return {
    executionId,
    ending: 'refused',
    exitCode: null,
    signal: null,
    reason: reason.slice(0, 4000),
    startedAt: null,
    finishedAt: Date.now(),
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    artifacts: [],
    artifactsTruncated: false,
  };
}

/** The script must be the bytes the service recorded for its runbook (a version, a git commit's file). */
function scriptAltered(message: Execute): string | undefined {
  if (message.sha256 === undefined) return undefined;
  const actual = createHash('sha256').update(message.script, 'utf8').digest('hex');
  if (actual === message.sha256) return undefined;
  return `the script received has SHA-256 ${actual}, not the ${message.sha256} the service recorded for its runbook; not run`;
}
