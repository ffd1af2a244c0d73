// End-to-end benchmark (bench/README.md): webhook → agent runs `true` → result stored.
//
// The server and the agents run as child processes on loopback, the way an operator runs them
// (bin/pitcrew.js server, dist/pitcrew-agent.mjs pinned to the server's certificate). This process
// fires the webhooks and reads the agents' logs. Three phases:
//   (a) 1 agent, as many executions per second as it sustains (a fixed number kept in flight);
//   (b) 10 agents, the same, HostName spread round-robin over them;
//   (c) 200 events/s, evenly spaced, for about 10 s over the 10 agents: trigger-to-start latency.
// The baseline, measured in the same run in alternating rounds with (a) and (b), is the machine's
// raw process-spawn rate (bench/spawn-baseline.js): `/bin/sh -c true` started the way the agent
// starts a script, as many spawning processes as there are agents, the same number in flight.
// Every run ends on a count, never a timer, so at the end every fired webhook can be checked: one
// execution each, ended `succeeded`, run exactly once by its own host's agent.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeVersion, envNumber, fmtInt, fmtMs, fmtPct, table } from './common.js';
import { percentile } from './load.js';
import { startNodeRed, NODE_RED_VERSION } from './node-red.js';
import { startPitcrew } from './pitcrew.js';
import { allProcessSeconds, childrenOf, cpuSeconds, ioCalls, machineProcessSeconds, onCleanup, ownCpuSeconds, processLabel, runBench, scheduling, spawnChild, waitFor } from './procs.js';


const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const AGENT_BUNDLE = path.join(root, 'dist/pitcrew-agent.mjs');

const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const DURATION = number('BENCH_E2E_DURATION', 6, 1);
const ROUNDS = Math.round(number('BENCH_E2E_ROUNDS', 3, 1));
const WINDOW = Math.round(number('BENCH_E2E_WINDOW', 64, 1));
const AGENTS = Math.round(number('BENCH_E2E_AGENTS', 10, 2));
const RATE = number('BENCH_E2E_RATE', 200, 1);
const RATE_SECONDS = number('BENCH_E2E_RATE_SECONDS', 10, 1);
// A second, low rate after (c), for reference: the latency of one execution when nothing queues.
const FLOOR_RATE = number('BENCH_E2E_FLOOR_RATE', 20, 0);
const FLOOR_SECONDS = 5;
// Runs per agent (and per spawner) before the rounds: V8 optimises each process's code on its own, so
// ten agents sharing a load each need as many runs as one agent alone. With 300 each, (b)'s agents
// still ran most of their code unoptimised (perf: baseline-tier frames, TurboFan compiling 23 % of
// their CPU) and spent 1,484 µs per run against 756 µs after 2,500.
const WARMUP = Math.round(number('BENCH_E2E_WARMUP', 2500, WINDOW));
/** Extra node flags for the agents, for experiments (e.g. --perf-basic-prof-only-functions for perf). */
const AGENT_FLAGS = (process.env.BENCH_E2E_AGENT_FLAGS ?? '').split(' ').filter(Boolean);
// For profiling one phase alone: e.g. BENCH_E2E_PHASES=a. The default runs them all.
// `peers` (Node-RED, bench/node-red.js) is left out unless named: it installs Node-RED from the npm registry.
const PHASES = new Set((env.BENCH_E2E_PHASES || 'cold,a,b,c').split(',').map((p) => p.trim()));
if ([...PHASES].some((p) => !['cold', 'a', 'b', 'c', 'peers'].includes(p))) throw new Error(`BENCH_E2E_PHASES is a list of cold, a, b, c, peers; got "${env.BENCH_E2E_PHASES}"`);
// The peers phase: pitcrew (one agent) and Node-RED in alternating rounds of the same closed-loop load.
const PEER_ROUNDS = Math.round(number('BENCH_PEERS_ROUNDS', 4, 1));
const PEER_COUNT = Math.round(number('BENCH_PEERS_COUNT', 2000, 1));
const PEER_WINDOW = Math.round(number('BENCH_PEERS_WINDOW', 32, 1));
/** Not reported: each side's code warmed alike (a JIT each), unless (a) ran before. */
const PEER_WARMUP = Math.round(number('BENCH_PEERS_WARMUP', PHASES.has('a') ? 0 : 1000, 0));
const PEER_INGEST_ROUNDS = Math.round(number('BENCH_PEERS_INGEST_ROUNDS', 2, 1));
// Webhooks sent with the agent stopped before the first measured round: the server's path for a
// host offline is still cold after the peers' rounds (session 30: round 1's "no agent" rate was
// half round 2's), and "kept" compares against it.
const PEER_INGEST_WARMUP = Math.round(number('BENCH_PEERS_INGEST_WARMUP', 1000, 0));
const PEER_INGEST_COUNT = Math.round(number('BENCH_PEERS_INGEST_COUNT', 3000, 1));
/** Issue 41: the webhook's answers while executing, as a share of its answers with no agent. */
const INGEST_KEPT_TARGET = 0.8;
/** Issue 41: ahead of Node-RED in every round, by this much. */
const PEER_TARGET = 1.2;
// The cold phase (issue 41): a user's first burst after a deploy. The server and its one agent have
// run nothing yet; the baseline is one spawner process with fewer spawns in flight, as the issue set it.
const COLD_COUNT = Math.round(number('BENCH_E2E_COLD_COUNT', 3000, 1));
const COLD_WINDOW = Math.round(number('BENCH_E2E_COLD_WINDOW', 32, 1));
const COLD_SPAWN_WINDOW = Math.round(number('BENCH_E2E_COLD_SPAWN_WINDOW', 8, 1));
/** Issue 41's goals: the cold burst and the warm rounds of (a), as a share of the raw spawn rate. */
const COLD_SHARE_OF_SPAWN = 0.45;
const WARM_SHARE_OF_SPAWN = 0.6;
// The warm-ups at 200 executions/s and as many spawns, far below what a two-core machine does.
const BUDGET_SECONDS = number('BENCH_E2E_TIMEOUT', 150 + 2 * ROUNDS * 2 * DURATION * 1.5 + RATE_SECONDS * 2 + FLOOR_SECONDS + (WARMUP * (1 + AGENTS) * 2) / 200 + (COLD_COUNT * 2) / 200 + (PHASES.has('peers') ? 900 + (PEER_ROUNDS * PEER_COUNT * 2) / 100 : 0), 10);
const CPU_PROF = env.BENCH_CPU_PROF === '1';
/** No progress (no reply, no finished script) for this long ends the bench as failed. */
const STALL_MS = 30_000;

const TARGET_EXECUTIONS_PER_SECOND = 1000;
const TARGET_SHARE_OF_SPAWN = 0.7;
/** Issue 23's goal for the execution path: at least this share of the raw spawn rate, in the same run. */
const ISSUE_SHARE_OF_SPAWN = 0.45;
const TARGET_P50_MS = 5;
const TARGET_P99_MS = 25;

const PENDING_SQL = "select count(*) as n from executions where state in ('queued', 'dispatched', 'running')";

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench-e2e: ${line}\n`);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
// Taken at the start (by bench/run.js right after `npm run build`): the tree may change while the bench runs.
const codeAtStart = env.BENCH_E2E_CODE_VERSION || codeVersion(root, ['src', 'agent', 'package.json', 'bin']);
const hostName = (i) => `e2e-${i}`;

// ---------------------------------------------------------------------------------------------
// What the agents say: every run they start and finish, from their JSON log lines on stderr.

const agentLog = {
  /** execution id → the agents (host names) that logged "running a script" for it */
  runs: new Map(),
  finished: 0,
  endings: {},
  warnings: [],
  warningCount: 0,
  /** called after each "script finished" */
  onFinished: () => undefined,
};

function readAgentLines(name, stream) {
  let rest = '';
  stream.on('data', (chunk) => {
    rest += chunk;
    let at;
    while ((at = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, at);
      rest = rest.slice(at + 1);
      agentLine(name, line);
    }
  });
}

function agentLine(name, line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return;
  }
  if (entry.msg === 'running a script') {
    const hosts = agentLog.runs.get(entry.executionId);
    if (hosts) hosts.push(name);
    else agentLog.runs.set(entry.executionId, [name]);
  } else if (entry.msg === 'script finished') {
    agentLog.finished += 1;
    const key = `${entry.ending}${entry.exitCode === null ? '' : ` ${entry.exitCode}`}`;
    agentLog.endings[key] = (agentLog.endings[key] ?? 0) + 1;
    agentLog.onFinished();
  } else if (entry.level !== 'info') {
    agentLog.warningCount += 1;
    if (agentLog.warnings.length < 5) agentLog.warnings.push(`${name}: ${line.slice(0, 300)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Firing webhooks: plain node:http with keep-alive, so that this process spends little CPU on it.

const fires = [];
// No socket limit: a webhook waiting for a free socket here would count its wait as pitcrew's.
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** One webhook call. The record gets status, eventId and executionIds when the reply is in. */
function fire(target, phase, host, onDone) {
  const body = JSON.stringify({ HostName: host });
  const record = { phase, host, sentAt: Date.now(), sentPerf: performance.now(), replyMs: NaN, status: 0, eventId: null, executionIds: [], error: null };
  fires.push(record);
  const req = http.request(
    { agent: httpAgent, host: '127.0.0.1', port: target.port, path: target.path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
    (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        record.replyMs = performance.now() - record.sentPerf;
        record.status = res.statusCode;
        try {
          const reply = JSON.parse(text);
          record.eventId = reply.eventId ?? null;
          record.executionIds = Array.isArray(reply.executionIds) ? reply.executionIds : [];
        } catch {
          record.error = `unparsable reply: ${text.slice(0, 200)}`;
        }
        if (res.statusCode !== 202 && !record.error) record.error = `${res.statusCode}: ${text.slice(0, 200)}`;
        onDone(record);
      });
    },
  );
  req.setTimeout(10_000, () => req.destroy(new Error('no reply within 10 s')));
  req.once('error', (error) => {
    if (record.status) return;
    record.error = error.message;
    onDone(record);
  });
  req.end(body);
  return record;
}

/** A fire that will not produce exactly one execution (nothing to wait for). */
const misfired = (r) => r.status !== 202 || r.executionIds.length !== 1;

// ---------------------------------------------------------------------------------------------
// CPU use during a run, per group of processes, as a share of one core.

function cpuSnapshot(groups) {
  const s = { wall: performance.now(), machine: machineProcessSeconds(), own: ownCpuSeconds(), groups: {}, pids: groups, procs: allProcessSeconds() };
  for (const [key, pids] of Object.entries(groups)) s.groups[key] = pids.reduce((sum, pid) => sum + cpuSeconds(pid, true), 0);
  s.calls = {};
  for (const [key, pids] of Object.entries(groups)) {
    s.calls[key] = pids.reduce((sum, pid) => {
      const c = ioCalls(pid);
      return { reads: sum.reads + c.reads, writes: sum.writes + c.writes };
    }, { reads: 0, writes: 0 });
  }
  return s;
}

/** The other processes that used the most CPU between two snapshots, e.g. "node .bin/vitest [4242] 35 %, jbd2/vda-8 [310] 4 %". */
function topOthers(a, b, window, exclude) {
  const byLabel = new Map();
  for (const [pid, { comm, seconds }] of b.procs) {
    if (exclude.has(pid)) continue;
    const used = seconds - (a.procs.get(pid)?.seconds ?? 0);
    if (used <= 0) continue;
    const label = processLabel(pid, comm);
    const entry = byLabel.get(label) ?? { used: 0, pids: [] };
    entry.used += used;
    entry.pids.push(pid);
    byLabel.set(label, entry);
  }
  return [...byLabel].filter(([, e]) => e.used / window >= 0.01).sort((x, y) => y[1].used - x[1].used).slice(0, 3)
    .map(([label, e]) => `${label} [${e.pids.length > 2 ? `${e.pids.length} pids` : e.pids.join(',')}] ${((e.used / window) * 100).toFixed(0)} %`).join(', ');
}

/** extra: CPU seconds of processes that ended during the run (the spawners report their own). */
function cpuShares(a, b, extra = {}, extraPids = []) {
  const window = (b.wall - a.wall) / 1000;
  const out = { window, bench: (b.own - a.own) / window };
  let known = b.own - a.own;
  for (const key of Object.keys(a.groups)) {
    const used = b.groups[key] - a.groups[key];
    out[key] = used / window;
    known += used;
  }
  for (const [key, used] of Object.entries(extra)) {
    out[key] = used / window;
    known += used;
  }
  out.other = Math.max(0, b.machine - a.machine - known) / window;
  out.calls = Object.fromEntries(Object.keys(a.calls).map((key) => [key, { reads: b.calls[key].reads - a.calls[key].reads, writes: b.calls[key].writes - a.calls[key].writes }]));
  if ('agentsOwn' in out) out.agents = out.agentsOwn + out.helpers;
  const ours = new Set([process.pid, ...Object.values(b.pids).flat(), ...(extraPids ?? [])]);
  out.top = topOthers(a, b, window, ours);
  return out;
}

/** CPU seconds of a group per execution (or spawn) of a run. */
function cpuPerRun(run, group) {
  return (run.cpu[group] * run.cpu.window) / run.ok;
}

const perRun = (run, group) => `${fmtInt(cpuPerRun(run, group) * 1e6)} µs`;
const fmtX = (n) => `${n.toFixed(2)} ×`;

// ---------------------------------------------------------------------------------------------

async function main() {
  const startedAt = Date.now();
  if (!fs.existsSync(AGENT_BUNDLE) || !fs.existsSync(path.join(root, 'dist/src/cli/main.js'))) throw new Error('dist/ is not built: run npm run build first');
  const profDir = path.join(benchDir, 'profiles');
  const nodeFlags = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const profsBefore = CPU_PROF && fs.existsSync(profDir) ? new Set(fs.readdirSync(profDir)) : new Set();
  const { tmp, dataDir, storage, server, port, tlsPort, apiKey, api, webhookPath } = await startPitcrew({
    root, env, tempPrefix: 'pitcrew-e2e-', ruleName: 'e2e', nodeFlags, progress,
  });
  const serverNotes = watchServerLog(server);
  // The fingerprint the server prints at info level, computed the same way from its certificate.
  const certFile = path.join(dataDir, 'tls', 'cert.pem');
  await waitFor(server, async () => fs.existsSync(certFile), 10_000, 'the TLS certificate');
  const fingerprint = new X509Certificate(fs.readFileSync(certFile)).fingerprint256;

  const target = { port, path: webhookPath };

  // --- agents ---
  const agents = [];
  const startAgent = (i) => {
    const name = hostName(i);
    const args = [...nodeFlags, ...AGENT_FLAGS, AGENT_BUNDLE, '--server', `https://127.0.0.1:${tlsPort}`, '--hostname', name, '--server-fingerprint', fingerprint, '--state-dir', path.join(tmp, 'agents', name)];
    if (process.getuid?.() === 0) args.push('--allow-root');
    // The API key through the environment, as docs/agent.md recommends; nothing else of ours leaks in.
    const handle = spawnChild(`agent ${name}`, args, { cwd: tmp, env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: tmp, PITCREW_API_KEY: apiKey } });
    readAgentLines(name, handle.child.stderr);
    handle.closed = new Promise((resolve) => handle.child.once('close', resolve));
    handle.hostName = name;
    agents.push(handle);
    return handle;
  };
  const online = (handle) =>
    waitFor(handle, async () => (await api('GET', `/api/v1/hosts?hostname=${handle.hostName}`)).items[0]?.status === 'online', 30_000, `${handle.hostName} online`);

  const reader = await storage.openReader();
  const pendingCount = async () => Number((await reader.all(PENDING_SQL))[0].n);
  // The last transition to an end state: the moment the last result was stored (server clock).
  const lastStoredAt = async () => Number((await reader.all("select max(at) as at from execution_transitions where to_state in ('succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired')"))[0].at);

  // The agents apart from their spawn helpers, which start the scripts (the helpers' CPU includes the scripts').
  const cpuGroups = () => {
    const agentPids = agents.map((a) => a.pid);
    return { server: [server.pid], agentsOwn: agentPids, helpers: childrenOf(agentPids) };
  };
  const alive = () => {
    for (const child of [server, ...agents]) if (!child.alive()) throw new Error(`${child.name} exited during the run:\n${child.output()}`);
  };
  let expectedExecutions = 0;

  /**
   * Waits until every execution fired so far has ended and its result is stored; fails after
   * STALL_MS without one ending (a backlog of 1,500 runs on a saturated machine takes longer than that).
   */
  async function allStored(what) {
    let deadline = Date.now() + STALL_MS;
    let pending = Infinity;
    for (;;) {
      alive();
      const now = await pendingCount();
      if (now === 0) return;
      if (now < pending) [pending, deadline] = [now, Date.now() + STALL_MS];
      if (Date.now() > deadline) {
        const byState = await reader.all('select state, count(*) as n from executions group by state');
        throw new Error(`${what}: no execution ended for ${STALL_MS / 1000} s: ${JSON.stringify(byState)}`);
      }
      await sleep(5);
    }
  }

  /**
   * Max throughput: `amount` webhooks, keeping `window` executions in flight (fired, not yet
   * finished on an agent), HostName round-robin over `hosts`. Ends when all results are stored.
   */
  async function runMax(phase, hosts, amount, window) {
    let fired = 0;
    let misfires = 0;
    let replies = 0;
    const finished0 = agentLog.finished;
    let lastProgress = Date.now();
    let resolveDone;
    const done = new Promise((resolve) => (resolveDone = resolve));
    const records = [];
    const check = () => {
      const finished = agentLog.finished - finished0;
      if (replies === amount && finished + misfires >= amount) resolveDone();
    };
    const pump = () => {
      lastProgress = Date.now();
      while (fired < amount && fired - (agentLog.finished - finished0) - misfires < window) {
        const host = hosts[fired % hosts.length];
        fired += 1;
        records.push(fire(target, phase, host, (r) => {
          replies += 1;
          lastProgress = Date.now();
          if (misfired(r)) {
            misfires += 1;
            pump();
          }
          check();
        }));
      }
      check();
    };
    const c0 = cpuSnapshot(cpuGroups());
    agentLog.onFinished = pump;
    const stall = setInterval(() => {
      if (Date.now() - lastProgress > STALL_MS) resolveDone(new Error(`${phase}: no progress for ${STALL_MS / 1000} s (${fired} fired, ${replies} replies, ${agentLog.finished - finished0} finished)`));
      if (!server.alive() || agents.some((a) => !a.alive())) resolveDone(new Error(`${phase}: a child process exited`));
    }, 250);
    pump();
    const failure = await done;
    clearInterval(stall);
    agentLog.onFinished = () => undefined;
    if (failure) throw failure;
    expectedExecutions += amount - misfires;
    await allStored(phase);
    const c1 = cpuSnapshot(cpuGroups());
    const firstSent = Math.min(...records.map((r) => r.sentAt));
    const last = await lastStoredAt();
    const ok = amount - misfires;
    await sleep(300); // let the writers settle before the next run
    return { kind: 'e2e', phase, amount, ok, misfires, window, firstSent, seconds: (last - firstSent) / 1000, rate: ok / ((last - firstSent) / 1000), cpu: cpuShares(c0, c1) };
  }

  /** The baseline: `processes` spawners, `count` spawns in all, `window` in flight in all. */
  async function runBaseline(processes, count, window) {
    const spawners = [];
    const results = [];
    const cwd = path.join(tmp, 'spawn-cwd');
    fs.mkdirSync(cwd, { recursive: true });
    for (let i = 0; i < processes; i++) {
      const share = Math.floor(count / processes) + (i < count % processes ? 1 : 0);
      const lanes = Math.max(1, Math.floor(window / processes) + (i < window % processes ? 1 : 0));
      const s = spawnChild(`spawner ${i}`, [path.join(benchDir, 'spawn-baseline.js'), String(share), String(lanes), cwd], { cwd: tmp, env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: tmp } });
      s.result = new Promise((resolve) => {
        let rest = '';
        s.child.stdout.on('data', (chunk) => {
          rest += chunk;
          for (const line of rest.split('\n').slice(0, -1)) {
            let parsed;
            try {
              parsed = JSON.parse(line);
            } catch {
              continue;
            }
            if (parsed.ready) s.ready = true;
            else resolve(parsed);
          }
          rest = rest.slice(rest.lastIndexOf('\n') + 1);
        });
        // 'close', not 'exit': the result line may still be in the pipe when the process exits.
        s.child.once('close', () => resolve(null));
      });
      spawners.push(s);
    }
    for (const s of spawners) await waitFor(s, async () => s.ready, 15_000, 'the spawner to start');
    const c0 = cpuSnapshot(cpuGroups());
    for (const s of spawners) s.child.kill('SIGUSR2');
    for (const s of spawners) {
      const r = await s.result;
      if (!r) throw new Error(`${s.name} exited without a result (exit ${s.child.exitCode ?? s.child.signalCode}):\n${s.output()}`);
      results.push(r);
    }
    const c1 = cpuSnapshot(cpuGroups());
    for (const s of spawners) await s.exited;
    const ok = results.reduce((n, r) => n + r.ok, 0);
    const failed = results.reduce((n, r) => n + r.failed, 0);
    const seconds = (Math.max(...results.map((r) => r.endedAt)) - Math.min(...results.map((r) => r.startedAt))) / 1000;
    const spawnerCpu = results.reduce((n, r) => n + r.cpuSelf + r.cpuChildren, 0);
    await sleep(300);
    return { kind: 'spawn', amount: count, ok, failed, window, processes, seconds, rate: ok / seconds, cpu: cpuShares(c0, c1, { spawners: spawnerCpu }, spawners.map((sp) => sp.pid)) };
  }

  /** (a) and (b): a warm-up of each, then alternating rounds; the median round of each is reported. */
  async function maxPhase(label, key, hosts) {
    const processes = hosts.length;
    // Per process: each agent and each spawner is warmed as (a)'s one is (see WARMUP).
    const warmup = WARMUP * processes;
    progress(`${label}: warm-up, ${warmup} executions and ${warmup} spawns`);
    const warm = { e2e: await runMax(`${key} warm-up`, hosts, warmup, WINDOW), spawn: await runBaseline(processes, warmup, WINDOW) };
    const last = { e2e: warm.e2e.rate, spawn: warm.spawn.rate };
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results = {};
      for (const which of round % 2 === 0 ? ['e2e', 'spawn'] : ['spawn', 'e2e']) {
        const amount = Math.max(WINDOW * 4, Math.round(Math.max(last[which], 50) * DURATION));
        progress(`${label}: round ${round + 1}/${ROUNDS}, ${which === 'e2e' ? `${amount} webhooks` : `${amount} spawns`}, ~${DURATION} s`);
        results[which] = which === 'e2e' ? await runMax(`${key} round ${round + 1}`, hosts, amount, WINDOW) : await runBaseline(processes, amount, WINDOW);
        last[which] = results[which].rate;
      }
      rounds.push(results);
    }
    const median = (which) => [...rounds.map((r) => r[which])].sort((x, y) => x.rate - y.rate)[Math.floor((rounds.length - 1) / 2)];
    return { label, key, hosts, warm, rounds, results: { e2e: median('e2e'), spawn: median('spawn') } };
  }

  /** (c): `count` webhooks at `rate`/s, evenly spaced, HostName round-robin over `hosts`. */
  async function runRate(key, hosts, rate, count) {
    const interval = 1000 / rate;
    const lags = [];
    let replies = 0;
    let misfires = 0;
    const records = [];
    const c0 = cpuSnapshot(cpuGroups());
    const t0 = performance.now() + 20;
    for (let i = 0; i < count; i++) {
      const due = t0 + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait - 0.5);
      while (performance.now() < due); // the last half millisecond: spin, timers are too coarse
      lags.push(performance.now() - due);
      records.push(fire(target, key, hosts[i % hosts.length], (r) => {
        replies += 1;
        if (misfired(r)) misfires += 1;
      }));
      if (i % 100 === 0) alive();
    }
    const sendSeconds = (performance.now() - t0) / 1000;
    const deadline = Date.now() + STALL_MS;
    while (replies < count) {
      if (Date.now() > deadline) throw new Error(`rate phase: ${count - replies} webhooks unanswered after ${STALL_MS / 1000} s`);
      await sleep(5);
    }
    expectedExecutions += count - misfires;
    await allStored('rate phase');
    const c1 = cpuSnapshot(cpuGroups());
    lags.sort((a, b) => a - b);
    const storedSeconds = ((await lastStoredAt()) - Math.min(...records.map((r) => r.sentAt))) / 1000;
    return {
      key, count, ok: count - misfires, misfires, rate, sendSeconds, storedSeconds,
      deliveredRate: count / (sendSeconds + interval / 1000), lagP99: percentile(lags, 0.99), lagMax: lags[lags.length - 1], cpu: cpuShares(c0, c1),
    };
  }

  /** A peer's closed loop: `count` POSTs, `window` in flight; each ends with its reply, sent once the command ended. */
  async function runPeer(peer, count, window) {
    let sent = 0;
    let ok = 0;
    const errors = [];
    const c0 = cpuSnapshot({ ...cpuGroups(), peer: [peer.child.pid] });
    const t0 = performance.now();
    let last = t0;
    const ends = [];
    await new Promise((resolve) => {
      const next = () => {
        if (sent >= count) return;
        sent += 1;
        const body = JSON.stringify({ HostName: hostName(0) });
        const req = http.request({ agent: httpAgent, host: '127.0.0.1', port: peer.port, path: peer.path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) ok += 1;
            else if (errors.length < 3) errors.push(`HTTP ${res.statusCode}`);
            done();
          });
        });
        req.setTimeout(10_000, () => req.destroy(new Error('no reply within 10 s')));
        req.once('error', (error) => {
          if (errors.length < 3) errors.push(error.message);
          done();
        });
        req.end(body);
      };
      let finished = 0;
      const done = () => {
        finished += 1;
        last = performance.now();
        ends.push(last - t0);
        if (finished === count) resolve();
        else next();
      };
      for (let i = 0; i < Math.min(window, count); i++) next();
    });
    const c1 = cpuSnapshot({ ...cpuGroups(), peer: [peer.child.pid] });
    if (ok !== count) throw new Error(`Node-RED answered ${ok} of ${count} requests 200 (${errors.join('; ')})`);
    await sleep(300);
    return { kind: 'peer', ok, seconds: (last - t0) / 1000, rate: ok / ((last - t0) / 1000), halves: halfRates(ends), cpu: cpuShares(c0, c1) };
  }

  /**
   * The webhook's answers while the agent executes, against while no agent runs (issue 41: >= 0.8).
   * A closed loop on the replies alone: `window` webhooks awaiting their 202, whatever the
   * executions do. With no agent their executions wait queued; the agent, started again, runs them.
   */
  async function replyLoop(label, count, window) {
    let sent = 0;
    let replies = 0;
    let misfires = 0;
    const records = [];
    const c0 = cpuSnapshot(cpuGroups());
    const s0 = schedStat(server.pid);
    await new Promise((resolve) => {
      const next = () => {
        if (sent >= count) return;
        sent += 1;
        records.push(fire(target, label, hostName(0), (r) => {
          replies += 1;
          if (misfired(r)) misfires += 1;
          if (replies === count) resolve();
          else next();
        }));
      };
      for (let i = 0; i < Math.min(window, count); i++) next();
    });
    const c1 = cpuSnapshot(cpuGroups());
    const s1 = schedStat(server.pid);
    expectedExecutions += count - misfires;
    const seconds = (Math.max(...records.map((r) => r.sentPerf + r.replyMs)) - Math.min(...records.map((r) => r.sentPerf))) / 1000;
    const thread = s0 && s1 && { running: (s1.runNs - s0.runNs) / 1e6 / (c1.wall - c0.wall), waiting: (s1.waitNs - s0.waitNs) / 1e6 / (c1.wall - c0.wall) };
    return { ok: count - misfires, seconds, rate: (count - misfires) / seconds, cpu: cpuShares(c0, c1), thread };
  }

  /** Webhooks answered while the agent is stopped (their executions wait queued), then the agent back to run them. */
  async function withoutAgent(label, count) {
    const agent = agents.splice(agents.findIndex((a) => a.hostName === hostName(0)), 1)[0];
    await agent.stop(15_000);
    // Offline on the server too, so that no webhook of the round is dispatched to the closing connection.
    await waitFor(server, async () => (await api('GET', `/api/v1/hosts?hostname=${hostName(0)}`)).items[0]?.status !== 'online', 30_000, `${hostName(0)} offline`);
    const result = await replyLoop(label, count, PEER_WINDOW);
    await online(startAgent(0));
    return result;
  }

  async function ingestRounds() {
    if (PEER_INGEST_WARMUP > 0) {
      progress(`peers: webhook replies, warm-up, no agent, ${PEER_INGEST_WARMUP} webhooks`);
      await withoutAgent('ingest warm-up', PEER_INGEST_WARMUP);
      await allStored('webhook replies');
    }
    const rounds = [];
    for (let round = 0; round < PEER_INGEST_ROUNDS; round++) {
      const results = {};
      for (const which of round % 2 === 0 ? ['idle', 'executing'] : ['executing', 'idle']) {
        progress(`peers: webhook replies, round ${round + 1}/${PEER_INGEST_ROUNDS}, ${which === 'idle' ? 'no agent' : 'the agent executing'}, ${PEER_INGEST_COUNT} webhooks`);
        if (which === 'idle') {
          results.idle = await withoutAgent(`ingest idle ${round + 1}`, PEER_INGEST_COUNT);
        } else {
          results.executing = await replyLoop(`ingest executing ${round + 1}`, PEER_INGEST_COUNT, PEER_WINDOW);
        }
        await allStored('webhook replies');
      }
      rounds.push(results);
    }
    return rounds;
  }

  const maxPhases = [];
  // --- (a) one agent: the others are not started yet ---
  progress('starting agent e2e-0');
  await online(startAgent(0));
  // --- cold: nothing has run on the server or the agent yet ---
  let cold;
  if (PHASES.has('cold')) {
    progress(`cold: ${COLD_COUNT} webhooks, ${COLD_WINDOW} in flight, then ${COLD_COUNT} spawns from one process, ${COLD_SPAWN_WINDOW} in flight`);
    cold = { e2e: await runMax('cold', [hostName(0)], COLD_COUNT, COLD_WINDOW), spawn: await runBaseline(1, COLD_COUNT, COLD_SPAWN_WINDOW) };
  }
  if (PHASES.has('a')) maxPhases.push(await maxPhase('(a) 1 agent', 'a', [hostName(0)]));

  // --- peers: Node-RED with the same load, alternating with pitcrew's one agent ---
  let peers;
  if (PHASES.has('peers')) {
    const red = await startNodeRed({ tmp, env, progress });
    if (PEER_WARMUP > 0) {
      progress(`peers: warm-up, ${PEER_WARMUP} webhooks to each`);
      await runMax('peers warm-up', [hostName(0)], PEER_WARMUP, PEER_WINDOW);
      await runPeer(red, PEER_WARMUP, PEER_WINDOW);
    }
    const rounds = [];
    for (let round = 0; round < PEER_ROUNDS; round++) {
      const results = {};
      for (const which of round % 2 === 0 ? ['pitcrew', 'nodeRed'] : ['nodeRed', 'pitcrew']) {
        progress(`peers: round ${round + 1}/${PEER_ROUNDS}, ${which === 'pitcrew' ? 'pitcrew' : 'Node-RED'}, ${PEER_COUNT} webhooks, ${PEER_WINDOW} in flight`);
        results[which] = which === 'pitcrew' ? await runMax(`peers round ${round + 1}`, [hostName(0)], PEER_COUNT, PEER_WINDOW) : await runPeer(red, PEER_COUNT, PEER_WINDOW);
      }
      rounds.push(results);
    }
    await red.child.stop(5000);
    peers = { rounds, ingest: await ingestRounds() };
  }

  // --- (b) ten agents ---
  const allHosts = Array.from({ length: AGENTS }, (_, i) => hostName(i));
  if (PHASES.has('b') || PHASES.has('c')) {
    progress(`starting agents e2e-1 … e2e-${AGENTS - 1}`);
    for (let i = 1; i < AGENTS; i++) startAgent(i);
    await Promise.all(agents.map(online));
  }
  if (PHASES.has('b')) maxPhases.push(await maxPhase(`(b) ${AGENTS} agents`, 'b', allHosts));

  // --- (c) fixed rate ---
  const ratePhases = [];
  if (PHASES.has('c')) {
    for (const [key, rate, seconds] of [['c', RATE, RATE_SECONDS], ['c-floor', FLOOR_RATE, FLOOR_SECONDS]]) {
      if (!rate) continue;
      const count = Math.max(1, Math.round(rate * seconds));
      progress(`(${key}) ${rate}/s over ${AGENTS} agents: ${count} webhooks, ~${seconds} s`);
      ratePhases.push(await runRate(key, allHosts, rate, count));
    }
  }

  // --- stop everything, then read what was stored ---
  progress('stopping the agents and the server; verifying what was stored');
  await reader.close();
  // One SIGTERM each (a second one would kill an agent before it wrote its journal and profile).
  const agentExits = await Promise.all(agents.map(async (a) => {
    const r = await a.stop(15_000);
    await Promise.race([a.closed, sleep(2000)]);
    return r.code ?? r.signal;
  }));
  const stopped = await server.stop(15_000);
  const profiles = [];
  if (CPU_PROF && fs.existsSync(profDir)) {
    for (const f of fs.readdirSync(profDir).filter((name) => name.endsWith('.cpuprofile') && !profsBefore.has(name))) {
      // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread.
      const [pid, thread] = f.split('.').slice(3, 5).map(Number);
      const name = pid === server.pid ? 'pitcrew server' : agents.find((a) => a.pid === pid)?.name;
      if (name) profiles.push([`${name}${thread ? ` (worker thread ${thread})` : ''}`, path.join(profDir, f)]);
    }
    // The server's threads first, then the agents in name order.
    profiles.sort(([a], [b]) => (a.startsWith('pitcrew') === b.startsWith('pitcrew') ? a.localeCompare(b, 'en', { numeric: true }) : a.startsWith('pitcrew') ? -1 : 1));
  }

  const final = await storage.openReader();
  const rows = await final.all('select id, event_id, hostname, state, exit_code, queued_at, dispatched_at, started_at, finished_at from executions');
  const transitions = await final.all('select execution_id, to_state, at from execution_transitions');
  await final.close();
  const events = await storage.countEvents();

  const verification = verify({ rows, transitions, events, expectedExecutions });
  for (const r of ratePhases) r.latency = latencies(verification.byId, r.key);
  for (const p of maxPhases) p.stages = latencies(verification.byId, p.results.e2e.phase);
  if (cold) cold.stages = latencies(verification.byId, 'cold');
  report({ storage, cold, peers, phases: maxPhases, ratePhases, verification, serverNotes, agentExits, stopped, profiles, seconds: (Date.now() - startedAt) / 1000 });
  return verification.ok;
}

/** Warnings and errors in the server's log (level warn is all it prints here). */
function watchServerLog(server) {
  const notes = { count: 0, first: [] };
  const watch = (chunk) => {
    for (const line of String(chunk).split('\n')) {
      if (!line.trim()) continue;
      notes.count += 1;
      if (notes.first.length < 5) notes.first.push(line.slice(0, 300));
    }
  };
  server.child.stdout.on('data', watch);
  server.child.stderr.on('data', watch);
  return notes;
}

// ---------------------------------------------------------------------------------------------
// Verification: every fired webhook → exactly one execution, ended succeeded, run exactly once.

function verify({ rows, transitions, events, expectedExecutions }) {
  const byId = new Map(rows.map((r) => [r.id, { ...r, transitions: [] }]));
  for (const t of transitions) byId.get(t.execution_id)?.transitions.push(t);
  const v = {
    fired: fires.length,
    accepted: fires.filter((f) => f.status === 202).length,
    errors: fires.filter((f) => f.error).length,
    firstErrors: fires.filter((f) => f.error).slice(0, 3).map((f) => f.error),
    notOneExecution: fires.filter((f) => f.status === 202 && f.executionIds.length !== 1).length,
    events,
    executions: rows.length,
    expectedExecutions,
    unknown: 0,
    notSucceeded: {},
    wrongHost: 0,
    badTransitions: 0,
    runsOnce: 0,
    runProblems: [],
    byId,
  };
  const fired = new Set();
  for (const f of fires) {
    for (const id of f.executionIds) {
      fired.add(id);
      const row = byId.get(id);
      if (!row) {
        v.unknown += 1;
        continue;
      }
      row.fire = f;
      if (row.state !== 'succeeded' || Number(row.exit_code) !== 0) v.notSucceeded[row.state] = (v.notSucceeded[row.state] ?? 0) + 1;
      if (row.hostname !== f.host) v.wrongHost += 1;
      const states = row.transitions.map((t) => t.to_state).sort().join(',');
      if (states !== 'dispatched,queued,running,succeeded') v.badTransitions += 1;
      const ran = agentLog.runs.get(id) ?? [];
      if (ran.length === 1 && ran[0] === f.host) v.runsOnce += 1;
      else if (v.runProblems.length < 3) v.runProblems.push(`${id}: run by [${ran.join(', ')}], addressed to ${f.host}`);
    }
  }
  v.extraExecutions = rows.filter((r) => !fired.has(r.id)).length;
  v.runsOfUnknownIds = [...agentLog.runs.keys()].filter((id) => !fired.has(id)).length;
  v.ok = v.accepted === v.fired && v.errors === 0 && v.notOneExecution === 0 && v.events === v.fired && v.executions === v.fired
    && v.executions === expectedExecutions && v.unknown === 0 && v.extraExecutions === 0 && Object.keys(v.notSucceeded).length === 0
    && v.wrongHost === 0 && v.badTransitions === 0 && v.runsOnce === v.fired && v.runsOfUnknownIds === 0;
  return v;
}

/** Latency figures (ms) of one phase's executions, from the stored times (all epoch ms, one clock). */
function latencies(byId, phase) {
  const spans = {
    triggerToStart: [],
    queuedToDispatched: [],
    dispatchedToStarted: [],
    sentToQueued: [],
    sentToStarted: [],
    startedToFinished: [],
    finishedToStored: [],
    triggerToStored: [],
    sentToStored: [],
    reply: [],
  };
  for (const row of byId.values()) {
    if (row.fire?.phase !== phase || row.state !== 'succeeded') continue;
    const n = (x) => (x === null || x === undefined ? NaN : Number(x));
    const [queued, dispatched, started, finished, sent] = [n(row.queued_at), n(row.dispatched_at), n(row.started_at), n(row.finished_at), row.fire.sentAt];
    const stored = n(row.transitions.find((t) => t.to_state === 'succeeded')?.at);
    spans.triggerToStart.push(started - queued);
    spans.queuedToDispatched.push(dispatched - queued);
    spans.dispatchedToStarted.push(started - dispatched);
    spans.sentToQueued.push(queued - sent);
    spans.sentToStarted.push(started - sent);
    spans.startedToFinished.push(finished - started);
    spans.finishedToStored.push(stored - finished);
    spans.triggerToStored.push(stored - queued);
    spans.sentToStored.push(stored - sent);
    spans.reply.push(row.fire.replyMs);
  }
  const out = {};
  for (const [key, values] of Object.entries(spans)) {
    const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
    out[key] = { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1], mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Output

function report({ storage, cold, peers, phases, ratePhases, verification: v, serverNotes, agentExits, stopped, profiles, seconds }) {
  const cpu = os.cpus();
  log();
  log('pitcrew end-to-end benchmark: webhook → agent runs `true` → result stored');
  log(`  storage      ${storage.describe}`);
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}`);
  log(`  code         ${codeAtStart} (at the start); load average before the run ${loadBefore}`);
  log(`  scheduling   ${scheduling()}`);
  log(`  agents       dist/pitcrew-agent.mjs over TLS (pinned) on loopback; rule target trigger_host, script \`true\` (sh)`);
  log(`  load         node:http keep-alive from this process; max runs keep ${WINDOW} executions in flight (fired, not yet finished), ~${DURATION} s each`);
  log(`  baseline     \`/bin/sh -c true\` spawned the agent's way (bench/spawn-baseline.js), one spawner process per agent, ${WINDOW} in flight in all`);
  log();

  if (cold) reportCold(cold);
  if (peers) reportPeers(peers, v.byId);
  const rows = [['phase', 'figure', 'pitcrew e2e', 'raw spawn', 'e2e / spawn']];
  for (const p of phases) {
    const a = p.results.e2e;
    const b = p.results.spawn;
    rows.push([`${p.label}, max`, 'executions/s', fmtInt(a.rate), fmtInt(b.rate), fmtPct(a.rate / b.rate)]);
    if (p.rounds.length > 1) {
      const span = (which) => {
        const values = p.rounds.map((r) => r[which].rate);
        return `${fmtInt(Math.min(...values))}–${fmtInt(Math.max(...values))}`;
      };
      const ratios = p.rounds.map((r) => r.e2e.rate / r.spawn.rate);
      rows.push([`  median of ${p.rounds.length} rounds`, 'round range', span('e2e'), span('spawn'), `${(Math.min(...ratios) * 100).toFixed(1)}–${fmtPct(Math.max(...ratios))}`]);
    }
    rows.push(['', 'count, seconds', `${fmtInt(a.ok)}, ${a.seconds.toFixed(1)}`, `${fmtInt(b.ok)}, ${b.seconds.toFixed(1)}`, '']);
    rows.push(['', 'server CPU', fmtPct(a.cpu.server), fmtPct(b.cpu.server), '']);
    rows.push(['', 'agents CPU (+ scripts)', fmtPct(a.cpu.agents), fmtPct(b.cpu.agents), '']);
    rows.push(['', 'spawners CPU (+ sh)', '', fmtPct(b.cpu.spawners), '']);
    rows.push(['', 'CPU/execution: server', perRun(a, 'server'), '', '']);
    rows.push(['', '  agents, spawners (+ sh)', perRun(a, 'agents'), perRun(b, 'spawners'), fmtX(cpuPerRun(a, 'agents') / cpuPerRun(b, 'spawners'))]);
    rows.push(['', '    agents alone', perRun(a, 'agentsOwn'), '', '']);
    rows.push(['', '    spawn helpers (+ sh)', perRun(a, 'helpers'), '', '']);
    rows.push(['', 'bench CPU', fmtPct(a.cpu.bench), fmtPct(b.cpu.bench), '']);
    rows.push(['', 'other procs CPU', fmtPct(a.cpu.other), fmtPct(b.cpu.other), '']);
  }
  if (phases.length) {
    log(table(rows));
    log('  executions/s: webhooks fired ÷ (last result stored − first webhook sent); raw spawn: spawns ÷ (last exit − first spawn).');
    log('  CPU: share of one core used during the run by the server / the agents and the scripts they ran / the spawners and their');
    log('       shells / this process / all other processes on the machine (more than a few % there means the run was disturbed).');
    log('  CPU/execution: CPU time of the group over the run ÷ executions (or spawns); it moves less than the rates when the VM drifts.');
    for (const p of phases) {
      const top = ['e2e', 'spawn'].map((w) => p.results[w].cpu.top && `${w === 'e2e' ? 'pitcrew e2e' : 'raw spawn'}: ${p.results[w].cpu.top}`).filter(Boolean);
      if (top.length) log(`  ${p.label}, busiest other processes (median rounds): ${top.join('; ')}`);
    }
    log();
    // In a closed loop every execution waits somewhere: the stage holding most of the in-flight
    // executions is the one that limits the rate (Little's law: in flight = rate × time in system).
    const srows = [['where the time goes at max (median round)', 'clock', ...phases.map((p) => `${p.key === 'a' ? '(a)' : '(b)'} mean ms`), ...phases.map((p) => `${p.key === 'a' ? '(a)' : '(b)'} p50 ms`)]];
    const stage = (label, clock, key) => srows.push([label, clock, ...phases.map((p) => fmtMs(p.stages[key].mean)), ...phases.map((p) => fmtMs(p.stages[key].p50))]);
    stage('webhook sent → queued (HTTP in)', 'bench → server', 'sentToQueued');
    stage('webhook sent → 202 reply (event stored)', 'bench', 'reply');
    stage('queued → dispatched', 'server', 'queuedToDispatched');
    stage('dispatched → started', 'server → agent', 'dispatchedToStarted');
    stage('started → finished (the script)', 'agent', 'startedToFinished');
    stage('finished → result stored', 'agent → server', 'finishedToStored');
    stage('webhook sent → result stored', 'bench → server', 'sentToStored');
    log(table(srows));
    log(`  ${WINDOW} executions in flight ÷ executions/s = the mean time from webhook to stored result; the stages show where it is spent.`);
    log();
  }

  if (ratePhases.length) {
    const head = ratePhases.map((r) => `${r.key === 'c' ? '(c)' : 'floor'} ${fmtInt(r.rate)}/s`);
    const lrows = [[`fixed rates, ${AGENTS} agents, evenly spaced`, 'clock', ...head.flatMap((h) => [`${h} p50`, 'p99', 'max'])]];
    const line = (label, clock, key) => lrows.push([label, clock, ...ratePhases.flatMap((r) => [fmtMs(r.latency[key].p50), fmtMs(r.latency[key].p99), fmtMs(r.latency[key].max)])]);
    line('trigger → started (started_at − queued_at)', 'server → agent', 'triggerToStart');
    line('  queued → dispatched', 'server', 'queuedToDispatched');
    line('  dispatched → started', 'server → agent', 'dispatchedToStarted');
    line('webhook sent → queued (HTTP in)', 'bench → server', 'sentToQueued');
    line('webhook sent → 202 reply (event stored)', 'bench', 'reply');
    line('webhook sent → started', 'bench → agent', 'sentToStarted');
    line('started → finished (the script)', 'agent', 'startedToFinished');
    line('finished → result stored', 'agent → server', 'finishedToStored');
    line('trigger → result stored', 'server', 'triggerToStored');
    log(table(lrows));
    log('  all in ms. Times are whole milliseconds from Date.now() in each process (one machine, one clock): each span is ±1 ms.');
    log("  queued_at is when the server received the webhook; started_at when the agent's spawn of the script succeeded.");
    for (const r of ratePhases) {
      const keptUp = r.storedSeconds <= r.sendSeconds + 1;
      log(`  ${r.key === 'c' ? '(c)' : 'floor'} ${fmtInt(r.rate)}/s: ${fmtInt(r.count)} webhooks sent at ${r.deliveredRate.toFixed(1)}/s (sender lag p99 ${fmtMs(r.lagP99)} ms); last result stored ${r.storedSeconds.toFixed(1)} s after the first webhook, sending took ${r.sendSeconds.toFixed(1)} s: ${keptUp ? 'kept up' : 'FELL BEHIND, so its latencies include a growing queue'}.`);
      log(`      CPU: server ${fmtPct(r.cpu.server)} (${perRun(r, 'server')}/execution), agents (+ scripts) ${fmtPct(r.cpu.agents)} (${perRun(r, 'agents')}), bench ${fmtPct(r.cpu.bench)}, other procs ${fmtPct(r.cpu.other)}${r.cpu.top ? ` (${r.cpu.top})` : ''}.`);
    }
    if (ratePhases.length > 1) log(`  floor: a low rate after (c), for reference: what one execution costs when nothing queues (BENCH_E2E_FLOOR_RATE, 0 = off).`);
    log();
  }

  const statesText = Object.keys(v.notSucceeded).length ? JSON.stringify(v.notSucceeded) : 'none';
  log('verification (after the agents and the server stopped)');
  log(`  webhooks fired             ${fmtInt(v.fired)}: ${fmtInt(v.accepted)} answered 202, ${fmtInt(v.errors)} errors${v.firstErrors.length ? ` (${v.firstErrors.join('; ')})` : ''}`);
  log(`  one execution per reply    ${v.notOneExecution === 0 ? 'yes' : `NO: ${v.notOneExecution} replies had another number`}`);
  log(`  events stored              ${fmtInt(v.events)}`);
  log(`  executions stored          ${fmtInt(v.executions)} (${v.unknown} replied ids missing, ${v.extraExecutions} not from a reply)`);
  log(`  not ended succeeded/exit 0 ${statesText}; on the wrong host ${v.wrongHost}`);
  log(`  transitions                ${fmtInt(v.executions - v.badTransitions)} of ${fmtInt(v.executions)} went queued → dispatched → running → succeeded, each state once`);
  log(`  run by the agents          ${fmtInt(v.runsOnce)} of ${fmtInt(v.fired)} run exactly once, by their own host's agent (agents' logs); ${v.runsOfUnknownIds} runs of other ids; endings ${JSON.stringify(agentLog.endings)}`);
  for (const p of v.runProblems) log(`    ${p}`);
  log(`  exits                      agents ${[...new Set(agentExits)].join(', ')}; server ${stopped.code ?? stopped.signal}`);
  if (agentLog.warningCount) log(`  agent warnings/errors      ${agentLog.warningCount}: ${agentLog.warnings.join(' | ')}`);
  if (serverNotes.count) log(`  server log lines (warn+)   ${serverNotes.count}: ${serverNotes.first.join(' | ')}`);
  log(`  verdict                    ${v.ok ? 'OK: every webhook gave one execution that succeeded, run exactly once' : 'MISMATCH'}`);
  log();

  const pass = (ok) => (ok ? 'met' : 'NOT MET');
  log('targets (benchmark, not a test)');
  if (cold) {
    const share = cold.e2e.rate / cold.spawn.rate;
    log(`  ${`cold: >= ${(COLD_SHARE_OF_SPAWN * 100).toFixed(0)} % of the raw spawn rate (issue 41)`.padEnd(52)}${fmtPct(share)} → ${pass(share >= COLD_SHARE_OF_SPAWN)}`);
  }
  if (peers) {
    const worst = Math.min(...peers.rounds.map((r) => r.pitcrew.rate / r.nodeRed.rate));
    log(`  ${`peers: >= ${PEER_TARGET} × Node-RED's rate in every round`.padEnd(52)}worst ${fmtX(worst)} → ${pass(worst >= PEER_TARGET)}`);
    const kept = Math.min(...peers.ingest.map((r) => r.executing.rate / r.idle.rate));
    log(`  ${`peers: webhook 202s executing >= ${INGEST_KEPT_TARGET * 100} % of no agent's`.padEnd(52)}worst ${fmtPct(kept)} → ${pass(kept >= INGEST_KEPT_TARGET)}`);
  }
  const warmA = phases.find((p) => p.key === 'a');
  if (warmA) {
    const share = warmA.results.e2e.rate / warmA.results.spawn.rate;
    log(`  ${`(a): >= ${(WARM_SHARE_OF_SPAWN * 100).toFixed(0)} % of the raw spawn rate (issue 41, warm)`.padEnd(52)}${fmtPct(share)} → ${pass(share >= WARM_SHARE_OF_SPAWN)}`);
  }
  for (const [label, run] of [['cold', cold?.e2e], ['(a)', warmA?.results.e2e]]) {
    if (!run) continue;
    const spawner = label === 'cold' ? cold.spawn : warmA.results.spawn;
    const above = aboveSpawn(run, spawner);
    log(`  ${`${label}: server CPU/execution <= 700 µs (issue 41)`.padEnd(52)}${fmtInt(above.server)} µs → ${pass(above.server <= 700)}`);
    log(`  ${`${label}: agent + helper above the spawn <= 700 µs`.padEnd(52)}${fmtInt(above.agent)} µs → ${pass(above.agent <= 700)}`);
  }
  for (const p of phases) {
    const a = p.results.e2e;
    const share = a.rate / p.results.spawn.rate;
    log(`  ${`${p.label}: >= ${fmtInt(TARGET_EXECUTIONS_PER_SECOND)} executions/s end to end`.padEnd(52)}${fmtInt(a.rate)}/s → ${pass(a.rate >= TARGET_EXECUTIONS_PER_SECOND)}`);
    for (const target of [ISSUE_SHARE_OF_SPAWN, TARGET_SHARE_OF_SPAWN]) {
      log(`  ${`${p.label}: >= ${(target * 100).toFixed(0)} % of the raw spawn rate`.padEnd(52)}${fmtPct(share)} → ${pass(share >= target)}`);
    }
  }
  const c = ratePhases.find((r) => r.key === 'c');
  if (c) {
    const t = c.latency.triggerToStart;
    log(`  ${`(c) trigger-to-start p50 <= ${TARGET_P50_MS} ms at ${fmtInt(c.rate)}/s`.padEnd(52)}${fmtMs(t.p50)} ms → ${pass(t.p50 <= TARGET_P50_MS)}`);
    log(`  ${`(c) trigger-to-start p99 <= ${TARGET_P99_MS} ms at ${fmtInt(c.rate)}/s`.padEnd(52)}${fmtMs(t.p99)} ms → ${pass(t.p99 <= TARGET_P99_MS)}`);
  }
  const shown = profiles.filter(([who]) => who.startsWith('pitcrew') || who === 'agent e2e-0');
  const more = profiles.filter((p) => !shown.includes(p));
  for (const [who, file] of shown) log(`  CPU profile of ${who}: node bench/profile-summary.js ${path.relative(root, file)}`);
  if (more.length) log(`  (and ${more.length} more agent profiles in ${path.relative(root, path.dirname(more[0][1]))}/, by pid: ${more.map(([w, f]) => `${w.replace('agent ', '')} ${path.basename(f).split('.')[3]}`).join(', ')})`);
  log();
  log(`done in ${seconds.toFixed(0)} s`);
}

/**
 * CPU µs per execution above the bare spawn (issue 41): the server's whole share (a bare spawner has
 * no server), and the agent with its helper and scripts less what the spawner and its shells spent per spawn.
 */
function aboveSpawn(run, spawner) {
  return { server: cpuPerRun(run, 'server') * 1e6, agent: (cpuPerRun(run, 'agents') - cpuPerRun(spawner, 'spawners')) * 1e6 };
}

/** pitcrew (webhook → stored result, one agent) against Node-RED (webhook → exec → reply), round by round. */
function reportPeers({ rounds, ingest }, byId) {
  const rows = [[`round (${PEER_COUNT} each, ${PEER_WINDOW} in flight)`, 'pitcrew/s', `Node-RED ${NODE_RED_VERSION}/s`, 'ratio', '1st / 2nd half/s: pitcrew; Node-RED', 'pitcrew CPU/command', 'Node-RED CPU/command', 'results/commit', 'other procs']];
  rounds.forEach((r, i) => {
    const ours = (cpuPerRun(r.pitcrew, 'server') + cpuPerRun(r.pitcrew, 'agents')) * 1e6;
    const theirs = cpuPerRun(r.nodeRed, 'peer') * 1e6;
    const halves = (h) => h.map(fmtInt).join(' / ');
    rows.push([`${i + 1} (${i % 2 === 0 ? 'pitcrew first' : 'Node-RED first'})`, fmtInt(r.pitcrew.rate), fmtInt(r.nodeRed.rate), fmtX(r.pitcrew.rate / r.nodeRed.rate), `${halves(storedHalves(byId, `peers round ${i + 1}`, r.pitcrew))}; ${halves(r.nodeRed.halves)}`, `${fmtInt(ours)} µs`, `${fmtInt(theirs)} µs`, resultsPerCommit(byId, `peers round ${i + 1}`), `${fmtPct(r.pitcrew.cpu.other)} / ${fmtPct(r.nodeRed.cpu.other)}`]);
  });
  log(table(rows));
  log('  results/commit: the round\'s results ÷ the distinct times of their `succeeded` transitions (one per ledger commit; two commits in one');
  log('  millisecond count once, so it is an upper bound). Halves: the rate until half the round\'s commands had ended (pitcrew: results');
  log('  stored), and the rate of the rest: a round that starts slow, or slows down, shows here.');
  log('  pitcrew: webhooks ÷ (last result stored − first sent), CPU = server + agent + its helper and shells; Node-RED: replies ÷ (last reply −');
  log('  first sent), its reply sent once `true` ended, CPU = its process and its shells. Same client, same keep-alive sockets, same body.');
  log();
  const irows = [[`webhook 202s (${PEER_INGEST_COUNT} each, ${PEER_WINDOW} awaiting a reply)`, 'no agent/s', 'executing/s', 'kept', 'server CPU/reply idle, executing', 'bench (client) CPU/reply', 'server thread run / wait', 'other procs']];
  ingest.forEach((r, i) => {
    irows.push([`round ${i + 1} (${i % 2 === 0 ? 'no agent first' : 'executing first'})`, fmtInt(r.idle.rate), fmtInt(r.executing.rate), fmtPct(r.executing.rate / r.idle.rate), `${perRun(r.idle, 'server')}, ${perRun(r.executing, 'server')}`, `${perRun(r.idle, 'bench')}, ${perRun(r.executing, 'bench')}`, `${threadShares(r.idle.thread)}; ${threadShares(r.executing.thread)}`, `${fmtPct(r.idle.cpu.other)} / ${fmtPct(r.executing.cpu.other)}`]);
  });
  log(table(irows));
  log('  replies ÷ (last 202 − first sent). No agent: its executions wait queued (the agent stopped, started again after the round to run them);');
  log('  executing: the agent runs them meanwhile. The server\'s CPU while executing includes dispatching and recording them.');
  log('  Server thread: the share of the round its main thread ran, and waited runnable for a core (/proc/PID/schedstat); the rest it slept.');
  log();
}

/** The main thread's time on a core and waiting runnable for one, in ns since it started; undefined without schedstat. */
function schedStat(pid) {
  try {
    const [runNs, waitNs] = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    return { runNs, waitNs };
  } catch {
    return undefined;
  }
}

const threadShares = (t) => (t ? `${fmtPct(t.running)} / ${fmtPct(t.waiting)}` : '-');

/** The rates of the first and the second half of the ends, `ends` in ms from the round's start. */
function halfRates(ends) {
  const sorted = [...ends].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  if (half === 0) return [NaN, NaN];
  const mid = sorted[half - 1];
  return [(half / mid) * 1000, ((sorted.length - half) / (sorted.at(-1) - mid)) * 1000];
}

/** halfRates of a pitcrew round: its results' `succeeded` times from its first webhook sent. */
function storedHalves(byId, phase, round) {
  const ends = [];
  for (const row of byId.values()) {
    if (row.fire?.phase !== phase) continue;
    const ended = row.transitions.find((t) => t.to_state === 'succeeded');
    if (ended) ends.push(Number(ended.at));
  }
  return halfRates(ends.map((at) => at - round.firstSent));
}

/** About how many results each ledger commit stored: every transition of a commit has the commit's time. */
function resultsPerCommit(byId, phase) {
  const times = [];
  for (const row of byId.values()) {
    if (row.fire?.phase !== phase) continue;
    const ended = row.transitions.find((t) => t.to_state === 'succeeded');
    if (ended) times.push(Number(ended.at));
  }
  return times.length === 0 ? '-' : (times.length / new Set(times).size).toFixed(1);
}

/** The cold phase: one burst at a server and an agent that had run nothing, against one spawner. */
function reportCold({ e2e, spawn, stages }) {
  const above = aboveSpawn(e2e, spawn);
  const rows = [['cold burst (first runs of the server and agent)', 'pitcrew e2e', 'raw spawn', 'e2e / spawn']];
  rows.push(['executions/s', fmtInt(e2e.rate), fmtInt(spawn.rate), fmtPct(e2e.rate / spawn.rate)]);
  rows.push(['count, seconds; in flight', `${fmtInt(e2e.ok)}, ${e2e.seconds.toFixed(1)}; ${COLD_WINDOW}`, `${fmtInt(spawn.ok)}, ${spawn.seconds.toFixed(1)}; ${COLD_SPAWN_WINDOW}`, '']);
  rows.push(['CPU/execution: server', perRun(e2e, 'server'), '', '']);
  rows.push(['  agent alone', perRun(e2e, 'agentsOwn'), '', '']);
  rows.push(['  spawn helper + sh; spawner + sh', perRun(e2e, 'helpers'), perRun(spawn, 'spawners'), '']);
  rows.push(['  agent + helper + sh above the spawner + sh', `${fmtInt(above.agent)} µs`, '', '']);
  const calls = (key) => `${(e2e.cpu.calls[key].reads / e2e.ok).toFixed(1)} / ${(e2e.cpu.calls[key].writes / e2e.ok).toFixed(1)}`;
  rows.push(['read / write syscalls per execution: server', calls('server'), '', '']);
  rows.push(['  agent alone; spawn helper', `${calls('agentsOwn')}; ${calls('helpers')}`, '', '']);
  rows.push(['  bench; other procs (share of a core)', `${perRun(e2e, 'bench')}; ${fmtPct(e2e.cpu.other)}`, `${perRun(spawn, 'bench')}; ${fmtPct(spawn.cpu.other)}`, '']);
  for (const [label, key] of [['webhook sent → 202 reply', 'reply'], ['queued → dispatched', 'queuedToDispatched'], ['dispatched → started', 'dispatchedToStarted'], ['started → finished (the script)', 'startedToFinished'], ['finished → result stored', 'finishedToStored'], ['webhook sent → result stored', 'sentToStored']]) {
    rows.push([`${label}, mean / p50 ms`, `${fmtMs(stages[key].mean)} / ${fmtMs(stages[key].p50)}`, '', '']);
  }
  log(table(rows));
  if (e2e.cpu.top || spawn.cpu.top) log(`  cold, busiest other processes: pitcrew e2e: ${e2e.cpu.top || '-'}; raw spawn: ${spawn.cpu.top || '-'}`);
  log();
}

// ---------------------------------------------------------------------------------------------
// Lifetime: bounded, and cleaned up on every path.

onCleanup(() => httpAgent.destroy());
runBench(main, BUDGET_SECONDS, progress, 'BENCH_E2E_TIMEOUT');
