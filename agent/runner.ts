import { mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Execute, ExecutionResult } from '../src/agents/protocol.js';
import { collectArtifacts } from './artifacts.js';
import { CappedOutput } from '../src/executions/capped-output.js';
import { scriptEnvironment } from './environment.js';
import { resolveInterpreter, type Program } from '../src/executions/interpreters.js';
import { groupExists, signalGroup } from './process-group.js';
import type { RunDir, RunDirs } from './run-dirs.js';
import type { Launched, Launcher, Stream } from './launcher.js';

export type RunSpec = Pick<Execute, 'executionId' | 'flavour' | 'interpreter' | 'script' | 'env' | 'context' | 'timeoutSeconds'>;

export interface RunnerSettings {
  /** Starts and watches each script's process. */
  launcher: Launcher;
  /** Each run gets a clean directory from here: the script file, its working directory, its artifacts. */
  runDirs: RunDirs;
  maxOutputBytes: number;
  maxArtifactBytes: number;
  /** PATH, HOME, LANG, USER, LOGNAME for every script. */
  baseEnv: Record<string, string>;
  /** Between SIGTERM and SIGKILL when a run is stopped. */
  killGraceMs: number;
  /** After the script exits, how long processes it left in the background may keep its output open. */
  drainMs: number;
}

export interface RunHooks {
  /** The process group exists (its id is the script's pid); the script runs in `cwd`. */
  spawned(pgid: number, cwd: string): void;
  /** Live output, within the stream's limit. */
  output(stream: Stream, text: string): void;
  /** Event variables the agent would not pass, by name. */
  skippedEnv?(names: string[]): void;
}

// setTimeout holds at most 2^31-1 ms; a longer timeout would fire at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

type Stop = { ending: 'timed_out' | 'cancelled'; reason: string };
type Prepared = { program: Program; dir: RunDir; artifactsDir: string | undefined; env: Record<string, string> };
type Exit = { exitCode: number | null; signal: string | null; startedAt: number | null } | { error: string };

let spawnTurns: Promise<void> = Promise.resolve();

/**
 * One run starts per turn of the event loop. Spawning from the agent itself (without its spawn
 * helper) blocks the loop for a few milliseconds (fork of a large process); a burst of 100
 * executions started together held it for over a second on a busy machine, long enough to miss
 * the service's heartbeat and be disconnected (test/agents.test.ts, 500 triggers). Between two
 * spawns the loop now reads the network.
 */
function nextSpawnTurn(): Promise<void> {
  const turn = spawnTurns.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  spawnTurns = turn;
  return turn;
}

/** One script run, from its script file to its result. The result promise never rejects. */
export class ScriptRun {
  readonly result: Promise<ExecutionResult>;
  /** Settles once the run directory is given back (kept clean for another run, or removed), after the result. */
  removed: Promise<void> = Promise.resolve();
  private pgid: number | undefined;
  private stopped: Stop | undefined;
  private readonly stdout: CappedOutput;
  private readonly stderr: CappedOutput;
  private launched: Launched | undefined;
  /** What watched the process is gone: processes it started may be left where it ran. */
  private launcherLost = false;

  /**
   * `mayStart` settles once the run may spawn: undefined, or why it must not (the journal could not
   * record it). The run directory is made meanwhile; nothing is spawned before it settles.
   */
  constructor(
    private readonly spec: RunSpec,
    private readonly settings: RunnerSettings,
    private readonly hooks: RunHooks,
    private readonly mayStart: Promise<string | undefined> = Promise.resolve(undefined),
  ) {
    this.stdout = new CappedOutput(settings.maxOutputBytes);
    this.stderr = new CappedOutput(settings.maxOutputBytes);
    // Started on a later turn of the event loop, so a cancel right after construction stops it
    // before it spawns, and a burst of runs does not hold the loop (see nextSpawnTurn).
    this.result = nextSpawnTurn().then(() => this.run()).catch((error: unknown) => this.resultOf({ error: `the agent could not run the script: ${(error as Error).message}` }, undefined));
  }

  /** Stops the run: SIGTERM to its whole process group, SIGKILL after the grace period. */
  cancel(reason = 'cancelled on request; the script was stopped'): void {
    this.stop({ ending: 'cancelled', reason });
  }

  private stop(stop: Stop): void {
    if (this.stopped) return;
    this.stopped = stop;
    const pgid = this.pgid;
    if (pgid === undefined) return; // not spawned yet: run() sees `stopped` and never spawns
    // Processes it left hold the output past the exit: wait out the grace period before reading no more.
    this.launched?.extendDrain(this.settings.killGraceMs + 1000);
    signalGroup(pgid, 'SIGTERM');
    setTimeout(() => signalGroup(pgid, 'SIGKILL'), this.settings.killGraceMs).unref();
  }

  private async run(): Promise<ExecutionResult> {
    const prepared = this.prepare();
    try {
      // Prepared while the journal syncs the run's entry, which a spawn must wait for: ~0.5 ms of
      // every trigger-to-start (bench/e2e). A refusal by the journal says first why nothing ran.
      const refusal = await this.mayStart;
      if (refusal !== undefined) return this.resultOf({ error: refusal }, undefined);
      if ('failure' in prepared) return this.resultOf({ error: prepared.failure }, undefined);
      await nextSpawnTurn();
      const exit = this.stopped ? undefined : await this.spawnAndWait(prepared);
      const collected = prepared.artifactsDir && exit && !('error' in exit) ? await collectArtifacts(prepared.artifactsDir, this.settings.maxArtifactBytes) : undefined;
      return this.resultOf(exit, collected);
    } finally {
      if ('dir' in prepared) this.removed = this.release(prepared);
    }
  }

  /**
   * The interpreter, the run directory, the script file and the environment. Synchronous on
   * purpose: a few small writes to the page cache cost less on the event loop than their trips
   * through libuv's four-thread pool, which the journal's syncs also need.
   */
  private prepare(): Prepared | { failure: string } {
    const program = resolveInterpreter(this.spec.interpreter, this.settings.baseEnv.PATH ?? '');
    if ('missing' in program) return { failure: program.missing };
    let dir: RunDir | undefined;
    try {
      dir = this.settings.runDirs.take(program.extension, this.spec.script);
      const artifactsDir = this.spec.flavour === 'diagnostics' ? join(dir.path, 'artifacts') : undefined;
      if (artifactsDir) mkdirSync(artifactsDir, { mode: 0o700 });
      const { env, skipped } = scriptEnvironment(this.settings.baseEnv, this.spec.env, this.spec.context, artifactsDir);
      if (skipped.length > 0) this.hooks.skippedEnv?.(skipped);
      return { program, dir, artifactsDir, env };
    } catch (error) {
      if (dir) this.removed = this.settings.runDirs.giveBack(dir, false);
      return { failure: `the agent could not run the script: ${(error as Error).message}` };
    }
  }

  /**
   * Removes an empty artifacts directory and gives the run directory back, to be kept (with its
   * script file, for a later run of the same script) only if no process of the run is left and
   * the run left nothing there.
   */
  private release({ dir, artifactsDir }: Prepared): Promise<void> {
    let reusable = !this.launcherLost && (this.pgid === undefined || !groupExists(this.pgid));
    try {
      if (artifactsDir) rmdirSync(artifactsDir);
    } catch {
      reusable = false; // artifacts left: all goes
    }
    return this.settings.runDirs.giveBack(dir, reusable);
  }

  private spawnAndWait({ program, dir: { script, cwd }, env }: Prepared): Promise<Exit> {
    return new Promise((resolve) => {
      // Until the launcher says the script runs: a run lost before (its helper died) never started.
      let startedAt: number | null = null;
      let timer: NodeJS.Timeout | undefined;
      const settle = (value: Exit) => {
        clearTimeout(timer);
        resolve(value);
      };
      const { maxOutputBytes, drainMs } = this.settings;
      this.launched = this.settings.launcher.launch({ path: program.path, args: [...program.args, script], cwd, env, maxBytes: maxOutputBytes, drainMs }, {
        spawned: (pid) => {
          startedAt = Date.now();
          this.pgid = pid;
          this.hooks.spawned(pid, cwd);
          timer = setTimeout(() => this.stop({ ending: 'timed_out', reason: `the script ran longer than its timeout of ${this.spec.timeoutSeconds} s; its process group was stopped` }), Math.min(this.spec.timeoutSeconds * 1000, MAX_TIMER_MS));
          const early = this.stopped;
          if (early) {
            this.stopped = undefined;
            this.stop(early);
          }
        },
        output: (stream, chunk) => {
          const text = this[stream].push(chunk);
          if (text) this.hooks.output(stream, text);
        },
        ended: (exitCode, signal) => settle({ exitCode, signal, startedAt }),
        failed: (reason) => settle({ error: reason }),
        lost: (reason) => {
          this.launcherLost = true;
          this.stopped ??= { ending: 'cancelled', reason };
          settle({ exitCode: null, signal: 'SIGKILL', startedAt });
        },
      });
    });
  }

  private resultOf(exit: Exit | undefined, collected: Awaited<ReturnType<typeof collectArtifacts>> | undefined): ExecutionResult {
    const base = {
      executionId: this.spec.executionId,
      finishedAt: Date.now(),
      stdout: this.stdout.text(),
      stderr: this.stderr.text(),
      stdoutTruncated: this.stdout.truncated,
      stderrTruncated: this.stderr.truncated,
      artifacts: collected?.artifacts ?? [],
      artifactsTruncated: collected?.truncated ?? false,
    };
    if (exit === undefined) {
      return { ...base, ending: 'cancelled', exitCode: null, signal: null, reason: this.stopped?.reason ?? 'cancelled before it started', startedAt: null };
    }
    if ('error' in exit) return { ...base, ending: 'failed_to_start', exitCode: null, signal: null, reason: exit.error, startedAt: null };
    return {
      ...base,
      ending: this.stopped?.ending ?? 'exited',
      exitCode: exit.exitCode,
      signal: exit.signal,
      reason: this.stopped?.reason ?? null,
      startedAt: exit.startedAt,
    };
  }
}
