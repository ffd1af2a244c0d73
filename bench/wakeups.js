// Wake-ups per execution of a running bench/e2e.js's agents and spawn helpers (bench/README.md,
// "Session 31: agents41"): over SECONDS, the voluntary context switches of every thread (a thread
// that went to sleep, so something woke it), by kind of thread, and the CPU, each ÷ the executions
// the agents' journals grew by (four lines per execution: starting, running, finished,
// acknowledged; a compaction in the window spoils the count).
//
//   node bench/wakeups.js [SECONDS=10] [MATCH=this checkout's dist/]
//
// MATCH picks the agents by their command line, so another checkout's bench beside it is left out.
// Threads are told apart by their order of creation in Node 20: the main thread, V8's platform
// threads (its delayed-task runner and four workers: GC and compile tasks), then, in the agent,
// the inspector's and libuv's four thread-pool threads (the journal's fdatasyncs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const seconds = Number(process.argv[2] ?? 10);
const match = process.argv[3] ?? path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'dist');

function read(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parentOf(pid) {
  const stat = read(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** This bench's agents (pid → state directory) and their spawn helpers. */
function findProcesses() {
  const agents = new Map();
  const pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
  for (const pid of pids) {
    const args = (read(`/proc/${pid}/cmdline`) ?? '').split('\0');
    const at = args.indexOf('--state-dir');
    if (at > 0 && args.some((arg) => arg.includes('pitcrew-agent.mjs') && arg.includes(match))) agents.set(pid, args[at + 1]);
  }
  const helpers = pids.filter((pid) => agents.has(parentOf(pid)) && (read(`/proc/${pid}/comm`) ?? '').startsWith('pitcrew-agent'));
  return { agents, helpers };
}

function threadKind(index) {
  if (index === 0) return 'main';
  if (index <= 5) return 'v8';
  return index >= 7 ? 'uv pool' : 'other';
}

/** Per kind of thread, voluntary and involuntary switches, and the process's CPU in clock ticks. */
function sample(pid) {
  const kinds = {};
  const tasks = (() => {
    try {
      return fs.readdirSync(`/proc/${pid}/task`).map(Number).sort((a, b) => a - b);
    } catch {
      return [];
    }
  })();
  tasks.forEach((tid, index) => {
    const status = read(`/proc/${pid}/task/${tid}/status`) ?? '';
    const kind = (kinds[threadKind(index)] ??= { voluntary: 0, involuntary: 0 });
    kind.voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    kind.involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  });
  const stat = read(`/proc/${pid}/stat`);
  const fields = stat ? stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number) : [];
  return { kinds, ticks: (fields[11] ?? 0) + (fields[12] ?? 0), threads: tasks.length };
}

function journalLines(dirs) {
  let lines = 0;
  for (const dir of dirs) lines += (read(path.join(dir, 'journal', 'journal.log'))?.match(/\n/g) ?? []).length;
  return lines;
}

const { agents, helpers } = findProcesses();
if (agents.size === 0) {
  console.error(`no agent of a bench/e2e.js run whose command line contains ${match}`);
  process.exit(1);
}
const roles = { agents: [...agents.keys()], helpers };
const before = Object.fromEntries(Object.entries(roles).map(([role, pids]) => [role, pids.map(sample)]));
const lines0 = journalLines(agents.values());
const t0 = performance.now();
await sleep(seconds * 1000);
const after = Object.fromEntries(Object.entries(roles).map(([role, pids]) => [role, pids.map(sample)]));
const executions = (journalLines(agents.values()) - lines0) / 4;
const elapsed = (performance.now() - t0) / 1000;
console.log(`${elapsed.toFixed(1)} s, ${executions} executions (${(executions / elapsed).toFixed(0)}/s)`);
if (executions <= 0) process.exit(0);
const ticksPerSecond = 100;
for (const [role, samples] of Object.entries(after)) {
  const kinds = {};
  let ticks = 0;
  samples.forEach((end, i) => {
    const start = before[role][i];
    ticks += end.ticks - start.ticks;
    for (const [kind, counts] of Object.entries(end.kinds)) {
      const sum = (kinds[kind] ??= { voluntary: 0, involuntary: 0 });
      sum.voluntary += counts.voluntary - (start.kinds[kind]?.voluntary ?? 0);
      sum.involuntary += counts.involuntary - (start.kinds[kind]?.involuntary ?? 0);
    }
  });
  const per = (n) => (n / executions).toFixed(2);
  const voluntary = Object.values(kinds).reduce((sum, k) => sum + k.voluntary, 0);
  const involuntary = Object.values(kinds).reduce((sum, k) => sum + k.involuntary, 0);
  const byKind = Object.entries(kinds).map(([kind, k]) => `${kind} ${per(k.voluntary)}`).join(', ');
  console.log(`${role} (${samples.length}): ${per(voluntary)} voluntary switches per execution (${byKind}), ${per(involuntary)} involuntary; CPU ${((ticks / ticksPerSecond / executions) * 1e6).toFixed(0)} µs per execution`);
}
