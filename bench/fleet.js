// Fleet benchmark (bench/README.md): one pitcrew node on SQLite (or PostgreSQL) with N agents.
//
// The server runs as a child process (bin/pitcrew.js server); the N agents are simulated in this
// process, each with the real agent's connection code (bench/fleet-agents.js): enrolled with the
// API key, then connected with its own credential over wss, pinned to the server's certificate,
// answering `execute` with `finished` (its start in it) without spawning anything. For each N it
// measures, beside the same figure of a bare TLS WebSocket server (bench/bare-ws-server.js, same
// certificate, same simulated agents) measured in the same run:
//   - the time until all N are online after they start at once;
//   - the server's RSS and its CPU while the N connections idle (heartbeats only);
//   - webhook → all N finished, for one rule whose target is specific_tags over all N hosts
//     (the baseline: one request that makes the bare server send N executes and wait for N results);
//   - the time until all N are back after the server is killed (SIGKILL) and started again on the
//     same data, from the kill and from the moment the new server answers /healthz;
// and, on pitcrew only, 100 simultaneous webhooks on a rule over 100 hosts: how many answered 202,
// and how long until their executions all ended (the baseline: 100 fan-outs to 100 hosts).
import { X509Certificate, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeVersion, envNumber, fetchMetrics, fmtInt, fmtPct, histogramBound, table } from './common.js';
import { Fleet } from './fleet-agents.js';
import { startPitcrew } from './pitcrew.js';
import { CpuTrace, cleanupAll, cpuSeconds, freePort, machineProcessSeconds, onCleanup, ownCpuSeconds, runBench, spawnChild, waitFor } from './procs.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');

const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const SIZES = (env.BENCH_FLEET_SIZES || '1000,10000').split(',').map((n) => Math.round(Number(n))).filter((n) => n > 0);
const IDLE_SECONDS = number('BENCH_FLEET_IDLE_SECONDS', 10, 1);
const STORM_WEBHOOKS = Math.round(number('BENCH_FLEET_STORM_WEBHOOKS', 100, 0));
const STORM_HOSTS = Math.round(number('BENCH_FLEET_STORM_HOSTS', 100, 1));
// 0 skips the restart: the first server is then stopped, not killed, and writes its CPU profile (the fan-out's).
const RESTART = env.BENCH_FLEET_RESTART !== '0';
// One restart per mode, in this order: the agents offer their TLS session (on) or make a full handshake (off).
const RESUME_MODES = (env.BENCH_FLEET_TLS_RESUME || 'off,on').split(',').map((m) => m.trim()).filter((m) => m === 'on' || m === 'off');
// Unset: every simulated agent connects when its own timers say, as a real fleet does (fleet-agents.js, AttemptSlots).
const SIM_CONNECTING = env.BENCH_FLEET_SIM_CONNECTING ? Math.round(number('BENCH_FLEET_SIM_CONNECTING', 0, 1)) : undefined;
const ENROL_CONCURRENCY = Math.round(number('BENCH_FLEET_ENROL_CONCURRENCY', 16, 1));
/** The agent's own rule (agent/connection.ts): a connection up this long was stable, and its backoff starts again from the base. */
const AGENT_STABLE_MS = 30_000;
const HEARTBEAT_SECONDS = number('PITCREW_AGENT_HEARTBEAT_SECONDS', 15, 1);
const total = SIZES.reduce((a, b) => a + b, 0);
// Each restart (two servers × each TLS resumption mode) waits 30 s for the connections to be stable, then for all to be back.
const restarts = RESTART ? 2 * RESUME_MODES.length : 0;
const BUDGET_SECONDS = number('BENCH_FLEET_TIMEOUT', 240 + 0.12 * total + restarts * (40 * SIZES.length + 0.01 * total), 10);
/** Nothing may take longer than this: all online, all finished. */
const PHASE_TIMEOUT_MS = Math.max(120_000, total * 12);
const TARGET_BACK_AFTER_READY_S = 10;
// Issue 41 item 3: the server's CPU per agent back at most this many times the bare server's, and one rule over
// 10,000 hosts recorded in 3 s.
const TARGET_CPU_OF_BARE = 1.2;
const TARGET_FAN_OUT_S = 3;
const TARGET_FAN_OUT_HOSTS = 10_000;
const CPU_PROF = env.BENCH_CPU_PROF === '1';
// Both servers count what reaches their agent port (bench/tls-counts.mjs), in BENCH_TLS_COUNTS_DIR (made by main).
const nodeFlags = ['--import', pathToFileURL(path.join(benchDir, 'tls-counts.mjs')).href, ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.join(benchDir, 'profiles')}`] : [])];
// Extra node flags for one server only (space-separated), e.g. V8's `--trace-gc-nvp` or `--max-semi-space-size=32`:
// with BENCH_CHILD_LOG_DIR a trace lands in each server's log file. Each server's flags are printed with the report.
const flagList = (text) => (text ?? '').split(/\s+/).filter(Boolean);
const SERVER_FLAGS = flagList(env.BENCH_FLEET_SERVER_FLAGS);
const BARE_FLAGS = flagList(env.BENCH_FLEET_BARE_FLAGS);

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench-fleet: ${line}\n`);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
const codeAtStart = env.BENCH_E2E_CODE_VERSION || codeVersion(root, ['src', 'agent', 'package.json', 'bin']);

const hostName = (i) => `fleet-${String(i).padStart(5, '0')}`;

/** Resident memory of a process in bytes, from /proc; NaN where unavailable. */
function rssBytes(pid) {
  try {
    const kb = /^VmRSS:\s*(\d+)\s*kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) * 1024;
  } catch {
    return NaN;
  }
}

const fmtS = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'n/a');
const fmtMB = (b) => (Number.isFinite(b) ? `${fmtInt(b / 1024 / 1024)} MB` : 'n/a');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)} ×` : '');

/**
 * CPU of the server, this process and the rest of the machine over `fn`, as shares of one core,
 * and how late this process's event loop ran (the simulated agents' hellos wait on it: with it
 * seconds behind, the figure measures the simulator, not the server).
 */
async function withCpu(pid, fn) {
  const c0 = { server: cpuSeconds(pid), own: ownCpuSeconds(), machine: machineProcessSeconds(), wall: Date.now() };
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  const value = await fn();
  lag.disable();
  const window = (Date.now() - c0.wall) / 1000;
  const server = cpuSeconds(pid) - c0.server;
  const own = ownCpuSeconds() - c0.own;
  const cpu = { server: server / window, bench: own / window, other: Math.max(0, machineProcessSeconds() - c0.machine - server - own) / window, serverSeconds: server, benchSeconds: own };
  return { value, cpu, benchLagMs: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 } };
}
const fmtBounds = (bounds) => (bounds?.every((b) => b !== undefined) ? bounds.map((b) => (b === Infinity ? '> 10 s' : `${+(b * 1000).toFixed(1)} ms`)).join(', ') : 'n/a');
const fmtLag = (lag) => (lag ? `${fmtInt(lag.p99)} / ${fmtInt(lag.max)} ms` : 'n/a');

// No socket limit: a request waiting for a free socket here would count its wait as the server's.
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
onCleanup(() => httpAgent.destroy());

/** One POST with a JSON body; resolves with the status and the parsed reply (never rejects). */
function post(port, urlPath, body, { secure = false, ca } = {}) {
  return new Promise((resolve) => {
    const text = JSON.stringify(body);
    const request = secure ? https.request : http.request;
    const req = request({ agent: secure ? false : httpAgent, host: '127.0.0.1', port, path: urlPath, method: 'POST', ca, timeout: PHASE_TIMEOUT_MS, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      let reply = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (reply += chunk));
      res.on('end', () => {
        let json = null;
        try {
          json = JSON.parse(reply);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode, json, text: reply });
      });
    });
    req.on('timeout', () => req.destroy(new Error('no reply')));
    req.once('error', (error) => resolve({ status: 0, json: null, text: error.message }));
    req.end(text);
  });
}

/**
 * Waits until every connection has been up long enough for its agent to count it stable. Until
 * 2026-11-29 it waited for the oldest only: agents welcomed late in a slow phase still had the
 * backoff their last outage grew, and came back up to tens of seconds late (seen with two restarts).
 */
async function untilStable(fleet) {
  const wait = fleet.newestWelcome() + AGENT_STABLE_MS + 500 - Date.now();
  if (wait > 0) {
    progress(`waiting ${(wait / 1000).toFixed(0)} s until every connection is stable (up ${AGENT_STABLE_MS / 1000} s, agent/connection.ts) before the restart`);
    await sleep(wait);
  }
}

/** All online after they start at once; then RSS and CPU over the idle window. */
async function connectAndIdle(fleet, pid, url, fingerprint, alive) {
  fleet.problems.clear();
  const t0 = Date.now();
  const { value: lastAt, cpu, benchLagMs } = await withCpu(pid, async () => {
    fleet.start(url, fingerprint);
    return fleet.allOnline(t0, PHASE_TIMEOUT_MS, alive);
  });
  const connect = { ms: lastAt - t0, cpu, benchLagMs, problems: fleet.problemText() };
  await sleep(2000); // let the last hellos' work settle before measuring idle
  const idle = await withCpu(pid, () => sleep(IDLE_SECONDS * 1000));
  return { connect, rss: rssBytes(pid), idleCpu: idle.cpu };
}

/** A server's counts (bench/tls-counts.mjs) as written at or after `at`; undefined if none came within 5 s. */
async function tlsCounts(pid, at) {
  const file = path.join(env.BENCH_TLS_COUNTS_DIR, `${pid}.json`);
  for (let tries = 0; tries < 250; tries += 1) {
    try {
      const counts = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (counts.at >= at) return counts;
    } catch {
      // not written yet, or being written
    }
    await sleep(20);
  }
  return undefined;
}

/** Kill (SIGKILL) and start again; the times until every agent was welcomed again. */
async function restart(fleet, current, start, alive, mode) {
  await untilStable(fleet);
  fleet.problems.clear();
  fleet.resumeTls = mode === 'on';
  const resumedBefore = fleet.resumed;
  const attemptsBefore = { attempts: fleet.attempts, ...fleet.failures };
  const killedAt = Date.now();
  progress(`SIGKILL to the server at ${new Date(killedAt).toISOString()}`);
  // CPU from the moment the server listened, sampled on threads of their own: this process's
  // loop, busy with the agents' reconnections, noticed the listening server up to ~19 s late.
  const serverCpu = new CpuTrace();
  const benchCpu = new CpuTrace();
  benchCpu.watch(process.pid);
  current.child.kill('SIGKILL');
  await current.exited;
  const next = await start({ healthTimeoutMs: PHASE_TIMEOUT_MS, onSpawn: (pid) => serverCpu.watch(pid) });
  const readyAt = next.listeningAt;
  const { value: lastAt, cpu: late, benchLagMs } = await withCpu(next.pid, () => fleet.allOnline(killedAt, PHASE_TIMEOUT_MS, () => alive(next)));
  const window = (lastAt - readyAt) / 1000;
  const serverSeconds = serverCpu.between(readyAt, lastAt);
  const benchSeconds = benchCpu.between(readyAt, lastAt);
  const serverThreads = await serverCpu.threads(readyAt, lastAt);
  await Promise.all([serverCpu.stop(), benchCpu.stop()]);
  // Counts, which do not depend on the machine's load: the agents' attempts since the kill (each agent's
  // session ended once with it: the 'other' ends beyond N are failed attempts), and what reached the server.
  const attempts = { attempts: fleet.attempts - attemptsBefore.attempts, refused: fleet.failures.refused - attemptsBefore.refused, other: fleet.failures.other - attemptsBefore.other };
  const counts = await tlsCounts(next.pid, lastAt);
  const cpu = { server: serverSeconds / window, bench: benchSeconds / window, other: late.other, serverSeconds, benchSeconds };
  const firstAt = fleet.firstWelcome(killedAt);
  return { mode, resumed: fleet.resumed - resumedBefore, attempts, counts, serverThreads, listeningAt: readyAt, handle: next, fromKill: lastAt - killedAt, fromReady: lastAt - readyAt, firstFromReady: firstAt - readyAt, downMs: readyAt - killedAt, cpu, benchLagMs, problems: fleet.problemText() };
}

// ---------------------------------------------------------------------------------------------

async function bareRun(n, fleet, { certFile, keyFile, fingerprint, ticketKeys }) {
  const port = await freePort();
  // A restart waits as long as pitcrew's may: 10,000 agents retrying at once hold this process's loop for seconds.
  const start = async ({ healthTimeoutMs = 15_000, onSpawn = () => {} } = {}) => {
    const child = spawnChild('bare ws server', [...nodeFlags, ...BARE_FLAGS, path.join(benchDir, 'bare-ws-server.js')], { cwd: root, env: { ...env, PORT: String(port), CERT_FILE: certFile, KEY_FILE: keyFile, TICKET_KEYS: ticketKeys, HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS) } });
    onSpawn(child.pid);
    let readyAt;
    await waitFor(child, async () => (readyAt = /"ready":true,"port":\d+,"at":(\d+)/.exec(child.output())?.[1]) !== undefined, healthTimeoutMs, 'the bare ws server to listen', 10);
    child.listeningAt = Number(readyAt);
    return child;
  };
  let server = await start();
  const url = new URL(`https://127.0.0.1:${port}`);
  const ca = fs.readFileSync(certFile);
  progress(`baseline, N=${fmtInt(n)}: ${fmtInt(n)} agents connect to the bare ws server`);
  const out = await connectAndIdle(fleet, server.pid, url, fingerprint, () => server.alive());

  progress(`baseline, N=${fmtInt(n)}: one execute to every agent`);
  const t0 = Date.now();
  const fan = await post(port, '/fan-out', {}, { secure: true, ca });
  out.fanOut = { ms: Date.now() - t0, ok: fan.status === 200 && fan.json?.sent === n, detail: fan.text.slice(0, 200) };

  if (STORM_WEBHOOKS > 0) {
    const t1 = Date.now();
    const replies = await Promise.all(Array.from({ length: STORM_WEBHOOKS }, () => post(port, `/fan-out?hosts=${Math.min(STORM_HOSTS, n)}`, {}, { secure: true, ca })));
    out.storm = { ms: Date.now() - t1, ok: replies.filter((r) => r.status === 200).length, executions: replies.reduce((sum, r) => sum + (r.json?.sent ?? 0), 0) };
  }

  out.restarts = [];
  for (const mode of RESTART ? RESUME_MODES : []) {
    progress(`baseline, N=${fmtInt(n)}: kill and restart the bare ws server (TLS resumption ${mode})`);
    const r = await restart(fleet, server, start, (h) => h.alive(), mode);
    server = r.handle;
    out.restarts.push(r);
  }
  await fleet.stop();
  await server.stop(5000);
  return out;
}

async function pitcrewRun(n, fleet, pc, rules) {
  const { tlsPort, port, dataDir } = pc;
  let server = pc.server;
  const url = new URL(`https://127.0.0.1:${tlsPort}`);
  progress(`pitcrew, N=${fmtInt(n)}: ${fmtInt(n)} agents connect`);
  const out = await connectAndIdle(fleet, server.pid, url, pc.fingerprint, () => server.alive());

  const reader = await pc.storage.openReader();
  const pending = async () => Number((await reader.all("select count(*) as n from executions where state in ('queued', 'dispatched', 'running')"))[0].n);
  const lastEnd = async () => Number((await reader.all("select max(at) as at from execution_transitions where to_state in ('succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired')"))[0].at);
  const allEnded = async (what) => {
    const deadline = Date.now() + PHASE_TIMEOUT_MS;
    while ((await pending()) > 0) {
      if (!server.alive()) throw new Error(`the server exited while waiting for ${what}:\n${server.output()}`);
      if (Date.now() > deadline) throw new Error(`${what}: executions still pending after ${PHASE_TIMEOUT_MS / 1000} s: ${JSON.stringify(await reader.all('select state, count(*) as n from executions group by state'))}`);
      await sleep(20);
    }
    return lastEnd();
  };

  progress(`pitcrew, N=${fmtInt(n)}: one webhook on the rule over all ${fmtInt(n)} hosts`);
  const sentAt = Date.now();
  const { value: fan, cpu: fanCpu } = await withCpu(server.pid, async () => {
    const reply = await post(port, rules.all, { HostName: 'any' });
    return { reply, endedAt: reply.status === 202 ? await allEnded('the fan-out') : NaN };
  });
  // The reply lists the first 100 ids and counts them all (executionCount).
  const executions = fan.reply.json?.executionCount ?? fan.reply.json?.executionIds?.length ?? 0;
  out.fanOut = { ms: fan.endedAt - sentAt, ok: fan.reply.status === 202 && executions === n, status: fan.reply.status, executions, cpu: fanCpu, detail: fan.reply.text.slice(0, 300) };

  if (STORM_WEBHOOKS > 0) {
    progress(`pitcrew, N=${fmtInt(n)}: ${STORM_WEBHOOKS} simultaneous webhooks on the rule over ${Math.min(STORM_HOSTS, n)} hosts`);
    const t1 = Date.now();
    const replies = await Promise.all(Array.from({ length: STORM_WEBHOOKS }, () => post(port, rules.storm, { HostName: 'any' })));
    const statuses = {};
    for (const r of replies) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const accepted = replies.filter((r) => r.status === 202);
    const endedAt = await allEnded('the webhook storm');
    out.storm = {
      ms: accepted.length ? endedAt - t1 : NaN,
      ok: accepted.length,
      statuses,
      executions: accepted.reduce((sum, r) => sum + (r.json?.executionCount ?? r.json?.executionIds?.length ?? 0), 0),
      firstRefusal: replies.find((r) => r.status !== 202)?.text.slice(0, 200),
    };
  }

  out.restarts = [];
  for (const mode of RESTART ? RESUME_MODES : []) {
    progress(`pitcrew, N=${fmtInt(n)}: kill (SIGKILL) and restart the server on the same data (TLS resumption ${mode})`);
    const r = await restart(fleet, server, pc.startServer, (h) => h.alive(), mode);
    server = r.handle;
    // The server's own time per hello (hello → welcome): only the restarted server's hellos are in it.
    const text = await fetchMetrics(pc.metricsBase);
    r.helloBounds = [0.5, 0.99, 1].map((q) => histogramBound(text, 'pitcrew_agent_hello_duration_seconds', q));
    out.restarts.push(r);
  }
  const online = Number((await reader.all('select count(*) as n from hosts where session_id is not null'))[0].n);
  await fleet.stop();
  const stopped = await server.stop(30_000);
  const states = Object.fromEntries((await reader.all('select state, count(*) as n from executions group by state')).map((s) => [s.state, Number(s.n)]));
  await reader.close();
  const runs = [...fleet.runs.values()];
  out.verify = {
    onlineInDb: online,
    states,
    executions: Object.values(states).reduce((a, b) => a + b, 0),
    runOnce: runs.filter((hosts) => hosts.length === 1).length,
    runMore: runs.filter((hosts) => hosts.length > 1).length,
    misaddressed: fleet.misaddressed,
    exit: stopped.code ?? stopped.signal,
    dataDir,
  };
  return out;
}

async function runSize(n) {
  // At info, as a server runs by default: its log line says when it listened (bench/pitcrew.js).
  const pc = await startPitcrew({ root, env, tempPrefix: 'pitcrew-fleet-', ruleName: 'fleet-trigger-host', nodeFlags: [...nodeFlags, ...SERVER_FLAGS], logLevel: env.PITCREW_LOG_LEVEL ?? 'info', progress });
  const tlsDir = path.join(pc.dataDir, 'tls');
  const certFile = path.join(tlsDir, 'cert.pem');
  const keyFile = path.join(tlsDir, 'key.pem');
  await waitFor(pc.server, async () => fs.existsSync(certFile), 10_000, 'the TLS certificate');
  pc.fingerprint = new X509Certificate(fs.readFileSync(certFile)).fingerprint256;
  const rule = (name, tags) => pc.api('POST', '/api/v1/rules', {
    name, trigger: { type: 'webhook' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
    target: { type: 'specific_tags', tags }, infrastructureType: 'On_Premise',
  });
  const hook = (r) => `/api/v1/trigger/channel/webhook/${pc.apiKey}/${r.trigger.triggerId}`;
  const rules = { all: hook(await rule('fleet-all', ['fleet'])), storm: hook(await rule('fleet-storm', ['storm'])) };

  const hosts = Array.from({ length: n }, (_, i) => ({ hostname: hostName(i), tags: i < STORM_HOSTS ? ['fleet', 'storm'] : ['fleet'] }));
  const fleet = new Fleet(hosts, { connecting: SIM_CONNECTING });
  progress(`enrolling ${fmtInt(n)} agents with the API key (${ENROL_CONCURRENCY} at a time)`);
  const e0 = Date.now();
  await fleet.enrol(new URL(`https://127.0.0.1:${pc.tlsPort}`), pc.apiKey, pc.fingerprint, ENROL_CONCURRENCY);
  const enrolMs = Date.now() - e0;

  // The baseline first, while pitcrew idles with no agent; the same agents, credentials and certificate.
  const bareFleet = new Fleet(hosts, { connecting: SIM_CONNECTING });
  bareFleet.agents.forEach((a, i) => (a.credentials = fleet.agents[i].credentials));
  const bare = await bareRun(n, bareFleet, { certFile, keyFile, fingerprint: pc.fingerprint, ticketKeys: randomBytes(48).toString('hex') });
  const pitcrew = await pitcrewRun(n, fleet, pc, rules);
  return { n, enrolMs, bare, pitcrew, storage: pc.storage.describe };
}

// ---------------------------------------------------------------------------------------------
// Output

/** The rows of one restart of each server, with the same TLS resumption setting; idle: each server's idle CPU (share of a core). */
function restartRows(rows, n, a, b, idle) {
  rows.push(['', `restart (SIGKILL), TLS resumption ${a.mode}: down until listening`, fmtS(a.downMs), fmtS(b.downMs), '']);
  rows.push(['', '  agents welcomed on a resumed TLS session', `${fmtInt(a.resumed)} of ${fmtInt(n)}`, `${fmtInt(b.resumed)} of ${fmtInt(n)}`, '']);
  rows.push(['', '  all online again, from the kill', fmtS(a.fromKill), fmtS(b.fromKill), ratio(a.fromKill, b.fromKill)]);
  rows.push(['', '  all online again, from listening', fmtS(a.fromReady), fmtS(b.fromReady), ratio(a.fromReady, b.fromReady)]);
  rows.push(['', '  the first agent back, from listening', fmtS(a.firstFromReady), fmtS(b.firstFromReady), '']);
  rows.push(['', '  hello → welcome in the server: p50, p99, max ≤', fmtBounds(a.helloBounds), 'n/a', '']);
  rows.push(['', '  server CPU, other procs CPU', `${fmtPct(a.cpu.server)}, ${fmtPct(a.cpu.other)}`, `${fmtPct(b.cpu.server)}, ${fmtPct(b.cpu.other)}`, '']);
  // What the server itself needs per agent, whoever sets the pace: at 10 s for N agents it may spend 10 s / N of each core.
  const perAgent = (x) => (x.cpu.serverSeconds * 1000) / n;
  rows.push(['', '  server CPU per agent back', `${perAgent(a).toFixed(2)} ms`, `${perAgent(b).toFixed(2)} ms`, ratio(perAgent(a), perAgent(b))]);
  // The simulated agents' side of the same reconnections (TLS client handshakes, hellos), and what both sides together
  // leave possible on this machine: no run can be back sooner than their CPU divided among its cores, nor sooner than
  // either process's own CPU (each does its handshakes on one thread; its GC threads make this figure a little short).
  const benchPerAgent = (x) => (x.cpu.benchSeconds * 1000) / n;
  // Where the server's CPU went: its main thread (the event loop, TLS included) and the others (V8's GC and
  // compiler threads, libuv's pool); and what its idle rate (heartbeats, duties) alone comes to over the window.
  const threads = (x, main) => (1000 * (x.serverThreads ?? []).filter((t) => t.main === main).reduce((sum, t) => sum + t.seconds, 0)) / n;
  rows.push(['', '    main thread, other threads', `${threads(a, true).toFixed(2)}, ${threads(a, false).toFixed(2)} ms`, `${threads(b, true).toFixed(2)}, ${threads(b, false).toFixed(2)} ms`, ratio(threads(a, true), threads(b, true))]);
  const idleShare = (x, share) => (share * x.fromReady) / n;
  rows.push(['', '    idle CPU rate × window', `${idleShare(a, idle.a).toFixed(2)} ms`, `${idleShare(b, idle.b).toFixed(2)} ms`, '']);
  // Counts: the agents' attempts from the kill on, and what reached the restarted server's agent port in its life.
  const tries = (x) => `${fmtInt(x.attempts.attempts)} (${fmtInt(x.attempts.refused)} refused, ${fmtInt(Math.max(0, x.attempts.other - n))} other)`;
  rows.push(['', '  agents\' connection attempts from the kill (failed)', tries(a), tries(b), '']);
  const taken = (x) => (x.counts ? `${fmtInt(x.counts.accepted)} / ${fmtInt(x.counts.connections)}` : 'n/a');
  rows.push(['', '  server: TCP connections accepted / to TLS', taken(a), taken(b), '']);
  const failedHandshakes = (x) => Object.values(x.counts?.clientErrors ?? {}).reduce((sum, k) => sum + k, 0);
  const done = (x) => (x.counts ? `${fmtInt(x.counts.handshakes)} (${fmtInt(x.counts.resumed)} resumed), ${fmtInt(failedHandshakes(x))} failed` : 'n/a');
  rows.push(['', '  server: TLS handshakes done, failed', done(a), done(b), '']);
  const perAgentHandshakes = (x) => (x.counts ? x.counts.handshakes / n : NaN);
  rows.push(['', '  server: TLS handshakes per agent back', perAgentHandshakes(a).toFixed(3), perAgentHandshakes(b).toFixed(3), ratio(perAgentHandshakes(a), perAgentHandshakes(b))]);
  const bytes = (x) => (x.counts?.handshakes ? `${fmtInt(x.counts.handshakeBytes.read / x.counts.handshakes)} / ${fmtInt(x.counts.handshakeBytes.written / x.counts.handshakes)} B` : 'n/a');
  rows.push(['', '  server: bytes read / written per handshake', bytes(a), bytes(b), '']);
  rows.push(['', '  bench (agents) CPU per agent back', `${benchPerAgent(a).toFixed(2)} ms`, `${benchPerAgent(b).toFixed(2)} ms`, '']);
  const floor = ({ cpu }) => 1000 * Math.max(cpu.serverSeconds, cpu.benchSeconds, (cpu.serverSeconds + cpu.benchSeconds) / os.cpus().length);
  rows.push(['', '  CPU floor: max(server, bench, both ÷ cores)', fmtS(floor(a)), fmtS(floor(b)), '']);
  rows.push(['', '  bench loop delay p99 / max', fmtLag(a.benchLagMs), fmtLag(b.benchLagMs), '']);
}

function report(results, seconds) {
  const cpu = os.cpus();
  log();
  log('pitcrew fleet benchmark: N simulated agents (the real agent connection code, in this process) on one node');
  log(`  storage      ${results[0]?.storage ?? 'n/a'}`);
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}`);
  log(`  code         ${codeAtStart} (at the start); load average before the run ${loadBefore}`);
  log('  agents       dist/agent/connection.js over TLS pinned to the server certificate, answering execute at once (no process)');
  if (SIM_CONNECTING) log(`  simulated    at most ${fmtInt(SIM_CONNECTING)} agents in a connection attempt at once (BENCH_FLEET_SIM_CONNECTING), the others wait their turn`);
  log('  baseline     bench/bare-ws-server.js: https + ws, the same certificate, hello → welcome, no auth and no storage');
  log(`  node flags   pitcrew: ${SERVER_FLAGS.join(' ') || 'none'} (BENCH_FLEET_SERVER_FLAGS); bare: ${BARE_FLAGS.join(' ') || 'none'} (BENCH_FLEET_BARE_FLAGS)`);
  log();
  const rows = [['N', 'figure', 'pitcrew', 'bare ws', 'pitcrew / bare']];
  for (const r of results) {
    const a = r.pitcrew;
    const b = r.bare;
    const label = `N = ${fmtInt(r.n)}`;
    rows.push([label, 'enrolment (not timed against a baseline)', fmtS(r.enrolMs), '', '']);
    rows.push(['', 'all online after start', fmtS(a.connect.ms), fmtS(b.connect.ms), ratio(a.connect.ms, b.connect.ms)]);
    rows.push(['', '  server CPU, bench CPU', `${fmtPct(a.connect.cpu.server)}, ${fmtPct(a.connect.cpu.bench)}`, `${fmtPct(b.connect.cpu.server)}, ${fmtPct(b.connect.cpu.bench)}`, '']);
    rows.push(['', '  other procs CPU', fmtPct(a.connect.cpu.other), fmtPct(b.connect.cpu.other), '']);
    rows.push(['', '  bench loop delay p99 / max', fmtLag(a.connect.benchLagMs), fmtLag(b.connect.benchLagMs), '']);
    rows.push(['', 'server RSS, all connected', fmtMB(a.rss), fmtMB(b.rss), ratio(a.rss, b.rss)]);
    rows.push(['', `idle server CPU (${IDLE_SECONDS} s)`, fmtPct(a.idleCpu.server), fmtPct(b.idleCpu.server), '']);
    rows.push(['', '  other procs CPU meanwhile', fmtPct(a.idleCpu.other), fmtPct(b.idleCpu.other), '']);
    rows.push(['', `webhook → all ${fmtInt(r.n)} finished`, a.fanOut.ok ? fmtS(a.fanOut.ms) : `FAILED (${a.fanOut.status})`, b.fanOut.ok ? fmtS(b.fanOut.ms) : 'FAILED', ratio(a.fanOut.ms, b.fanOut.ms)]);
    if (a.storm) {
      rows.push(['', `${STORM_WEBHOOKS} webhooks at once, ${Math.min(STORM_HOSTS, r.n)} hosts: 202s`, `${a.storm.ok} of ${STORM_WEBHOOKS}`, `${b.storm.ok} of ${STORM_WEBHOOKS}`, '']);
      // A ratio only when both ran the same number of executions (refused webhooks make none).
      const same = a.storm.executions === b.storm.executions;
      rows.push(['', '  → all their executions ended', `${fmtS(a.storm.ms)} (${fmtInt(a.storm.executions)})`, `${fmtS(b.storm.ms)} (${fmtInt(b.storm.executions)})`, same ? ratio(a.storm.ms, b.storm.ms) : '']);
    }
    a.restarts.forEach((ar, i) => restartRows(rows, r.n, ar, b.restarts[i], { a: a.idleCpu.server, b: b.idleCpu.server }));
  }
  log(table(rows));
  log('  all online: from the moment the agents start (or the server is killed) until every agent logged "connected to the service" (the welcome).');
  log('  hello → welcome: the restarted server\'s own time per hello (pitcrew_agent_hello_duration_seconds, bucket bounds): far below the');
  log('  time back, it says the server answered each hello as it came and the agents (their TLS handshakes in this one process) set the pace.');
  log('  listening: when the restarted server listened, by its own log line (pitcrew, at log level info) or its ready line (bare). CPU: share of one core (2 cores = 200 %).');
  log('  bench loop delay: how late this process (all N simulated agents) ran its callbacks; seconds there mean the agents, not the');
  log('  server, set the pace (their hellos go out late, and a hello more than 10 s late is closed with 4002 as it should be).');
  log();
  for (const r of results) {
    const a = r.pitcrew;
    log(`N = ${fmtInt(r.n)}: agents' warnings while connecting: pitcrew ${a.connect.problems}; bare ${r.bare.connect.problems}`);
    a.restarts.forEach((ar, i) => log(`  during the restart (TLS resumption ${ar.mode}): pitcrew ${ar.problems}; bare ${r.bare.restarts[i].problems}`));
    const tlsText = (c) => (c ? `${JSON.stringify(c.protocols)} ${JSON.stringify(c.ciphers)}, failed ${JSON.stringify(c.clientErrors)}` : 'n/a');
    a.restarts.forEach((ar, i) => log(`  the restarted server's TLS (resumption ${ar.mode}): pitcrew ${tlsText(ar.counts)}; bare ${tlsText(r.bare.restarts[i].counts)}`));
    // Each second from listening: connections handed to TLS / handshakes done.
    const flow = (x) => Object.entries(x.counts?.perSecond ?? {}).map(([at, c]) => `${Math.round(at - x.listeningAt / 1000)}:${c.connections}/${c.handshakes}`).join(' ');
    a.restarts.forEach((ar, i) => log(`  per second from listening, to TLS / handshakes done (resumption ${ar.mode}): pitcrew ${flow(ar)}; bare ${flow(r.bare.restarts[i])}`));
    const threadText = (x) => (x.serverThreads ?? []).filter((t) => t.seconds > 0).map((t) => `${t.main ? 'main' : t.tid} ${t.seconds.toFixed(2)}`).join(', ');
    a.restarts.forEach((ar, i) => log(`  its threads' CPU seconds over the window (resumption ${ar.mode}): pitcrew ${threadText(ar)}; bare ${threadText(r.bare.restarts[i])}`));
    if (!a.fanOut.ok) log(`  the fan-out webhook: ${a.fanOut.status}, ${a.fanOut.executions} executions: ${a.fanOut.detail}`);
    if (a.storm) log(`  the ${STORM_WEBHOOKS} webhooks: statuses ${JSON.stringify(a.storm.statuses)}${a.storm.firstRefusal ? `; first refusal: ${a.storm.firstRefusal}` : ''}`);
    const v = a.verify;
    log(`  verification: ${fmtInt(v.executions)} executions ${JSON.stringify(v.states)}; run once by their own agent ${fmtInt(v.runOnce)}, more than once ${v.runMore}, misaddressed ${v.misaddressed}; hosts online in the database before the stop ${fmtInt(v.onlineInDb)} of ${fmtInt(r.n)}; server exit ${v.exit}`);
    for (const ar of a.restarts) {
      const back = ar.fromReady / 1000;
      log(`  target (TLS resumption ${ar.mode}): the fleet back within ${TARGET_BACK_AFTER_READY_S} s of the server being ready → ${back.toFixed(1)} s, ${back <= TARGET_BACK_AFTER_READY_S ? 'met' : 'NOT MET'}`);
    }
    // Issue 41 item 3: the server's CPU per agent back against the bare server's in the same run, each TLS mode.
    a.restarts.forEach((ar, i) => {
      const share = ar.cpu.serverSeconds / r.bare.restarts[i].cpu.serverSeconds;
      log(`  target (TLS resumption ${ar.mode}): server CPU per agent back <= ${TARGET_CPU_OF_BARE} × the bare server's (issue 41) → ${share.toFixed(2)} ×, ${share <= TARGET_CPU_OF_BARE ? 'met' : 'NOT MET'}`);
    });
    // Issue 41 item 3: one rule over 10,000 hosts, every execution recorded within 3 s; shown for smaller fleets too, marked as such.
    const fanOutSeconds = a.fanOut.ms / 1000;
    const verdict = !a.fanOut.ok ? 'NOT MET (failed)' : fanOutSeconds > TARGET_FAN_OUT_S ? 'NOT MET' : r.n >= TARGET_FAN_OUT_HOSTS ? 'met' : `met at this N (the goal is for ${fmtInt(TARGET_FAN_OUT_HOSTS)})`;
    log(`  target: one rule over ${fmtInt(r.n)} hosts, every execution recorded within ${TARGET_FAN_OUT_S} s (issue 41) → ${fanOutSeconds.toFixed(1)} s, ${verdict}`);
  }
  log();
  log(`done in ${seconds.toFixed(0)} s`);
}

/** The checks of one size: every execution succeeded and ran once on its own host, every agent back. */
function consistent(r) {
  const v = r.pitcrew.verify;
  const expected = (r.pitcrew.fanOut.executions ?? 0) + (r.pitcrew.storm?.executions ?? 0);
  return r.pitcrew.fanOut.ok && v.executions === expected && (v.states.succeeded ?? 0) === expected && v.runOnce === expected && v.runMore === 0 && v.misaddressed === 0 && v.onlineInDb === r.n;
}

async function main() {
  const startedAt = Date.now();
  env.BENCH_TLS_COUNTS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-fleet-tls-'));
  onCleanup(() => fs.rmSync(env.BENCH_TLS_COUNTS_DIR, { recursive: true, force: true }));
  if (!fs.existsSync(path.join(root, 'dist/agent/connection.js')) || !fs.existsSync(path.join(root, 'dist/src/cli/main.js'))) throw new Error('dist/ is not built: run npm run build first');
  const results = [];
  for (const n of SIZES) {
    results.push(await runSize(n));
    await cleanupAll().then(() => undefined);
  }
  report(results, (Date.now() - startedAt) / 1000);
  return results.every(consistent);
}

// ---------------------------------------------------------------------------------------------
// Lifetime: bounded, and cleaned up on every path.

runBench(main, BUDGET_SECONDS, progress, 'BENCH_FLEET_TIMEOUT');
