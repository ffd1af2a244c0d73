import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { deliver, watch, type Launched, type LaunchEvents, type Launcher, type LaunchReport, type LaunchSpec, type Stream } from './launcher.js';
import type { Logger } from './log.js';
import { killGroupsIn, signalGroup } from './process-group.js';

/*
 * The agent starts scripts through a small helper process of its own, the way OpenJDK starts
 * programs through jspawnhelper and Erlang through erl_child_setup: forking copies the page
 * tables of the process that forks, and spawn() holds that process's event loop until the child
 * has exec'd. The agent is the bigger process (62 MB of anonymous memory against the helper's 20),
 * and its loop also serves the connection and the journal: in bench/e2e its spawn() took ~1 ms
 * of CPU and ~4 ms of wall time per run, 10-11 ms with ten agents on two cores, while nothing
 * else ran. The helper only spawns, forwards each script's pid, output and exit over an IPC
 * channel, and dies with the agent. If it dies first, the runs it watched are killed and
 * reported, and the next run starts a new one.
 */

type ToHelper = ({ type: 'launch'; id: number } & LaunchSpec) | { type: 'drain'; id: number; ms: number };
/** JSON, so output travels as latin1 text: one character per byte, back to the same bytes. */
type FromHelper = (Exclude<LaunchReport, { type: 'output' }> | { type: 'output'; stream: Stream; latin1: string }) & { id: number };

/**
 * The helper's program, given to `node -e` as source text with watch() as its argument: it must
 * not use anything outside its own body.
 */
function helperProgram(watchProgram: typeof watch): void {
  process.title = 'pitcrew-agent spawn helper';
  const { spawn } = process.getBuiltinModule('node:child_process');
  const drains = new Map<number, number>();
  process.on('message', (message: ToHelper) => {
    if (message.type === 'drain') {
      if (drains.has(message.id)) drains.set(message.id, message.ms);
      return;
    }
    const id = message.id;
    drains.set(id, message.drainMs);
    watchProgram(spawn, message, (report) => {
      if (report.type === 'ended' || report.type === 'failed') drains.delete(id);
      const sent: FromHelper = report.type === 'output' ? { type: 'output', stream: report.stream, latin1: report.chunk.toString('latin1'), id } : { ...report, id };
      process.send!(sent);
    }, () => drains.get(id)!);
  });
  // The agent is gone: so is the one reader of the scripts' output, as when scripts are the agent's own children.
  process.on('disconnect', () => process.exit(0));
}

const HELPER_SOURCE = `(${helperProgram.toString()})(${watch.toString()})`;
/**
 * A 1 MB young generation, not V8's default 16 MB: the helper's garbage is a few small messages
 * per run, and every fork copies the page tables of all it has touched. Measured 2,000 runs of
 * `sh -c true`, 8 in flight (dist/ through HelperLauncher): anonymous memory 60 → 20 MB, the
 * helper's CPU per spawn 1,150 → 840 µs, the shell's (the fork's child side) 1,270 → 980 µs,
 * 520 → 750 spawns/s. --jitless (14 MB) cost the helper more than it saved the shells.
 */
const HELPER_FLAGS = ['--max-semi-space-size=1'];
/** More deaths than this within DEATH_WINDOW_MS: the helper is given up and scripts start from the agent itself. */
const MAX_DEATHS = 3;
const DEATH_WINDOW_MS = 60_000;
const STDERR_KEPT = 2000;

interface InFlight {
  spec: LaunchSpec;
  events: LaunchEvents;
  pid?: number;
  /** Where a drain extension goes: the helper, or the agent itself if the helper never started. */
  launched: Launched;
}

interface Helper {
  process: ChildProcess;
  runs: Map<number, InFlight>;
}

/** The channel keeps the agent's event loop running while a run is in flight, as a script's own pipes do. */
function holdWhileBusy(helper: Helper): void {
  if (helper.runs.size > 0) helper.process.channel?.ref();
  else helper.process.channel?.unref();
}

/** Starts scripts through the helper; through `fallback` (the agent's own process) when there is none. */
export class HelperLauncher implements Launcher {
  private helper: Helper | undefined;
  private nextId = 1;
  private deaths: number[] = [];
  private closed = false;

  constructor(
    private readonly fallback: Launcher,
    private readonly log: Logger,
    /** The node binary the helper runs on: the agent's own. */
    private readonly nodePath = process.execPath,
  ) {}

  launch(spec: LaunchSpec, events: LaunchEvents): Launched {
    const helper = this.helper ?? this.start();
    if (!helper) return this.fallback.launch(spec, events);
    const id = this.nextId++;
    const run: InFlight = { spec, events, launched: { extendDrain: (ms) => this.send(helper, { type: 'drain', id, ms }) } };
    helper.runs.set(id, run);
    holdWhileBusy(helper);
    this.send(helper, { type: 'launch', id, ...spec });
    return { extendDrain: (ms) => run.launched.extendDrain(ms) };
  }

  /** The helper's pid while there is one. */
  get helperPid(): number | undefined {
    return this.helper?.process.pid;
  }

  /** Starts the helper now rather than with the first run (once: the one running is kept). */
  start(): Helper | undefined {
    if (this.helper) return this.helper;
    if (this.closed || this.deaths.length >= MAX_DEATHS) return undefined;
    let child: ChildProcess;
    try {
      // No environment and no flags of the agent's: the helper needs neither, and NODE_OPTIONS could load code into it.
      // JSON, not V8's serializer ('advanced'): for these small messages the helper's CPU per run
      // was 740-770 µs with it, 580-680 µs with JSON, and the agent's 95-100 → 70-80 µs.
      child = spawn(this.nodePath, [...HELPER_FLAGS, '-e', HELPER_SOURCE], { env: {}, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
    } catch (error) {
      this.neverStarted(undefined, error as Error);
      return undefined;
    }
    const helper: Helper = { process: child, runs: new Map() };
    this.helper = helper;
    // Idle, never what keeps the agent running; with runs in flight, as their pipes would (holdWhileBusy).
    child.unref();
    holdWhileBusy(helper);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-STDERR_KEPT)));
    (child.stderr as Socket).unref();
    child.on('message', (message: FromHelper) => this.receive(helper, message));
    child.once('error', (error) => {
      if (child.pid === undefined) this.neverStarted(helper, error);
    });
    child.once('disconnect', () => {
      if (this.helper === helper) this.helper = undefined;
    });
    child.once('close', (code, signal) => this.died(helper, code, signal, stderr));
    return helper;
  }

  close(): void {
    this.closed = true;
    if (this.helper?.process.connected) this.helper.process.disconnect();
    this.helper = undefined;
  }

  private send(helper: Helper, message: ToHelper): void {
    // A helper that is going away drops the message; its close reports the runs it had.
    if (helper.process.connected) helper.process.send(message, (error: Error | null) => error && this.log.warn('could not reach the process that starts scripts', { error: error.message }));
  }

  private receive(helper: Helper, { id, ...message }: FromHelper): void {
    const run = helper.runs.get(id);
    if (!run) return;
    if (message.type === 'spawned') run.pid = message.pid;
    if (message.type === 'ended' || message.type === 'failed') {
      helper.runs.delete(id);
      holdWhileBusy(helper);
    }
    deliver(run.events, message.type === 'output' ? { type: 'output', stream: message.stream, chunk: Buffer.from(message.latin1, 'latin1') } : message);
  }

  /** No run reached it, so none ran: each starts from the agent itself instead. */
  private neverStarted(helper: Helper | undefined, error: Error): void {
    if (helper && this.helper === helper) this.helper = undefined;
    this.log.error('could not start the process that starts scripts; the runs waiting for it start from the agent itself', { error: error.message });
    this.countDeath();
    for (const run of helper?.runs.values() ?? []) run.launched = this.fallback.launch(run.spec, run.events);
    helper?.runs.clear();
  }

  private countDeath(): void {
    const now = Date.now();
    this.deaths = [...this.deaths.filter((at) => now - at < DEATH_WINDOW_MS), now];
    if (this.deaths.length >= MAX_DEATHS) this.log.error('the process that starts scripts keeps stopping; scripts now start from the agent itself', { deaths: this.deaths.length });
  }

  /** Every message it sent has been received (close comes after the channel's end). */
  private died(helper: Helper, code: number | null, signal: string | null, stderr: string): void {
    if (this.helper === helper) this.helper = undefined;
    if (helper.process.pid === undefined) return; // never started: see neverStarted
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (helper.runs.size === 0 && (this.closed || (code === 0 && !signal))) return;
    this.log.error('the process that starts scripts stopped; the scripts it watched were killed', { how, runs: helper.runs.size, stderr: stderr.trim() || undefined });
    this.countDeath();
    for (const run of helper.runs.values()) {
      if (run.pid !== undefined) signalGroup(run.pid, 'SIGKILL');
      else killGroupsIn(run.spec.cwd); // it may have spawned without saying so yet
      run.events.lost(`the agent's process that starts scripts ${how} while the script ran; its process group was killed, and how far the script got is unknown`);
    }
    helper.runs.clear();
  }
}
