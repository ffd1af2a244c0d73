// Idle benchmark: the CPU an idle `pitcrew server` spends while nothing happens (one tenant with
// one rule, no agents, no traffic), against a bare Fastify server (bench/bare-server.js) and,
// optionally, a baseline build (BENCH_BASELINE_ROOT), all running in the same windows.
//
// An always-on service should cost close to nothing when nothing happens: what it spends idle is
// its background duties' polls (notifier, executor, sweepers, scheduler, ...). Every server starts
// at once; after a settle time, each window reads every server's CPU (user + system, all threads,
// /proc) at its start and end, so all see the same load on the machine. Figures: ms of CPU per
// second of wall time (also the main thread's alone: the rest is GC and libuv's threads), least
// and median of the windows, what each spends above the bare server, and this build ÷ the baseline.
//
//   node bench/idle.js                                   SQLite
//   BENCH_IDLE_STORAGE=postgres node bench/idle.js       PostgreSQL (DATABASE_URL, else the local `test` server)
//   BENCH_BASELINE_ROOT=/path/to/built/checkout node bench/idle.js
//   BENCH_CPU_PROF=1 node bench/idle.js                  this build writes a V8 profile to bench/profiles/
//
// Settings: BENCH_IDLE_SETTLE_S (10), BENCH_IDLE_WINDOW_S (10), BENCH_IDLE_WINDOWS (3).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeVersion, envNumber, table } from './common.js';
import { cpuSeconds, freePort, mainThreadCpuSeconds, runBench, spawnChild, waitFor } from './procs.js';
import { startPitcrew } from './pitcrew.js';

const env = process.env;
const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const SETTLE_S = envNumber(env, 'BENCH_IDLE_SETTLE_S', 10, 0);
const WINDOW_S = envNumber(env, 'BENCH_IDLE_WINDOW_S', 10, 1);
const WINDOWS = envNumber(env, 'BENCH_IDLE_WINDOWS', 3, 1);
const POSTGRES = env.BENCH_IDLE_STORAGE === 'postgres';
const baselineRoot = env.BENCH_BASELINE_ROOT ? path.resolve(env.BENCH_BASELINE_ROOT) : undefined;
const profDir = path.join(benchDir, 'profiles');
const progress = (line) => process.stderr.write(`bench: ${line}\n`);
const loadNow = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

function storageEnv() {
  if (!POSTGRES) return { ...env, DATABASE_URL: '' };
  return { ...env, DATABASE_URL: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test' };
}

async function startBuild(name, buildRoot, nodeFlags = []) {
  progress(`${name}: starting`);
  const { server } = await startPitcrew({ root: buildRoot, env: storageEnv(), tempPrefix: `pitcrew-bench-idle-${name.replace(/\W+/g, '-')}-`, ruleName: 'idle', nodeFlags, progress });
  return { name, pid: server.pid };
}

async function startBare() {
  const bare = spawnChild('bare fastify', [path.join(benchDir, 'bare-server.js')], { cwd: root, env: { ...env, PORT: String(await freePort()) } });
  await waitFor(bare, async () => bare.output().includes('"ready":true'), 15_000, 'the bare server to listen');
  return { name: 'bare Fastify', pid: bare.pid };
}

const least = (xs) => Math.min(...xs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (perSecond) => `${(perSecond * 1000).toFixed(1)} ms/s`;

async function main() {
  const loadBefore = loadNow();
  const servers = [await startBuild('this build', root, env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])];
  if (baselineRoot) servers.push(await startBuild('baseline', baselineRoot));
  servers.push(await startBare());
  progress(`all listening; settling ${SETTLE_S} s`);
  await sleep(SETTLE_S * 1000);
  const perWindow = new Map(servers.map((s) => [s.name, []]));
  const rows = [];
  for (let w = 1; w <= WINDOWS; w++) {
    progress(`window ${w}/${WINDOWS} (${WINDOW_S} s)`);
    const at0 = performance.now();
    const cpu0 = servers.map((s) => [cpuSeconds(s.pid), mainThreadCpuSeconds(s.pid)]);
    await sleep(WINDOW_S * 1000);
    const cpu1 = servers.map((s) => [cpuSeconds(s.pid), mainThreadCpuSeconds(s.pid)]);
    const wall = (performance.now() - at0) / 1000;
    servers.forEach((s, i) => {
      const rate = (cpu1[i][0] - cpu0[i][0]) / wall;
      if (!Number.isFinite(rate)) throw new Error(`${s.name} (pid ${s.pid}) is gone`);
      perWindow.get(s.name).push(rate);
      rows.push([String(w), s.name, ms(rate), ms((cpu1[i][1] - cpu0[i][1]) / wall)]);
    });
  }
  console.log('# Idle: CPU while nothing happens');
  console.log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; load ${loadBefore} before, ${loadNow()} after`);
  console.log(`  code         ${codeVersion(root)}${baselineRoot ? `; baseline ${baselineRoot} (${codeVersion(baselineRoot)})` : ''}`);
  console.log(`  storage      ${POSTGRES ? 'PostgreSQL' : 'SQLite'}, one tenant with one rule, no agents; settle ${SETTLE_S} s, ${WINDOWS} windows of ${WINDOW_S} s (/proc ticks are 10 ms)\n`);
  console.log(table([['window', 'server', 'CPU', 'main thread'], ...rows]));
  console.log('');
  const bare = perWindow.get('bare Fastify');
  // The bare server idles at about nothing, so a ratio to it says little: the difference is given.
  const summary = [['server', 'CPU, least (median)', 'above bare (median)']];
  for (const [name, rates] of perWindow) summary.push([name, `${ms(least(rates))} (${ms(median(rates))})`, ms(median(rates) - median(bare))]);
  console.log(table(summary));
  if (baselineRoot) {
    const ratio = median(perWindow.get('this build')) / median(perWindow.get('baseline'));
    console.log(`\n  this build ÷ baseline (median): ${(ratio * 100).toFixed(1)} %`);
  }
  if (env.BENCH_CPU_PROF === '1') console.log(`\n  CPU profile of this build (written when it stops): node bench/profile-summary.js ${path.relative(root, profDir)}/CPU.*.${servers[0].pid}.*.cpuprofile`);
  return true;
}

runBench(main, 180 + SETTLE_S + WINDOWS * WINDOW_S, progress);
