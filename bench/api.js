// Management API benchmark (bench/README.md): a rule read (GET /api/v1/rules/:id) and changed
// (PATCH /api/v1/rules/:id), on this build and on a baseline build of the code before a change
// (BENCH_BASELINE_ROOT), in the same run, rounds alternating between the two servers. Issue 37
// asks the API routes to stay within 10 % of before: this prints each figure and the ratio.
// Without BENCH_BASELINE_ROOT it prints this build's figures alone.
//
// Both servers run as child processes on fresh storage; only 127.0.0.1 is ever targeted.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fmtInt, fmtMs, fmtPct, table } from './common.js';
import { runLoad } from './load.js';
import { cpuSeconds, runBench } from './procs.js';
import { startPitcrew } from './pitcrew.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const REQUESTS = Math.round(number('BENCH_API_REQUESTS', 4000, 100));
const CONNECTIONS = Math.round(number('BENCH_CONNECTIONS', 10, 1));
const ROUNDS = Math.round(number('BENCH_ROUNDS', 3, 1));
const BASELINE_ROOT = env.BENCH_BASELINE_ROOT ? path.resolve(env.BENCH_BASELINE_ROOT) : undefined;
const LIMIT = 0.1;

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

async function server(name, serverRoot) {
  const nodeFlags = env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${path.join(benchDir, 'profiles')}`, `--cpu-prof-name=api-${name.replace(/\W+/g, '-')}.cpuprofile`] : [];
  const pitcrew = await startPitcrew({ root: serverRoot, env, tempPrefix: `pitcrew-bench-api-${name}-`, ruleName: 'bench rule', nodeFlags, progress: (line) => progress(`${name}: ${line}`) });
  const rule = (await pitcrew.api('GET', '/api/v1/rules')).items[0];
  return { name, pitcrew, url: `${pitcrew.base}/api/v1/rules/${rule.id}` };
}

const ROUTES = {
  'GET /rules/:id': { method: 'GET' },
  // The same change each time: the rule is written, and (with the audit log) an entry recorded, per call.
  'PATCH /rules/:id': { method: 'PATCH', body: JSON.stringify({ enabled: true }) },
};

async function main() {
  const servers = [await server('this build', root), ...(BASELINE_ROOT ? [await server('baseline', BASELINE_ROOT)] : [])];
  const results = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [route, { method, body }] of Object.entries(ROUTES)) {
      for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
        progress(`round ${round + 1}/${ROUNDS}: ${route} on ${s.name}`);
        const cpuBefore = cpuSeconds(s.pitcrew.server.pid);
        const r = await runLoad({ url: s.url, method, body, headers: { authorization: `Bearer ${s.pitcrew.token}` }, connections: CONNECTIONS, amount: REQUESTS, watchdogMs: 120_000 });
        // The server's CPU per answered request: what the route costs, whatever else the machine is doing.
        const cpuMsPerRequest = ((cpuSeconds(s.pitcrew.server.pid) - cpuBefore) * 1000) / Math.max(1, r.ok);
        results.push({ round, route, server: s.name, ...r, cpuMsPerRequest });
      }
    }
  }

  log();
  log('pitcrew management API benchmark');
  log(`  storage      ${servers[0].pitcrew.storage.describe}`);
  log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; code ${codeVersion(root)}${BASELINE_ROOT ? `; baseline ${BASELINE_ROOT} (${codeVersion(BASELINE_ROOT)})` : ''}`);
  log(`  load         ${CONNECTIONS} keep-alive connections, ${fmtInt(REQUESTS)} requests per round, ${ROUNDS} rounds, alternating servers`);
  log();
  log(table([
    ['round', 'route', 'server', '2xx', 'other', 'req/s', 'p50', 'p99', 'CPU/req'],
    ...results.map((r) => [String(r.round + 1), r.route, r.server, fmtInt(r.ok), fmtInt(r.non2xx + r.errors), fmtInt(r.throughput), fmtMs(r.p50), fmtMs(r.p99), `${r.cpuMsPerRequest.toFixed(3)} ms`]),
  ]));
  const failures = results.filter((r) => r.ok !== r.amount).map((r) => `${r.route} on ${r.server}: ${r.amount - r.ok} requests not answered 2xx`);
  if (BASELINE_ROOT) {
    log();
    for (const route of Object.keys(ROUTES)) {
      // Best round of each: the figure least disturbed by the rest of the machine.
      const best = (name) => Math.max(...results.filter((r) => r.route === route && r.server === name).map((r) => r.throughput));
      const ratio = best('this build') / best('baseline');
      log(`  ${route}: this build ${fmtInt(best('this build'))} req/s, baseline ${fmtInt(best('baseline'))} req/s: ${fmtPct(ratio)} of before (goal ≥ ${fmtPct(1 - LIMIT)})`);
      const leastCpu = (name) => Math.min(...results.filter((r) => r.route === route && r.server === name).map((r) => r.cpuMsPerRequest));
      log(`  ${''.padEnd(route.length)}  server CPU per request: this build ${leastCpu('this build').toFixed(3)} ms, baseline ${leastCpu('baseline').toFixed(3)} ms (${(leastCpu('this build') / leastCpu('baseline')).toFixed(2)} ×)`);
      if (ratio < 1 - LIMIT) failures.push(`${route} is more than ${fmtPct(LIMIT)} slower than the baseline`);
    }
  }
  for (const failure of failures) log(`  FAILED: ${failure}`);
  return failures.length === 0;
}

runBench(main, number('BENCH_TIMEOUT', 180 + ROUNDS * 60, 10), progress);
