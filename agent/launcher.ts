import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

export type Stream = 'stdout' | 'stderr';

/** One program to start, the way the agent starts every script. */
export interface LaunchSpec {
  path: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Per stream: what comes past this many bytes (and one more, to tell a cut) is read and dropped. */
  maxBytes: number;
  /** After the exit, how long processes it left in the background may keep its output open. */
  drainMs: number;
}

/** What happens to a launched program, in this order: spawned, output..., then one of ended or lost; or failed alone. */
export interface LaunchEvents {
  /** It runs; it leads a new process group whose id is its pid. */
  spawned(pid: number): void;
  output(stream: Stream, chunk: Buffer): void;
  /** It exited and its output is closed (or stopped being read after the drain time). */
  ended(exitCode: number | null, signal: string | null): void;
  /** It never started. */
  failed(reason: string): void;
  /** What watched it is gone: its group was killed, and how it ended is unknown. */
  lost(reason: string): void;
}

export interface Launched {
  /** A run being stopped waits this long after its exit for its output instead of the drain time. */
  extendDrain(ms: number): void;
}

/** Starts scripts and watches them. */
export interface Launcher {
  launch(spec: LaunchSpec, events: LaunchEvents): Launched;
  /** Stops what the launcher holds open; runs still in flight are lost. */
  close(): void;
}

/** What watch() reports, as data: the spawn helper sends it to the agent (output as latin1 text, one character per byte). */
export type LaunchReport =
  | { type: 'spawned'; pid: number }
  | { type: 'output'; stream: Stream; chunk: Buffer }
  | { type: 'ended'; exitCode: number | null; signal: string | null }
  | { type: 'failed'; reason: string };

/**
 * Starts one program and reports on it. It runs in the agent and, as source text, in the spawn
 * helper (agent/spawn-helper.ts), so it uses nothing but its arguments: `start` is
 * child_process.spawn, `drainMs` is read when the program exits.
 */
export function watch(start: typeof spawn, spec: LaunchSpec, report: (event: LaunchReport) => void, drainMs: () => number): void {
  let openStreams = 2;
  let exit: { exitCode: number | null; signal: string | null } | undefined;
  let done = false;
  let drainTimer: NodeJS.Timeout | undefined;
  const end = () => {
    if (done) return;
    done = true;
    clearTimeout(drainTimer);
    report({ type: 'ended', ...exit! });
  };
  let child: ChildProcessByStdio<null, Readable, Readable>;
  try {
    // detached: the script leads a new process group (setsid), so stopping it reaches every process it started.
    child = start(spec.path, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    return report({ type: 'failed', reason: `${spec.path} could not be started: ${(error as Error).message}` });
  }
  // Reported at once, not on 'spawn': in the helper, the agent must know the group before anything else can happen.
  if (child.pid !== undefined) report({ type: 'spawned', pid: child.pid });
  child.once('error', (error) => {
    if (child.pid !== undefined) return;
    done = true;
    report({ type: 'failed', reason: `${spec.path} could not be started: ${error.message}` });
  });
  for (const stream of ['stdout', 'stderr'] as const) {
    let forwarded = 0;
    child[stream].on('data', (chunk: Buffer) => {
      const room = spec.maxBytes + 1 - forwarded;
      if (room <= 0) return; // read and dropped, so the script is never blocked on a full pipe
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      forwarded += kept.length;
      report({ type: 'output', stream, chunk: kept });
    });
    child[stream].once('close', () => {
      if (--openStreams === 0 && exit) end();
    });
  }
  child.once('exit', (exitCode, signal) => {
    exit = { exitCode, signal };
    if (openStreams === 0) return end();
    // Something the script left running still holds its output: wait a little, then stop reading.
    drainTimer = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
      end();
    }, drainMs());
  });
}

/** Hands a report to the run's events. */
export function deliver(events: LaunchEvents, report: LaunchReport): void {
  switch (report.type) {
    case 'spawned':
      return events.spawned(report.pid);
    case 'output':
      return events.output(report.stream, report.chunk);
    case 'ended':
      return events.ended(report.exitCode, report.signal);
    case 'failed':
      return events.failed(report.reason);
  }
}

/** Starts each script from the agent's own process. */
export class DirectLauncher implements Launcher {
  launch(spec: LaunchSpec, events: LaunchEvents): Launched {
    let drainMs = spec.drainMs;
    // On the next tick, as the helper's reports come: a caller never sees events before launch() returns.
    process.nextTick(() => watch(spawn, spec, (report) => deliver(events, report), () => drainMs));
    return { extendDrain: (ms) => (drainMs = ms) };
  }

  close(): void {}
}
