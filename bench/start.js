// Start benchmark: how long and how much CPU `pitcrew server` takes from its spawn to listening,
// against a bare Fastify server's start (bench/bare-server.js) in the same run, and optionally
// against a baseline build (BENCH_BASELINE_ROOT) on the same kind of data directory.
//
// What a restart costs an SRE: the service is down, and every agent waits, until it listens.
// Each build starts on a data directory it migrated once before the rounds (so the rounds measure
// a restart, not a first start). Rounds alternate the servers. Figures: wall time from spawn to
// the server's own "listening" line (log level info) and its CPU at that moment (user + system,
// /proc), least and median of the rounds.
//
//   node bench/start.js                                  this build against the bare server
//   BENCH_BASELINE_ROOT=/path/to/built/checkout node bench/start.js
//
// Settings: BENCH_START_ROUNDS (5), BENCH_START_TIMEOUT_MS (60000), DATABASE_URL (PostgreSQL:
// each build gets a database of its own, see bench/storage.js).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fmtPct, table } from './common.js';
import { cpuSeconds, freePort, makeTempDir, runBench, spawnChild, waitFor } from './procs.js';
import { prepareStorage } from './storage.js';

const env = process.env;
const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const ROUNDS = envNumber(env, 'BENCH_START_ROUNDS', 5, 1);
const TIMEOUT_MS = envNumber(env, 'BENCH_START_TIMEOUT_MS', 60_000, 1000);
const baselineRoot = env.BENCH_BASELINE_ROOT ? path.resolve(env.BENCH_BASELINE_ROOT) : undefined;
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

/** A pitcrew build on a migrated data directory of its own: `start()` spawns it and resolves at listening. */
async function pitcrewBuild(name, buildRoot) {
  const tmp = makeTempDir(path.join(os.tmpdir(), `pitcrew-bench-start-${name}-`));
  const storage = await prepareStorage(env.DATABASE_URL || undefined, path.join(tmp, 'data'));
  const serverEnv = { ...env, PITCREW_DATA_DIR: path.join(tmp, 'data'), PITCREW_LOG_LEVEL: 'info', ...storage.serverEnv };
  if (!storage.serverEnv.DATABASE_URL) delete serverEnv.DATABASE_URL;
  progress(`${name}: migrating and bootstrapping (${storage.kind})`);
  const boot = spawnChild(`${name} bootstrap`, ['bin/pitcrew.js', 'bootstrap', '--json'], { cwd: buildRoot, env: serverEnv });
  const { code } = await boot.exited;
  if (code !== 0) throw new Error(`${name}: bootstrap failed (exit ${code}):\n${boot.output()}`);
  const start = async () => {
    const ports = { http: await freePort(), tls: await freePort(), metrics: await freePort() };
    const startEnv = { ...serverEnv, HOST: '127.0.0.1', PORT: String(ports.http), PITCREW_TLS_PORT: String(ports.tls), PITCREW_METRICS_ADDR: `127.0.0.1:${ports.metrics}` };
    // The line that says where agents connect is written once both ports listen.
    return timedStart(`${name} server`, ['bin/pitcrew.js', 'server'], { cwd: buildRoot, env: startEnv, readyText: '"https":"' });
  };
  return { name, start };
}

function bareBuild() {
  const start = async () => timedStart('bare server', [path.join(benchDir, 'bare-server.js')], { cwd: root, env: { ...env, PORT: String(await freePort()) }, readyText: '"ready":true' });
  return { name: 'bare Fastify', start };
}

/** Spawns a server; resolves at its first line holding `readyText`, with the wall ms and CPU seconds it took to get there. */
async function timedStart(name, args, { cwd, env: childEnv, readyText }) {
  let listened;
  const spawnedAt = Date.now();
  const child = spawnChild(name, args, {
    cwd,
    env: childEnv,
    onLine: (line) => {
      if (listened === undefined && line.includes(readyText)) listened = { ms: Date.now() - spawnedAt, cpu: cpuSeconds(child.pid) };
    },
  });
  await waitFor(child, async () => listened !== undefined, TIMEOUT_MS, `${name} listening`, 5);
  return { child, ...listened };
}

const least = (xs) => Math.min(...xs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const builds = [await pitcrewBuild('this build', root)];
  if (baselineRoot) builds.push(await pitcrewBuild('baseline', baselineRoot));
  builds.push(bareBuild());
  const figures = new Map(builds.map((b) => [b.name, { ms: [], cpu: [] }]));
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate the order, so neither build always follows the other's exit.
    const order = round % 2 === 1 ? builds : [...builds].reverse();
    for (const build of order) {
      progress(`round ${round}/${ROUNDS}: ${build.name}`);
      const started = await build.start();
      started.child.child.kill('SIGTERM');
      await started.child.exited;
      figures.get(build.name).ms.push(started.ms);
      figures.get(build.name).cpu.push(started.cpu);
      rounds.push([String(round), build.name, `${started.ms} ms`, `${(started.cpu * 1000).toFixed(0)} ms`]);
    }
  }
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log('# Start: spawn to listening');
  console.log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}, load ${load}; code ${codeVersion(root)}${baselineRoot ? `; baseline ${baselineRoot} (${codeVersion(baselineRoot)})` : ''}`);
  console.log(`  storage      ${env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, a migrated data directory with one tenant per build\n`);
  console.log(table([['round', 'server', 'to listening', 'CPU to listening'], ...rounds]));
  console.log('');
  const summary = [['server', 'wall, least (median)', 'CPU, least (median)', 'CPU ÷ bare']];
  const bare = figures.get('bare Fastify');
  for (const [name, f] of figures) {
    summary.push([name, `${least(f.ms)} (${median(f.ms)}) ms`, `${(least(f.cpu) * 1000).toFixed(0)} (${(median(f.cpu) * 1000).toFixed(0)}) ms`, `${(least(f.cpu) / least(bare.cpu)).toFixed(2)} ×`]);
  }
  console.log(table(summary));
  if (baselineRoot) {
    const a = figures.get('this build');
    const b = figures.get('baseline');
    console.log(`\n  this build ÷ baseline: CPU to listening ${fmtPct(least(a.cpu) / least(b.cpu))} (least), ${fmtPct(median(a.cpu) / median(b.cpu))} (median); wall ${fmtPct(median(a.ms) / median(b.ms))} (median)`);
  }
  return true;
}

runBench(main, ROUNDS * 3 * (TIMEOUT_MS / 1000) + 120, progress);
