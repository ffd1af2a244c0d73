// Throttling isolation benchmark (bench/README.md): tenant B's webhook latency at a fixed rate,
// alone and while tenant A floods the same server far over its throttle. The "alone" run is the
// baseline measured in the same run; the ratio shows what A's flood costs B.
//
// pitcrew runs as a child process; the flood comes from a second child process (this file with
// --flood), so B's load generator (this process) does not share an event loop with it.
// Only 127.0.0.1 is ever targeted.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fmtInt, fmtMs, fmtPct, table } from './common.js';
import { runLoad } from './load.js';
import { cpuSeconds, runBench, spawnChild } from './procs.js';
import { startPitcrew } from './pitcrew.js';

/* global fetch, AbortSignal */

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const RATE = Math.round(number('BENCH_ISOLATION_RATE', 1000, 1));
const SECONDS = number('BENCH_ISOLATION_SECONDS', 5, 1);
const ROUNDS = Math.round(number('BENCH_ISOLATION_ROUNDS', 2, 1));
const CONNECTIONS = Math.round(number('BENCH_ISOLATION_CONNECTIONS', 20, 1));
const FLOOD_CONNECTIONS = Math.round(number('BENCH_ISOLATION_FLOOD_CONNECTIONS', 100, 1));
const FLOOD_THROTTLE = { ratePerSecond: 100, burst: 100 };
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 90 + ROUNDS * 2 * (SECONDS + 5), 10);
const BODY = JSON.stringify({ HostName: 'web-1', AlarmName: 'disk_full', Severity: 'critical' });

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

/** Flood mode: as fast as possible until told to stop, then print what was answered. */
async function flood(url) {
  const stopped = new Promise((resolve) => process.once('SIGTERM', resolve));
  const r = await runLoad({ url, body: BODY, connections: FLOOD_CONNECTIONS, amount: 50_000_000, watchdogMs: BUDGET_SECONDS * 1000, stopWhen: stopped });
  process.stdout.write(`${JSON.stringify({ statuses: r.statuses, elapsedSeconds: r.elapsedSeconds })}\n`);
}

async function main() {
  const codeAtStart = codeVersion(root);
  const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  const pitcrew = await startPitcrew({ root, env, tempPrefix: 'pitcrew-isolation-', ruleName: 'tenant B', progress });
  const { base, server, webhookPath } = pitcrew;
  const quietUrl = `${base}${webhookPath}`;

  progress('bootstrapping tenant A, the flooder');
  const boot = spawnChild('pitcrew bootstrap', ['bin/pitcrew.js', 'bootstrap', '--json', '--tenant', 'flooder'], {
    cwd: root, env: { ...env, PITCREW_DATA_DIR: pitcrew.dataDir, PITCREW_LOG_LEVEL: 'warn', ...pitcrew.storage.serverEnv },
  });
  await boot.exited;
  const flooder = JSON.parse(boot.output().split('\n').find((l) => l.startsWith('{')));
  const asFlooder = async (method, url, body) => {
    const res = await fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${flooder.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const floodRule = await asFlooder('POST', '/api/v1/rules', { name: 'flood', trigger: { type: 'webhook' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' });
  await asFlooder('PATCH', '/api/v1/tenant', { throttle: FLOOD_THROTTLE });
  const floodUrl = `${base}/api/v1/trigger/channel/webhook/${flooder.apiKey}/${floodRule.trigger.triggerId}`;

  const amount = RATE * SECONDS;
  const quietRun = () => runLoad({ url: quietUrl, body: BODY, connections: CONNECTIONS, amount, rate: RATE, watchdogMs: (SECONDS * 3 + 10) * 1000, stopWhen: server.exited });
  const measure = async (withFlood) => {
    const floodChild = withFlood ? spawnChild('flood', [fileURLToPath(import.meta.url), '--flood', floodUrl], { cwd: root, env }) : undefined;
    // Let the flood reach full speed before B's run starts.
    if (floodChild) await new Promise((resolve) => setTimeout(resolve, 1000));
    const cpu0 = cpuSeconds(server.pid);
    const r = await quietRun();
    r.serverCpu = (cpuSeconds(server.pid) - cpu0) / r.elapsedSeconds;
    if (floodChild) {
      floodChild.child.kill('SIGTERM');
      await floodChild.exited;
      r.flood = JSON.parse(floodChild.output().split('\n').find((l) => l.startsWith('{')) ?? '{"statuses":{}}');
    }
    if (!server.alive()) throw new Error(`pitcrew exited:\n${server.output()}`);
    return r;
  };

  await runLoad({ url: quietUrl, body: BODY, connections: CONNECTIONS, amount: Math.min(amount, 3000), rate: RATE, watchdogMs: 30_000 }); // warm-up
  const alone = [];
  const flooded = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    progress(`round ${round + 1}/${ROUNDS}: tenant B alone, then during tenant A's flood`);
    alone.push(await measure(false));
    flooded.push(await measure(true));
  }
  const median = (runs) => [...runs].sort((a, b) => a.p99 - b.p99)[Math.floor((runs.length - 1) / 2)];
  const [a, f] = [median(alone), median(flooded)];
  const floodOk = flooded.reduce((n, r) => n + (r.flood.statuses['202'] ?? 0), 0);
  const flood429 = flooded.reduce((n, r) => n + (r.flood.statuses['429'] ?? 0), 0);
  const floodSeconds = flooded.reduce((n, r) => n + r.flood.elapsedSeconds, 0);
  const quietRefused = [...alone, ...flooded].reduce((n, r) => n + r.non2xx + r.errors + r.unanswered, 0);

  log(`pitcrew throttling isolation benchmark: ${codeAtStart}; ${os.cpus().length} CPUs; load average before ${loadBefore}; storage ${pitcrew.storage.kind}`);
  log(`tenant B: ${fmtInt(RATE)}/s for ${SECONDS} s over ${CONNECTIONS} connections; tenant A: ${FLOOD_CONNECTIONS} connections as fast as possible, throttled to ${FLOOD_THROTTLE.ratePerSecond}/s (burst ${FLOOD_THROTTLE.burst})`);
  log();
  log(table([
    ['tenant B', 'figure', 'alone (baseline)', 'during A’s flood', 'flood / alone'],
    [`median of ${ROUNDS} rounds`, 'accepted/s', fmtInt(a.throughput), fmtInt(f.throughput), fmtPct(f.throughput / a.throughput)],
    ['', 'p50 ms', fmtMs(a.p50), fmtMs(f.p50), `${(f.p50 / a.p50).toFixed(2)} ×`],
    ['', 'p99 ms', fmtMs(a.p99), fmtMs(f.p99), `${(f.p99 / a.p99).toFixed(2)} ×`],
    ['', 'p99 range', `${fmtMs(Math.min(...alone.map((r) => r.p99)))}–${fmtMs(Math.max(...alone.map((r) => r.p99)))}`, `${fmtMs(Math.min(...flooded.map((r) => r.p99)))}–${fmtMs(Math.max(...flooded.map((r) => r.p99)))}`],
    ['', 'server CPU', fmtPct(a.serverCpu), fmtPct(f.serverCpu)],
  ]));
  log();
  log(`tenant A during the floods: ${fmtInt(flood429 / floodSeconds)} refused/s (429), ${fmtInt(floodOk)} accepted in ${floodSeconds.toFixed(1)} s (throttle ${FLOOD_THROTTLE.ratePerSecond}/s + burst ${FLOOD_THROTTLE.burst})`);
  log(`verification: tenant B refused or unanswered ${quietRefused} of ${fmtInt(amount * ROUNDS * 2)} → ${quietRefused === 0 ? 'OK: every request accepted' : 'FAILED'}`);
  return quietRefused === 0;
}

if (process.argv[2] === '--flood') {
  flood(process.argv[3]).then(() => process.exit(0), (error) => {
    process.stderr.write(`flood failed: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
} else {
  runBench(main, BUDGET_SECONDS, progress);
}
