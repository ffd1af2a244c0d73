// CLI Machine benchmark (bench/README.md): runbooks run by the service itself (target cli_machine,
// src/actions/cli/runner.ts) against the machine's bare spawn rate of the same program, in the same
// run.
//
// - pitcrew runs as a child process (bench/pitcrew.js) with PITCREW_CLI_MAX_PER_TENANT set to the
//   cap (BENCH_CLI_MAX_PER_TENANT) and PITCREW_CLI_SCRATCH_DIR a temp dir of the bench's own. One
//   webhook rule, action {type: 'cli', runbook: {script: 'true', interpreter: 'sh'}}, target
//   cli_machine. R webhooks, each naming another host (HostName), are posted C at a time; each
//   makes one execution, which the service runs as a child process (throwaway HOME, clean
//   environment, captured and masked output), at most `cap` at once.
// - The baseline: bench/spawn-baseline.js (as for bench/e2e.js) spawns `/bin/sh -c true` R times,
//   `cap` at once: what starting the process costs here, without anything the service adds.
// Exit 0 when every webhook made one execution, each succeeded, none ran twice and every throwaway
// HOME was removed; 1 otherwise; 2 when the time budget ran out.
/* global fetch, AbortSignal */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeVersion, envNumber, fmtInt, fmtPct, inParallel, table } from './common.js';
import { percentile } from './load.js';
import { startPitcrew } from './pitcrew.js';
import { cpuSeconds, machineProcessSeconds, makeTempDir, ownCpuSeconds, runBench, spawnChild, waitFor } from './procs.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => Math.round(envNumber(env, name, fallback, min));

const EVENTS = number('BENCH_CLI_EVENTS', 400, 1);
const WARMUP = number('BENCH_CLI_WARMUP', 40, 0);
const CONCURRENCY = number('BENCH_CLI_CONCURRENCY', 16, 1);
const CAP = number('BENCH_CLI_MAX_PER_TENANT', 8, 1);
/** How long after the last webhook of a run its executions may take to end before the bench fails. */
const WAIT_SECONDS = number('BENCH_CLI_WAIT_SECONDS', 120, 5);
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 120 + 2 * WAIT_SECONDS + 0.1 * (EVENTS + WARMUP), 10);
/** Quiet time after a run's executions all ended: a doubled run would show up meanwhile. */
const SETTLE_MS = 1000;
const ACTIVE = "('queued', 'dispatched', 'running')";
const CPU_PROF = env.BENCH_CPU_PROF === '1';
const profDir = path.join(benchDir, 'profiles');

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench-cli: ${line}\n`);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
const codeAtStart = env.BENCH_E2E_CODE_VERSION || codeVersion(root);
const hostOf = (n) => `cli-${String(n).padStart(5, '0')}`;

/**
 * CPU seconds over `fn`: the server's own, its ended children's (the runbooks' shells, which it
 * waits for), this process's and the whole machine's; and the wall time.
 */
async function withCpu(pid, fn) {
  const at = () => ({ server: cpuSeconds(pid), withChildren: cpuSeconds(pid, true), bench: ownCpuSeconds(), machine: machineProcessSeconds(), wall: performance.now() });
  const a = at();
  const value = await fn();
  const b = at();
  const server = b.server - a.server;
  return { value, seconds: (b.wall - a.wall) / 1000, cpu: { server, runbooks: b.withChildren - a.withChildren - server, bench: b.bench - a.bench, machine: b.machine - a.machine } };
}

/**
 * Posts one webhook per host, CONCURRENCY in flight; then polls the storage (read-only, beside the
 * server) until the rule has `expected` executions and none is active.
 */
async function fire({ base, webhookPath, hosts, reader, ruleId, expected, server }) {
  const posts = new Map();
  const firstPost = Date.now();
  await inParallel(hosts, CONCURRENCY, async (host) => {
    const at = Date.now();
    try {
      const res = await fetch(`${base}${webhookPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ HostName: host, AlarmName: 'bench' }), signal: AbortSignal.timeout(30_000) });
      const json = await res.json().catch(() => null);
      posts.set(host, { at, status: res.status, json });
    } catch (error) {
      posts.set(host, { at, status: 0, json: null, error: error.message });
    }
  });
  const deadline = Date.now() + WAIT_SECONDS * 1000;
  for (;;) {
    if (!server.alive()) throw new Error(`the server exited:\n${server.output()}`);
    const row = (await reader.all(`select count(*) as n, sum(case when state in ${ACTIVE} then 1 else 0 end) as pending from executions where rule_id = '${ruleId}'`))[0];
    const c = { n: Number(row.n), pending: Number(row.pending ?? 0) };
    if (c.n >= expected && c.pending === 0) return { posts, firstPost, complete: true, ...c };
    if (Date.now() > deadline) return { posts, firstPost, complete: false, ...c };
    await sleep(20);
  }
}

/** bench/spawn-baseline.js: `count` spawns of `/bin/sh -c true`, `lanes` at once; its result line. */
async function bareSpawns(count, lanes, cwd) {
  const s = spawnChild('spawn baseline', [path.join(benchDir, 'spawn-baseline.js'), String(count), String(lanes), cwd], { cwd, env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: cwd } });
  await waitFor(s, async () => s.output().includes('"ready":true'), 15_000, 'the spawner to start', 10);
  s.child.kill('SIGUSR2');
  const { code } = await s.exited;
  const line = s.output().split('\n').find((l) => l.startsWith('{"ok"'));
  if (code !== 0 || !line) throw new Error(`the spawner failed (exit ${code}):\n${s.output()}`);
  return JSON.parse(line);
}

async function main() {
  const startedAt = Date.now();
  if (!fs.existsSync(path.join(root, 'dist/src/actions/cli/runner.js'))) throw new Error('dist/ is not built, or predates the CLI Machine: run npx tsc -p tsconfig.build.json (or npm run build) first');
  // The runs' throwaway HOMEs go here (0755: as root each run's HOME is nobody's), to count leftovers.
  const scratch = makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-cli-scratch-'));
  fs.chmodSync(scratch, 0o755);
  const spawnCwd = makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-cli-spawn-'));
  const pc = await startPitcrew({
    root, env: { ...env, PITCREW_CLI_MAX_PER_TENANT: String(CAP), PITCREW_CLI_SCRATCH_DIR: scratch }, tempPrefix: 'pitcrew-bench-cli-', ruleName: 'bench webhook (unused)', progress,
    nodeFlags: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
  });
  const { server, base, apiKey, api, storage } = pc;
  const rule = await api('POST', '/api/v1/rules', {
    name: 'bench cli',
    trigger: { type: 'webhook' },
    action: { type: 'cli', runbook: { script: 'true', interpreter: 'sh' } },
    target: { type: 'cli_machine' },
    infrastructureType: 'On_Premise',
  });
  const webhookPath = `/api/v1/trigger/channel/webhook/${apiKey}/${rule.trigger.triggerId}`;
  const reader = await storage.openReader();
  const hosts = Array.from({ length: WARMUP + EVENTS }, (_, i) => hostOf(i));
  /** Webhooks for hosts[from, to): the rule then has `to` executions in all. */
  const run = (from, to) => fire({ base, webhookPath, hosts: hosts.slice(from, to), reader, ruleId: rule.id, expected: to, server });

  // Warm-up (JIT, connections, the page cache), not in the figures: both paths.
  let warmRun = null;
  if (WARMUP > 0) {
    progress(`warm-up: ${WARMUP} webhooks, then ${WARMUP} bare spawns`);
    warmRun = await run(0, WARMUP);
    if (!warmRun.complete) throw new Error(`the warm-up's executions did not all end within ${WAIT_SECONDS} s: ${warmRun.n} made, ${warmRun.pending} still active`);
    await bareSpawns(WARMUP, CAP, spawnCwd);
    await sleep(500);
  }

  progress(`pitcrew: ${fmtInt(EVENTS)} webhooks, ${CONCURRENCY} at a time, runs capped at ${CAP}, until every execution ended`);
  const p = await withCpu(server.pid, () => run(WARMUP, WARMUP + EVENTS));
  await sleep(SETTLE_MS);
  progress(`baseline: ${fmtInt(EVENTS)} × /bin/sh -c true, ${CAP} at a time (bench/spawn-baseline.js)`);
  const b = await withCpu(server.pid, () => bareSpawns(EVENTS, CAP, spawnCwd));

  progress('reading the executions back (GET /api/v1/executions?ruleId=…)');
  const executions = [];
  let cursor = null;
  do {
    const page = await api('GET', `/api/v1/executions?ruleId=${rule.id}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    executions.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  const transitions = await reader.all(
    `select t.execution_id as id, t.from_state as f, t.to_state as t, count(*) as n from execution_transitions t join executions e on e.id = t.execution_id where e.rule_id = '${rule.id}' group by t.execution_id, t.from_state, t.to_state`,
  );
  const otherExecutions = Number((await reader.all(`select count(*) as n from executions where rule_id <> '${rule.id}'`))[0].n);
  await reader.close();
  const stopped = await server.stop(30_000);
  const leftovers = fs.readdirSync(scratch);

  return report({ storage, executions, transitions, otherExecutions, warmRun, p, b, hosts, leftovers, stopped, serverPid: server.pid, seconds: (Date.now() - startedAt) / 1000 });
}

// ---------------------------------------------------------------------------------------------
// Output

const stats = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, c) => a - c);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
};

function report(r) {
  const { p, b } = r;
  const run = p.value;
  const spawn = b.value;
  const measured = new Set(r.hosts.slice(WARMUP));
  const mine = r.executions.filter((e) => measured.has(e.hostname));
  const t = (iso) => (iso ? Date.parse(iso) : NaN);
  const postAt = (e) => run.posts.get(e.hostname)?.at ?? NaN;
  const pitcrewSeconds = (Math.max(...mine.map((e) => t(e.finishedAt))) - run.firstPost) / 1000;
  const pitcrewRate = EVENTS / pitcrewSeconds;
  const spawnRate = spawn.ok / spawn.seconds;
  const total = stats(mine.map((e) => t(e.finishedAt) - postAt(e)));
  const stage = {
    queued: stats(mine.map((e) => t(e.queuedAt) - postAt(e))),
    dispatched: stats(mine.map((e) => t(e.dispatchedAt) - t(e.queuedAt))),
    started: stats(mine.map((e) => t(e.startedAt) - t(e.dispatchedAt))),
    ran: stats(mine.map((e) => t(e.finishedAt) - t(e.startedAt))),
  };
  const sum = (from, to) => mine.reduce((total, e) => total + t(e[to]) - t(e[from]), 0);
  const ranMean = sum('startedAt', 'finishedAt') / mine.length;
  // Mean runs in flight over the run: from dispatch (a slot taken) and from start (a process running) to the end.
  const inFlight = { held: sum('dispatchedAt', 'finishedAt') / 1000 / pitcrewSeconds, running: sum('startedAt', 'finishedAt') / 1000 / pitcrewSeconds };
  // Little's law: with `CAP` spawns always in flight, each took lanes × wall ÷ count on average.
  const spawnMean = (CAP * spawn.seconds * 1000) / spawn.ok;
  const cpu = {
    pitcrew: { node: p.cpu.server, sh: p.cpu.runbooks, bench: p.cpu.bench, other: p.cpu.machine - p.cpu.server - p.cpu.runbooks - p.cpu.bench },
    // The idle server is in the baseline's `other`.
    bare: { node: spawn.cpuSelf, sh: spawn.cpuChildren, bench: b.cpu.bench, other: b.cpu.machine - spawn.cpuSelf - spawn.cpuChildren - b.cpu.bench },
  };
  const us = (seconds, n) => `${fmtInt((seconds / n) * 1e6)} µs`;
  const ms = (n) => (Number.isFinite(n) ? fmtInt(n) : 'n/a');
  const dec = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const x = (a, c) => (Number.isFinite(a) && Number.isFinite(c) && c > 0 ? `${(a / c).toFixed(2)} ×` : '');
  const share = (seconds, wall) => fmtPct(Math.max(0, seconds) / wall);
  const machine = os.cpus();

  log();
  log(`pitcrew CLI Machine benchmark: ${fmtInt(EVENTS)} runbooks \`true\` run by the service, beside the bare spawn of /bin/sh -c true`);
  log(`  storage      ${r.storage.describe}`);
  log(`  machine      ${machine.length} × ${machine[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}${process.getuid?.() === 0 ? ', as root (runs switch to nobody)' : ''}`);
  log(`  code         ${codeAtStart} (at the start); load average before the run ${loadBefore}`);
  log(`  pitcrew      webhook rule, action cli (sh, \`true\`), target cli_machine; ${fmtInt(EVENTS)} webhooks (one HostName each), ${CONCURRENCY} in flight; PITCREW_CLI_MAX_PER_TENANT=${CAP}`);
  log(`  baseline     bench/spawn-baseline.js: /bin/sh -c true, detached, stdout and stderr piped, ${CAP} at once, in a child process`);
  log(`  warm-up      ${fmtInt(WARMUP)} of each before, not in the figures`);
  log();
  log(table([
    ['figure', '', 'pitcrew CLI', 'bare spawn', 'pitcrew / bare'],
    ['executions/s | spawns/s', '', dec(pitcrewRate), dec(spawnRate), fmtPct(pitcrewRate / spawnRate)],
    ['  count, seconds', '', `${fmtInt(EVENTS)}, ${pitcrewSeconds.toFixed(2)}`, `${fmtInt(spawn.ok)}, ${spawn.seconds.toFixed(2)}`, ''],
    [`runs in flight (cap ${CAP})`, 'mean', `${inFlight.held.toFixed(1)} / ${inFlight.running.toFixed(1)}`, String(CAP), ''],
    ['webhook → finished', 'p50 / p99 ms', `${ms(total.p50)} / ${ms(total.p99)}`, '', ''],
    ['  webhook sent → queued', 'p50 / p99 ms', `${ms(stage.queued.p50)} / ${ms(stage.queued.p99)}`, '', ''],
    ['  queued → dispatched', 'p50 / p99 ms', `${ms(stage.dispatched.p50)} / ${ms(stage.dispatched.p99)}`, '', ''],
    ['  dispatched → running', 'p50 / p99 ms', `${ms(stage.started.p50)} / ${ms(stage.started.p99)}`, '', ''],
    ['  running → finished | spawn', 'p50 / p99 ms', `${ms(stage.ran.p50)} / ${ms(stage.ran.p99)}`, '', ''],
    ['', 'mean ms', dec(ranMean), dec(spawnMean), x(ranMean, spawnMean)],
    ['CPU per execution | spawn', 'node', us(cpu.pitcrew.node, EVENTS), us(cpu.bare.node, spawn.ok), x(cpu.pitcrew.node, cpu.bare.node)],
    ['', 'sh', us(cpu.pitcrew.sh, EVENTS), us(cpu.bare.sh, spawn.ok), ''],
    ['', 'total', us(cpu.pitcrew.node + cpu.pitcrew.sh, EVENTS), us(cpu.bare.node + cpu.bare.sh, spawn.ok), x(cpu.pitcrew.node + cpu.pitcrew.sh, cpu.bare.node + cpu.bare.sh)],
    ['', 'bench', us(cpu.pitcrew.bench, EVENTS), '', ''],
    ['CPU share of one core', 'node, sh', `${share(cpu.pitcrew.node, p.seconds)}, ${share(cpu.pitcrew.sh, p.seconds)}`, `${share(cpu.bare.node, b.seconds)}, ${share(cpu.bare.sh, b.seconds)}`, ''],
    ['', 'bench, other', `${share(cpu.pitcrew.bench, p.seconds)}, ${share(cpu.pitcrew.other, p.seconds)}`, `${share(cpu.bare.bench, b.seconds)}, ${share(cpu.bare.other, b.seconds)}`, ''],
  ]));
  log('  executions/s: R ÷ (last finishedAt − first webhook sent); spawns/s: R ÷ the spawner\'s wall time from its first spawn to its last exit.');
  log('  runs in flight: Σ (finishedAt − dispatchedAt) / Σ (finishedAt − startedAt) ÷ the seconds above: slots taken / processes running.');
  log('  webhook → finished: finishedAt (the runner\'s clock when the process ended) − the time this process sent the webhook; the rows');
  log(`       under it split it at queuedAt, dispatchedAt, startedAt. mean spawn: ${CAP} in flight × wall ÷ R (each spawn is not timed).`);
  log('  CPU ÷ R. node: the pitcrew server (everything but the runbook) | the spawner; sh: their ended children (cutime + cstime);');
  log('       bench: this process posting webhooks and polling; other: the rest of the machine, the idle server beside the baseline');
  log('       included (above a few % the run was disturbed).');
  log();

  // Verification: every webhook 202 with one execution; one execution per host, each succeeded
  // with exit code 0 and moved through each state once; every throwaway HOME removed.
  const allPosts = [...(r.warmRun?.posts.values() ?? []), ...run.posts.values()];
  const statuses = {};
  for (const post of allPosts) statuses[post.status] = (statuses[post.status] ?? 0) + 1;
  const oneExecution = allPosts.filter((post) => post.status === 202 && (post.json?.executionCount ?? post.json?.executionIds?.length) === 1).length;
  const expected = r.hosts.length;
  const states = {};
  for (const e of r.executions) states[e.state] = (states[e.state] ?? 0) + 1;
  const perHost = new Map(r.hosts.map((h) => [h, 0]));
  for (const e of r.executions) perHost.set(e.hostname, (perHost.get(e.hostname) ?? 0) + 1);
  const counts = [...perHost.values()];
  const count = (pred) => counts.filter(pred).length;
  const strangers = perHost.size - r.hosts.length;
  const exitZero = r.executions.filter((e) => e.state === 'succeeded' && e.exitCode === 0).length;
  const path4 = ['null>queued', 'queued>dispatched', 'dispatched>running', 'running>succeeded'];
  const moves = new Map();
  for (const row of r.transitions) moves.set(row.id, [...(moves.get(row.id) ?? []), { key: `${row.f ?? 'null'}>${row.t}`, n: Number(row.n) }]);
  const straight = r.executions.filter((e) => {
    const list = moves.get(e.id) ?? [];
    return list.length === path4.length && list.every((m) => m.n === 1 && path4.includes(m.key));
  }).length;
  const failedReasons = [...new Set(r.executions.filter((e) => e.state !== 'succeeded').map((e) => `${e.state}: ${e.reason} ${e.stderr ?? ''}`.trim()))].slice(0, 3);

  log('verification');
  log(`  webhooks: ${fmtInt(allPosts.length)} posted (warm-up included), statuses ${JSON.stringify(statuses)}, answered 202 with one execution ${fmtInt(oneExecution)}`);
  log(`  executions of the rule ${fmtInt(r.executions.length)} (expected ${fmtInt(expected)}), states ${JSON.stringify(states)}, exit code 0 ${fmtInt(exitZero)}; hosts with 0 / 1 / more executions ${count((n) => n === 0)} / ${count((n) => n === 1)} / ${count((n) => n > 1)}; for unknown hosts ${strangers}; other executions ${r.otherExecutions}`);
  log(`  transitions: queued → dispatched → running → succeeded, each exactly once, for ${fmtInt(straight)} of ${fmtInt(r.executions.length)} executions`);
  log(`  throwaway HOMEs left in PITCREW_CLI_SCRATCH_DIR ${r.leftovers.length}; baseline spawns ok ${fmtInt(spawn.ok)}, failed ${spawn.failed}; server exit ${r.stopped.code ?? r.stopped.signal}`);
  for (const reason of failedReasons) log(`  not succeeded: ${reason}`);
  const checks = [
    [run.complete && (r.warmRun?.complete ?? true), `every execution ended within ${WAIT_SECONDS} s of the last webhook`],
    [statuses[202] === allPosts.length && oneExecution === allPosts.length, 'every webhook answered 202 with one execution'],
    [r.executions.length === expected && (states.succeeded ?? 0) === expected && exitZero === expected, 'every execution succeeded (exit code 0)'],
    [count((n) => n === 1) === expected && strangers === 0 && r.otherExecutions === 0, 'one execution per webhook, no other execution'],
    [straight === expected, 'no execution ran twice (each transition once)'],
    [r.leftovers.length === 0, 'every throwaway HOME removed'],
    [spawn.ok === EVENTS && spawn.failed === 0, 'every baseline spawn exited 0'],
  ];
  for (const [ok, what] of checks) if (!ok) log(`  FAILED: ${what}`);
  const ok = checks.every(([pass]) => pass);
  if (ok) log(`  OK: ${fmtInt(expected)} executions, one per webhook, each succeeded once; ${fmtInt(spawn.ok)} bare spawns`);
  if (CPU_PROF) log(`  CPU profile of the server: node bench/profile-summary.js ${path.relative(root, profDir)}/CPU.*.${r.serverPid}.*.cpuprofile`);
  log();
  log(`done in ${r.seconds.toFixed(0)} s`);
  return ok;
}

runBench(main, BUDGET_SECONDS, progress);
