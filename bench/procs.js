// Child processes and temp dirs of the benchmark, and their cleanup on every exit path.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';

/** Cleanup actions, run in reverse order once, whatever way the bench ends. */
const cleanups = [];
let cleaning;

export function onCleanup(fn) {
  cleanups.push(fn);
}

export function cleanupAll() {
  cleaning ??= (async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (error) {
        process.stderr.write(`bench: cleanup step failed: ${error?.message ?? error}\n`);
      }
    }
  })().finally(() => {
    // What is registered afterwards (the fleet bench's next size) is cleaned up by the next call.
    cleaning = undefined;
  });
  return cleaning;
}

/** Set once a signal or the time budget stops the bench: main()'s own failure (its children vanish) is noise then. */
let stopping = false;

/** Stops everything (exit 2) once `seconds` have passed: a bench never runs unbounded. */
export function budgetSeconds(seconds, progress, variable = 'BENCH_TIMEOUT') {
  const budget = setTimeout(() => {
    stopping = true;
    progress(`time budget of ${seconds.toFixed(0)} s exceeded (${variable}); stopping`);
    cleanupAll().finally(() => process.exit(2));
  }, seconds * 1000);
  budget.unref();
  onCleanup(() => clearTimeout(budget));
}

/** A port free on 127.0.0.1 right now (tiny race with other processes; fine for a bench). */
/**
 * A benchmark's lifetime: bounded by `seconds`, cleaned up on every path (done, failed, SIGINT or
 * SIGTERM), exit 0 when `main` resolves true, 1 when false or failed, 130 when stopped.
 */
export function runBench(main, seconds, progress, budgetVariable = 'BENCH_TIMEOUT') {
  budgetSeconds(seconds, progress, budgetVariable);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      stopping = true;
      progress(`${signal}: cleaning up`);
      cleanupAll().finally(() => process.exit(130));
    });
  }
  main().then(
    async (ok) => {
      await cleanupAll();
      process.exit(ok ? 0 : 1);
    },
    async (error) => {
      if (!stopping) progress(`failed: ${error?.stack ?? error}`);
      await cleanupAll();
      process.exit(1);
    },
  );
}

/** Listens on a free loopback port until the bench ends; its http://127.0.0.1:PORT. */
export async function listenOnLoopback(server) {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  onCleanup(() => new Promise((done) => {
    server.closeAllConnections();
    server.close(() => done());
  }));
  return `http://127.0.0.1:${server.address().port}`;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export function makeTempDir(prefix) {
  const dir = fs.mkdtempSync(prefix);
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * BENCH_OWN_SESSIONS=1: each child leads a session of its own (setsid), as a service under systemd
 * does. Linux's autogroup scheduler (kernel.sched_autogroup_enabled=1) shares the CPU between
 * sessions first, so children of the bench's session share one session's share with the bench,
 * while the agent's scripts, which lead sessions of their own, each get a whole one.
 */
const OWN_SESSIONS = process.env.BENCH_OWN_SESSIONS === '1';

/**
 * BENCH_CGROUPS=1 (root, a cgroup CPU controller): the bench and each child run in a CPU cgroup of
 * their own, all of one weight, as systemd runs each service in a cgroup of its own (or a
 * container runtime each container). The kernel's autogroup then no longer applies (it only
 * shares out the root cgroup), and a child's children (the agent's helper and scripts,
 * Node-RED's shells) share their parent's cgroup, whatever sessions they lead.
 */
const cgroups = process.env.BENCH_CGROUPS === '1' ? benchCgroups() : undefined;

function benchCgroups() {
  const v2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');
  const base = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu';
  if (v2 ? !fs.readFileSync(`${base}/cgroup.controllers`, 'utf8').split(/\s+/).includes('cpu') : !fs.existsSync(`${base}/tasks`)) {
    throw new Error('BENCH_CGROUPS=1 needs a cgroup CPU controller (v1 at /sys/fs/cgroup/cpu, or cpu in v2\'s cgroup.controllers)');
  }
  if (v2) fs.writeFileSync(`${base}/cgroup.subtree_control`, '+cpu');
  // Each at the top, beside everything else on the machine, as systemd's units are siblings: nested
  // under one cgroup of the bench's, the whole bench would weigh as one unit against the rest.
  const made = [];
  const enter = (name, pid) => {
    const dir = path.join(base, `pitcrew-bench-${process.pid}-${name.replace(/\W+/g, '-')}`);
    if (!fs.existsSync(dir)) {
      fs.mkdirSync(dir);
      made.push(dir);
    }
    try {
      fs.writeFileSync(`${dir}/cgroup.procs`, String(pid));
    } catch (error) {
      if (error.code !== 'ESRCH') throw error; // exited already: its exit is reported as usual
    }
  };
  onCleanup(() => {
    fs.writeFileSync(`${base}/cgroup.procs`, String(process.pid));
    for (const dir of made.reverse()) {
      try {
        fs.rmdirSync(dir);
      } catch {
        // a process still in it (a script left behind): the directory goes with the machine
      }
    }
  });
  enter('bench', process.pid);
  return { enter, describe: `a CPU cgroup each, beside the machine's others (${v2 ? 'v2' : 'v1'}, ${base}/pitcrew-bench-${process.pid}-*)` };
}

/** How the bench's children are scheduled, for the report's header. */
export function scheduling() {
  let autogroup = 'unknown';
  try {
    autogroup = fs.readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1' ? 'on' : 'off';
  } catch {
    // not Linux, or no autogroup in this kernel
  }
  return `autogroup ${autogroup}; children ${cgroups ? cgroups.describe : OWN_SESSIONS ? 'in a session each' : "in the bench's session"}`;
}

/**
 * Spawns a node child (no shell, so child.pid is the node process) that is killed on cleanup.
 * Keeps the last lines of its output for error messages; `onLine` sees every line.
 */
export function spawnChild(name, args, { env, cwd, onLine }) {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: OWN_SESSIONS });
  // node takes tens of ms to start: moved here, it has not started a child of its own yet.
  if (cgroups && child.pid !== undefined) cgroups.enter(`${name}-${child.pid}`, child.pid);
  // BENCH_CHILD_LOG_DIR keeps each child's whole output (e.g. a restarted server's log lines with their times).
  const logDir = process.env.BENCH_CHILD_LOG_DIR;
  if (logDir) {
    fs.mkdirSync(logDir, { recursive: true });
    const file = fs.createWriteStream(path.join(logDir, `${name.replace(/\W+/g, '-')}-${child.pid}.log`));
    child.stdout.pipe(file, { end: false });
    child.stderr.pipe(file, { end: false });
  }
  const tail = [];
  const keep = (chunk) => {
    for (const line of String(chunk).split('\n')) {
      if (line.trim() === '') continue;
      onLine?.(line);
      tail.push(line);
      if (tail.length > 40) tail.shift();
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const handle = {
    name,
    child,
    pid: child.pid,
    exited,
    output: () => tail.join('\n'),
    alive: () => child.exitCode === null && child.signalCode === null,
    /** SIGTERM, then SIGKILL after graceMs. Resolves when the process is gone. */
    async stop(graceMs = 10_000) {
      if (!handle.alive()) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => handle.alive() && child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  onCleanup(() => handle.stop(3000));
  return handle;
}

/** Waits until check() resolves truthy, polling; fails early if the child died. */
export async function waitFor(handle, check, timeoutMs, what, pollMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!handle.alive()) throw new Error(`${handle.name} exited before ${what}:\n${handle.output()}`);
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${handle.name}: timed out waiting for ${what}:\n${handle.output()}`);
    await sleep(pollMs);
  }
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** /proc/PID/stat: the command name, and the fields after it (fields[0] is field 3, state). Throws when the process is gone. */
function procStat(pid, file = `/proc/${pid}/stat`) {
  const stat = fs.readFileSync(file, 'utf8');
  // The command name may hold spaces and parentheses: count fields after its last ')'.
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

/** Every process on the machine now, as procStat gives it, with its pid (those that end meanwhile are left out). */
function allProcStats() {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.flatMap((pid) => {
    try {
      return [{ pid: Number(pid), ...procStat(pid) }];
    } catch {
      return []; // gone meanwhile
    }
  });
}

/**
 * CPU seconds of a process so far, from /proc: its own (user + system, fields 14 and 15) and its
 * children's that have ended and been waited for (cutime, cstime: 16 and 17).
 */
export function cpuParts(pid) {
  const { fields } = procStat(pid);
  return { own: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND, children: (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND };
}

/** Each thread's CPU seconds (user + system) so far, by thread id; threads that end meanwhile are left out. */
export function threadCpu(pid) {
  const cpu = new Map();
  let tids;
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpu;
  }
  for (const tid of tids) {
    try {
      const { fields } = procStat(pid, `/proc/${pid}/task/${tid}/stat`);
      cpu.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // ended meanwhile
    }
  }
  return cpu;
}

/**
 * CPU seconds (user + system) of a process's main thread so far (its event loop, for node), from
 * /proc/PID/task/PID; NaN where unavailable. Worker threads and libuv's pool are left out.
 */
export function mainThreadCpuSeconds(pid) {
  try {
    const { fields } = procStat(pid, `/proc/${pid}/task/${pid}/stat`);
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc; NaN where unavailable.
 * withChildren adds the time of its children that have ended and been waited for (cutime, cstime):
 * for a process that runs short-lived programs, such as an agent running scripts.
 */
export function cpuSeconds(pid, withChildren = false) {
  try {
    const { own, children } = cpuParts(pid);
    return withChildren ? own + children : own;
  } catch {
    return NaN;
  }
}

// The sampling thread: [pid, count, (time, cpu seconds) × count] in shared memory, read with
// this module's own cpuParts; and every `threadsEveryMs` each thread's CPU seconds (threadCpu),
// kept here and sent on request ({ from, to }: each thread's CPU between the two times).
const CPU_TRACE_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
import(workerData.procs).then(({ cpuParts, threadCpu }) => {
  const s = new Float64Array(workerData.buffer);
  const max = (s.length - 2) / 2;
  setInterval(() => {
    const n = s[1];
    if (!s[0] || n >= max) return;
    let cpu;
    try { cpu = cpuParts(s[0]).own; } catch { return; }
    s[2 + 2 * n] = Date.now();
    s[3 + 2 * n] = cpu;
    s[1] = n + 1;
  }, workerData.everyMs);
  let pid = 0;
  let threads = [];
  setInterval(() => {
    if (s[0] !== pid) threads = [];
    pid = s[0];
    if (pid) threads.push({ at: Date.now(), cpu: threadCpu(pid) });
  }, workerData.threadsEveryMs);
  parentPort.on('message', ({ from, to }) => {
    const at = (time) => threads.findLast((t) => t.at <= time);
    const a = at(from);
    const b = at(to);
    parentPort.postMessage(a && b ? [...b.cpu].map(([tid, cpu]) => ({ tid, main: tid === pid, seconds: cpu - (a.cpu.get(tid) ?? 0) })) : []);
  });
});
`;

/**
 * A process's CPU seconds sampled on a thread of its own, so the samples keep their times while
 * this process's event loop is held up: with 10,000 simulated agents reconnecting, the restarted
 * server's CPU was first read up to ~19 s after it listened, and that part was left out.
 */
export class CpuTrace {
  constructor(everyMs = 20, maxSamples = 50_000, threadsEveryMs = 100) {
    this.samples = new Float64Array(new SharedArrayBuffer(8 * (2 + 2 * maxSamples)));
    this.worker = new Worker(CPU_TRACE_SOURCE, { eval: true, workerData: { buffer: this.samples.buffer, everyMs, threadsEveryMs, procs: import.meta.url } });
    this.worker.unref();
  }

  /** Starts over with another process. */
  watch(pid) {
    this.samples[1] = 0;
    this.samples[0] = pid;
  }

  /** CPU seconds between two times (ms since the epoch), from the last sample at or before each; NaN without one. */
  between(from, to) {
    const at = (time) => {
      let cpu = NaN;
      for (let i = 0; i < this.samples[1] && this.samples[2 + 2 * i] <= time; i += 1) cpu = this.samples[3 + 2 * i];
      return cpu;
    };
    return at(to) - at(from);
  }

  /**
   * Each thread's CPU seconds between two times (sampled every 100 ms: the samples at or before
   * each), by thread id, the main thread marked: [{ tid, main, seconds }]. Node names all its
   * threads "node"; the V8 platform's workers (GC, compilation) start with the process, libuv's
   * pool (fs, crypto, fdatasync) at its first use.
   */
  threads(from, to) {
    return new Promise((resolve) => {
      this.worker.once('message', resolve);
      this.worker.postMessage({ from, to });
    });
  }

  stop() {
    return this.worker.terminate();
  }
}

/**
 * Bytes a process has caused to be written to storage so far (write_bytes in /proc/PID/io); NaN
 * where unavailable. Unlike CPU time it hardly depends on how fast the machine is that minute.
 */
export function writtenBytes(pid) {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    return Number(/^write_bytes:\s*(\d+)/m.exec(io)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/**
 * System calls a process has made so far that read and that write (syscr, syscw in /proc/PID/io:
 * read, write, readv, writev, sendmsg and their kin); NaN where unavailable. Like written bytes,
 * a count that hardly depends on how busy the machine is: messages and files, not time.
 */
export function ioCalls(pid) {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    return { reads: Number(/^syscr:\s*(\d+)/m.exec(io)?.[1] ?? NaN), writes: Number(/^syscw:\s*(\d+)/m.exec(io)?.[1] ?? NaN) };
  } catch {
    return { reads: NaN, writes: NaN };
  }
}

/** CPU seconds used by this (the load-generating) process so far. */
export function ownCpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * CPU seconds all processes of the machine have used so far (user + nice + system time from
 * /proc/stat; interrupt and softirq time, e.g. loopback networking, and steal are left out).
 */
export function machineProcessSeconds() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/**
 * The live children of the pids, e.g. the helper that starts an agent's scripts: the helper's CPU
 * (with its scripts', once waited for) reaches the agent's only when the helper ends.
 */
export function childrenOf(pids) {
  const wanted = new Set(pids.map(String));
  // fields[1] is field 4, the parent's pid.
  return allProcStats().filter(({ fields }) => wanted.has(fields[1])).map(({ pid }) => pid);
}

/** CPU seconds (user + system) each process on the machine has used so far, by pid, with its name. */
export function allProcessSeconds() {
  return new Map(allProcStats().map(({ pid, comm, fields }) => [pid, { comm, seconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND }]));
}

/** A short name for a process: its command, and for node/npm its script's file name. */
export function processLabel(pid, comm) {
  if (!/^(node|npm|npx|MainThread)/.test(comm)) return comm;
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.slice(1).find((a) => !a.startsWith('-'));
    return script ? `${comm} ${script.split('/').slice(-2).join('/')}`.slice(0, 60) : comm;
  } catch {
    return comm;
  }
}
