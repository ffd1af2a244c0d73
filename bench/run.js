// Ingest benchmark (bench/README.md): webhook ingest throughput and p50/p99 latency at fixed
// rates, measured with autocannon against pitcrew and, in the same run with the same settings,
// against a bare Fastify route (bench/bare-server.js) and a durable floor (bench/bare-durable-server.js:
// the bare route storing each event in SQLite, one synced commit per event-loop turn). Prints the
// figures and pitcrew's ratio to each, also per core of server CPU, then checks that the number of
// events stored equals the number of 2xx replies.
//
// Both servers run as child processes, so the load generator (this process) does not share an
// event loop with the server under test. Only 127.0.0.1 is ever targeted.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeVersion, envNumber, fetchMetrics, fmtInt, fmtMs, fmtPct, table } from './common.js';
import { runLoad } from './load.js';
import { budgetSeconds, cleanupAll, cpuSeconds, freePort, machineProcessSeconds, makeTempDir, ownCpuSeconds, spawnChild, waitFor, writtenBytes } from './procs.js';
import { startPitcrew } from './pitcrew.js';

/* global fetch, AbortSignal */

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');

const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const DURATION = number('BENCH_DURATION', 10, 1);
const CONNECTIONS = Math.round(number('BENCH_CONNECTIONS', 100, 1));
const RATE_CONNECTIONS = Math.round(number('BENCH_RATE_CONNECTIONS', 50, 1));
const RATES = (env.BENCH_RATES ?? '1000,5000,10000').split(',').map((r) => Math.round(Number(r))).filter((r) => r > 0);
const WARMUP = Math.min(3, DURATION);
const ROUNDS = Math.round(number('BENCH_ROUNDS', 3, 1));
// Three targets: each max round and each fixed rate runs three times.
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 90 + (3 * ROUNDS + 3 * 3 + 6) * DURATION, 10);
const CPU_PROF = env.BENCH_CPU_PROF === '1';
// Advanced: a variant of the server to measure instead of bin/pitcrew.js (called with "server").
const SERVER_ENTRY = env.BENCH_SERVER_ENTRY ? path.resolve(env.BENCH_SERVER_ENTRY) : 'bin/pitcrew.js';
const TARGET_EVENTS_PER_SECOND = 10_000;
const TARGET_SHARE_OF_BARE = 0.6;
const TARGET_SHARE_OF_FLOOR = 0.8;

const BODY = JSON.stringify({ HostName: 'web-1', AlarmName: 'disk_full', Severity: 'critical', Act: true, MetaData: { Key1: 'Value1' } });

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
// Taken now, right after `npm run build`: the tree may change while the bench runs.
const codeAtStart = codeVersion(root);
const e2eCodeAtStart = codeVersion(root, ['src', 'agent', 'package.json', 'bin']);

async function main() {
  const startedAt = Date.now();
  const profDir = path.join(benchDir, 'profiles');
  const nodeFlags = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const profsBefore = CPU_PROF && fs.existsSync(profDir) ? new Set(fs.readdirSync(profDir)) : new Set();
  const { storage, server, base, metricsBase, apiKey, triggerId, webhookPath } = await startPitcrew({
    root, env, tempPrefix: 'pitcrew-bench-', ruleName: 'bench', serverEntry: SERVER_ENTRY, nodeFlags, progress,
  });
  const pitcrewUrl = `${base}${webhookPath}`;

  const barePort = await freePort();
  const bare = spawnChild('bare fastify', [...nodeFlags, path.join(benchDir, 'bare-server.js')], { cwd: root, env: { ...env, PORT: String(barePort) } });
  await waitFor(bare, async () => bare.output().includes('"ready":true'), 15_000, 'the bare server to listen');
  const bareUrl = `http://127.0.0.1:${barePort}/api/v1/trigger/channel/webhook/${apiKey}/${triggerId}`;

  const floorPort = await freePort();
  const floorDir = makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-floor-'));
  const floor = spawnChild('durable floor', [...nodeFlags, path.join(benchDir, 'bare-durable-server.js')], { cwd: root, env: { ...env, PORT: String(floorPort), DATA_DIR: floorDir } });
  await waitFor(floor, async () => floor.output().includes('"ready":true'), 15_000, 'the durable floor to listen');
  const floorUrl = `http://127.0.0.1:${floorPort}/api/v1/trigger/channel/webhook/${apiKey}/${triggerId}`;

  // One request each by hand: both must answer 202 before any load is meaningful.
  let setupEvents = 0;
  for (const [name, url] of [['pitcrew', pitcrewUrl], ['bare', bareUrl], ['floor', floorUrl]]) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    if (res.status !== 202) throw new Error(`${name} answered ${res.status} to the sanity request: ${text}`);
    if (name === 'pitcrew') setupEvents += 1;
  }

  const targets = [
    { key: 'pitcrew', url: pitcrewUrl, child: server, pid: server.pid, metrics: () => scrapeIngestMetrics(metricsBase) },
    { key: 'bare', url: bareUrl, child: bare, pid: bare.pid, metrics: async () => null },
    { key: 'floor', url: floorUrl, child: floor, pid: floor.pid, metrics: async () => null },
  ];
  const totals = { ok: 0, non2xx: 0, errors: 0, unanswered: 0, statuses: {} };

  async function measure(target, spec) {
    const m0 = await target.metrics();
    const cpu0 = cpuSeconds(target.pid);
    const written0 = writtenBytes(target.pid);
    const own0 = ownCpuSeconds();
    const machine0 = machineProcessSeconds();
    const wall0 = performance.now();
    const r = await runLoad({ url: target.url, body: BODY, ...spec, stopWhen: target.child.exited });
    if (!target.child.alive()) throw new Error(`${target.child.name} exited during the load:\n${target.child.output()}`);
    const window = (performance.now() - wall0) / 1000;
    const cpu1 = cpuSeconds(target.pid);
    const written1 = writtenBytes(target.pid);
    const own1 = ownCpuSeconds();
    const machine1 = machineProcessSeconds();
    const m1 = await target.metrics();
    // Over the whole window of the run (it ends at most 100 ms after the last reply, see load.js).
    r.serverCpu = (cpu1 - cpu0) / window;
    // Per reply: figures that move less than rates when the machine's speed drifts.
    r.serverCpuPerReplyUs = ((cpu1 - cpu0) / Math.max(r.ok, 1)) * 1e6;
    r.writtenPerReply = (written1 - written0) / Math.max(r.ok, 1);
    r.loadgenCpu = (own1 - own0) / window;
    r.otherCpu = Math.max(0, machine1 - machine0 - (cpu1 - cpu0) - (own1 - own0)) / window;
    if (m0 && m1) {
      const commits = m1.batchCount - m0.batchCount;
      r.ingest = {
        commits,
        meanBatch: commits ? (m1.batchSum - m0.batchSum) / commits : NaN,
        meanCommitMs: commits ? ((m1.commitSum - m0.commitSum) / commits) * 1000 : NaN,
        commitShare: (m1.commitSum - m0.commitSum) / r.elapsedSeconds,
      };
    }
    if (target.key === 'pitcrew') {
      totals.ok += r.ok;
      totals.non2xx += r.non2xx;
      totals.errors += r.errors;
      totals.unanswered += r.unanswered;
      for (const [status, n] of Object.entries(r.statuses)) if (!(status >= 200 && status < 300)) totals.statuses[status] = (totals.statuses[status] ?? 0) + n;
    }
    // Let pitcrew's writer drain and the machine settle before the next run.
    await sleep(500);
    return r;
  }

  const phases = [];
  const watchdog = (seconds) => (seconds + Math.max(5, seconds)) * 1000;

  // Warm-up: JIT, caches, connection setup. Also estimates each server's capacity, so that the
  // max-throughput run (which ends on a request count, see load.js) lasts about BENCH_DURATION.
  const warm = {};
  for (const t of targets) {
    progress(`warm-up ${t.key} (${WARMUP} s budget)`);
    warm[t.key] = await measure(t, { connections: CONNECTIONS, amount: Math.max(CONNECTIONS * 10, WARMUP * 5000), watchdogMs: watchdog(WARMUP) });
  }

  {
    // Several rounds in rotating order (pitcrew, bare, floor; floor, bare, pitcrew; ...): the median round of each
    // target is reported, so a burst of foreign load on the machine moves one round, not the result.
    const phase = { label: `max (${CONNECTIONS} connections)`, kind: 'max', results: {}, rounds: [] };
    const last = Object.fromEntries(targets.map((t) => [t.key, warm[t.key].throughput]));
    for (let round = 0; round < ROUNDS; round++) {
      const results = {};
      for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
        const amount = Math.max(CONNECTIONS * 10, Math.round(Math.max(last[t.key], 100) * DURATION));
        progress(`max throughput round ${round + 1}/${ROUNDS} ${t.key}: ${amount} requests, ~${DURATION} s`);
        results[t.key] = await measure(t, { connections: CONNECTIONS, amount, watchdogMs: watchdog(DURATION) });
        last[t.key] = results[t.key].throughput;
      }
      phase.rounds.push(results);
    }
    for (const t of targets) {
      const sorted = phase.rounds.map((r) => r[t.key]).sort((a, b) => a.throughput - b.throughput);
      phase.results[t.key] = sorted[Math.floor((sorted.length - 1) / 2)];
    }
    phases.push(phase);
  }
  for (const rate of RATES) {
    const conns = Math.min(RATE_CONNECTIONS, rate);
    const phase = { label: `${fmtInt(rate)}/s (${conns} conns)`, kind: 'rate', rate, results: {} };
    for (const t of targets) {
      progress(`fixed rate ${fmtInt(rate)}/s ${t.key}: ${fmtInt(rate * DURATION)} requests over ${DURATION} s`);
      phase.results[t.key] = await measure(t, { connections: conns, amount: Math.round(rate * DURATION), rate, watchdogMs: watchdog(DURATION) });
    }
    phases.push(phase);
  }

  // Stop pitcrew cleanly (it drains its writer), then count what it stored.
  progress('stopping servers and counting stored events');
  const stopped = await server.stop(15_000);
  await bare.stop(5000);
  await floor.stop(5000);
  const stored = await storage.countEvents();
  const profiles = {};
  if (CPU_PROF && fs.existsSync(profDir)) {
    for (const f of fs.readdirSync(profDir).filter((name) => name.endsWith('.cpuprofile') && !profsBefore.has(name))) {
      const pid = Number(f.split('.')[3]);
      profiles[pid === server.pid ? 'pitcrew' : pid === bare.pid ? 'bare' : pid === floor.pid ? 'floor' : f] = path.join(profDir, f);
    }
  }

  report({ storage, phases, warm, totals, stored, setupEvents, stopped, profiles, seconds: (Date.now() - startedAt) / 1000 });
  const expected = totals.ok + setupEvents;
  return totals.unanswered === 0 ? stored === expected : stored >= expected && stored <= expected + totals.unanswered;
}

/** The group-commit histograms of pitcrew's /metrics (sum and count only). */
async function scrapeIngestMetrics(base) {
  const text = await fetchMetrics(base);
  const value = (name) => {
    const m = text.match(new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm'));
    return m ? Number(m[1]) : 0;
  };
  return {
    batchSum: value('pitcrew_ingest_batch_size_sum'),
    batchCount: value('pitcrew_ingest_batch_size_count'),
    commitSum: value('pitcrew_ingest_commit_duration_seconds_sum'),
    commitCount: value('pitcrew_ingest_commit_duration_seconds_count'),
  };
}

// ---------------------------------------------------------------------------------------------
// Output

function report({ storage, phases, warm, totals, stored, setupEvents, stopped, profiles, seconds }) {
  const cpu = os.cpus();
  log();
  log('pitcrew ingest benchmark');
  log(`  storage      ${storage.describe}`);
  if (SERVER_ENTRY !== 'bin/pitcrew.js') log(`  server       ${SERVER_ENTRY} (BENCH_SERVER_ENTRY)`);
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}`);
  log(`  code         ${codeAtStart}; load average before the run ${loadBefore}`);
  log(`  load         autocannon, HTTP/1.1 keep-alive, pipelining 1, ${BODY.length}-byte JSON body; ${DURATION} s per run`);
  log('  baseline     bare Fastify 5 route (bench/bare-server.js): same path shape, same JSON body parsed, 202 + small JSON reply');
  log('  floor        the bare route + SQLite WAL, each event inserted, one synced commit per event-loop turn (bench/bare-durable-server.js)');
  log();

  const rows = [['phase', 'figure', 'pitcrew', 'bare fastify', 'durable floor', 'pitcrew / bare', 'pitcrew / floor']];
  const ratios = (f, fmt = fmtPct) => [fmt(f('pitcrew') / f('bare')), fmt(f('pitcrew') / f('floor'))];
  const times = (x) => `${x.toFixed(2)} ×`;
  for (const p of phases) {
    const r = p.results;
    const each = (f) => ['pitcrew', 'bare', 'floor'].map((k) => f(r[k]));
    if (p.kind === 'max') {
      rows.push([p.label, 'accepted/s', ...each((x) => fmtInt(x.throughput)), ...ratios((k) => r[k].throughput)]);
      if (p.rounds.length > 1) {
        const span = (key) => {
          const values = p.rounds.map((round) => round[key].throughput);
          return `${fmtInt(Math.min(...values))}–${fmtInt(Math.max(...values))}`;
        };
        const spanOf = (other) => {
          const values = p.rounds.map((round) => round.pitcrew.throughput / round[other].throughput);
          return `${(Math.min(...values) * 100).toFixed(1)}–${fmtPct(Math.max(...values))}`;
        };
        rows.push([`  median of ${p.rounds.length} rounds`, 'round range', span('pitcrew'), span('bare'), span('floor'), spanOf('bare'), spanOf('floor')]);
      }
      // Per core: accepted/s over the server's cores busy, i.e. replies per CPU-second of the server.
      rows.push(['', 'accepted/s per core', ...each((x) => fmtInt(1e6 / x.serverCpuPerReplyUs)), ...ratios((k) => 1 / r[k].serverCpuPerReplyUs)]);
    } else {
      const achieved = (x) => x.ok / Math.max(x.elapsedSeconds, DURATION);
      const tag = (x) => (x.elapsedSeconds <= DURATION + 0.05 ? '' : ' (behind)');
      rows.push([p.label, 'accepted/s', ...each((x) => fmtInt(achieved(x)) + tag(x)), ...ratios((k) => achieved(r[k]))]);
    }
    rows.push(['', 'p50 ms', ...each((x) => fmtMs(x.p50)), ...ratios((k) => r[k].p50, times)]);
    rows.push(['', 'p99 ms', ...each((x) => fmtMs(x.p99)), ...ratios((k) => r[k].p99, times)]);
    rows.push(['', 'server CPU', ...each((x) => fmtPct(x.serverCpu)), '', '']);
    rows.push(['', 'server CPU/reply', ...each((x) => `${x.serverCpuPerReplyUs.toFixed(0)} µs`), ...ratios((k) => r[k].serverCpuPerReplyUs, times)]);
    if (storage.kind === 'SQLite') rows.push(['', 'written/reply', ...each((x) => `${fmtInt(x.writtenPerReply)} B`), '', '']);
    rows.push(['', 'loadgen CPU', ...each((x) => fmtPct(x.loadgenCpu)), '', '']);
    rows.push(['', 'other procs CPU', ...each((x) => fmtPct(x.otherCpu)), '', '']);
  }
  log(table(rows));
  log('  accepted/s: 2xx replies per second; at fixed rates the rate actually delivered ("behind": the run took longer than planned).');
  log('  CPU: share of one core used during the run by the server child / this load-generating process / all other processes');
  log(`       on the machine (${storage.kind === 'PostgreSQL' ? 'PostgreSQL included; ' : ''}more than a few % means the run was disturbed). Max: median round of each target.`);
  log('  CPU/reply: the server\'s CPU time over the run per 2xx reply; written/reply: bytes the server process wrote to storage');
  log('       (write_bytes in /proc/PID/io: the WAL and checkpoints) per 2xx reply. Both drift less than rates on a noisy machine.');
  log('  per core: 2xx replies per second of the server\'s CPU time (1 / CPU per reply), the figure the goals are set on.');
  log();

  const irows = [['phase', 'seconds', 'requests', 'commits', 'mean batch', 'mean commit ms', 'time in commit', 'non-2xx', 'errors']];
  const iphases = [{ label: 'warm-up', results: warm }];
  for (const p of phases) {
    if (p.rounds?.length > 1) p.rounds.forEach((r, i) => iphases.push({ label: `max round ${i + 1}`, results: r }));
    else iphases.push(p);
  }
  for (const p of iphases) {
    const a = p.results.pitcrew;
    const i = a.ingest ?? {};
    irows.push([p.label, a.elapsedSeconds.toFixed(1), fmtInt(a.sent), fmtInt(i.commits), Number.isFinite(i.meanBatch) ? i.meanBatch.toFixed(1) : 'n/a', fmtMs(i.meanCommitMs), fmtPct(i.commitShare), fmtInt(a.non2xx), fmtInt(a.errors)]);
  }
  log('pitcrew group commit (from GET /metrics: pitcrew_ingest_batch_size, pitcrew_ingest_commit_duration_seconds)');
  log(table(irows));
  log();

  const expected = totals.ok + setupEvents;
  let verdict;
  if (totals.unanswered === 0) {
    verdict = stored === expected ? 'OK: equal' : `MISMATCH: ${stored - expected > 0 ? '+' : ''}${stored - expected}`;
  } else {
    verdict = stored >= expected && stored <= expected + totals.unanswered
      ? `OK within the ${totals.unanswered} requests cut off unanswered by a watchdog`
      : `MISMATCH: ${stored - expected} (with ${totals.unanswered} requests cut off unanswered)`;
  }
  log('verification');
  log(`  2xx replies from pitcrew   ${fmtInt(expected)} (${fmtInt(totals.ok)} under load + ${setupEvents} sanity request)`);
  log(`  events stored              ${fmtInt(stored)} (select count(*) from events, after the server stopped: exit ${stopped.code ?? stopped.signal})`);
  log(`  stored vs 2xx              ${verdict}`);
  if (totals.non2xx || totals.errors) log(`  non-2xx ${fmtInt(totals.non2xx)} ${JSON.stringify(totals.statuses)}, socket errors/timeouts ${fmtInt(totals.errors)}`);
  log();

  const max = phases.find((p) => p.kind === 'max').results;
  const share = max.pitcrew.throughput / max.bare.throughput;
  const perCore = (key) => max[key].serverCpuPerReplyUs;
  const coreShareOfBare = perCore('bare') / perCore('pitcrew');
  const coreShareOfFloor = perCore('floor') / perCore('pitcrew');
  const pass = (ok) => (ok ? 'met' : 'NOT MET');
  log('targets (benchmark, not a test)');
  log(`  >= ${fmtInt(TARGET_EVENTS_PER_SECOND)} accepted events/s      ${fmtInt(max.pitcrew.throughput)}/s → ${pass(max.pitcrew.throughput >= TARGET_EVENTS_PER_SECOND)}`);
  log(`  >= ${fmtPct(TARGET_SHARE_OF_BARE)} of the bare route      ${fmtPct(share)} → ${pass(share >= TARGET_SHARE_OF_BARE)}`);
  log(`  per core >= ${fmtPct(TARGET_SHARE_OF_BARE)} of the bare route      ${fmtPct(coreShareOfBare)} → ${pass(coreShareOfBare >= TARGET_SHARE_OF_BARE)}`);
  log(`  per core >= ${fmtPct(TARGET_SHARE_OF_FLOOR)} of the durable floor  ${fmtPct(coreShareOfFloor)} → ${pass(coreShareOfFloor >= TARGET_SHARE_OF_FLOOR)}`);
  for (const [name, file] of Object.entries(profiles)) log(`  CPU profile of ${name}: node bench/profile-summary.js ${path.relative(root, file)}`);
  log();
  log(`done in ${seconds.toFixed(0)} s`);
}

// ---------------------------------------------------------------------------------------------
// Lifetime: bounded, and cleaned up on every path.
//
// `npm run bench` runs the benchmarks one after the other: this one (ingest), then the end-to-end
// one (bench/e2e.js), the throttling isolation one (bench/isolation.js) and the fleet one
// (bench/fleet.js) as child processes once everything of the one before is stopped and removed,
// so they never share the machine (the integration ingest one, bench/alerts.js, the cron one,
// bench/cron.js, the cloud action one, bench/cloud.js, the CLI Machine one, bench/cli.js, and the
// git sources one, bench/git-sources.js, run before the fleet one). BENCH_ONLY=ingest, e2e,
// isolation, alerts, cron, cloud, cli, git or fleet runs one of them; BENCH_ONLY=api, imports,
// incidents, snapshots (bench/snapshots.js, with Debian's Prometheus), backup
// (bench/backup-latency.js), peers (bench/peers.js, Node-RED from the npm registry), start
// (bench/start.js) or idle (bench/idle.js) runs one not in the default set.

const ONLY = env.BENCH_ONLY ?? '';

/** Runs another bench file with this terminal; resolves with its exit code. Signals are passed on to it. */
function runChildBench(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(benchDir, file)], { cwd: root, env: { ...env, BENCH_E2E_CODE_VERSION: e2eCodeAtStart }, stdio: 'inherit' });
    const forward = (signal) => child.exitCode === null && child.signalCode === null && child.kill(signal);
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, forward);
    child.once('error', (error) => {
      progress(`could not start bench/${file}: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 130 : 1)));
  });
}

/** The benchmarks after this one, in the order `npm run bench` runs them, by their BENCH_ONLY name. */
const DEFAULT_SET = { e2e: 'e2e.js', isolation: 'isolation.js', alerts: 'alerts.js', cron: 'cron.js', cloud: 'cloud.js', cli: 'cli.js', git: 'git-sources.js', fleet: 'fleet.js' };
/** Those run only by name. */
const BY_NAME_ONLY = { api: 'api.js', imports: 'imports.js', incidents: 'incidents-analytics.js', snapshots: 'snapshots.js', backup: 'backup-latency.js', peers: 'peers.js', start: 'start.js', idle: 'idle.js' };
const ONE_BENCH = { ...DEFAULT_SET, ...BY_NAME_ONLY };

if (ONLY !== '' && ONLY !== 'ingest' && !Object.hasOwn(ONE_BENCH, ONLY)) {
  progress(`BENCH_ONLY must be ingest, ${Object.keys(ONE_BENCH).join(', ')} (or unset for all but ${Object.keys(BY_NAME_ONLY).join(', ')}), got "${ONLY}"`);
  process.exit(2);
} else if (Object.hasOwn(ONE_BENCH, ONLY)) {
  runChildBench(ONE_BENCH[ONLY]).then((code) => process.exit(code));
} else {
  budgetSeconds(BUDGET_SECONDS, progress);

  const onSignal = (signal) => {
    progress(`${signal}: cleaning up`);
    cleanupAll().finally(() => process.exit(130));
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, onSignal);

  /** The ingest bench is over and cleaned up: exit, or go on with the end-to-end bench. */
  const then = async (code) => {
    if (ONLY === 'ingest') process.exit(code);
    for (const signal of ['SIGINT', 'SIGTERM']) process.off(signal, onSignal);
    const codes = [code];
    for (const file of Object.values(DEFAULT_SET)) {
      log();
      codes.push(await runChildBench(file));
    }
    process.exit(Math.max(...codes));
  };

  main().then(
    async (consistent) => {
      await cleanupAll();
      await then(consistent ? 0 : 1);
    },
    async (error) => {
      progress(`failed: ${error?.stack ?? error}`);
      await cleanupAll();
      await then(1);
    },
  );
}
