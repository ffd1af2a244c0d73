// Cron benchmark (bench/README.md): issue 18's "1,000 cron rules due in the same second start
// within 1 s (p99 tick-to-start), on one node".
//
// pitcrew runs as a child process (bench/pitcrew.js) with N simulated agents in this process
// (bench/fleet-agents.js: the real agent's connection code over pinned TLS, answering `execute`
// with `finished` at once, its start in it), all tagged `cron`. Two phases on the same server:
//   - cron: R rules, each a daily schedule for the same second T (6 fields, seconds first, UTC),
//     target one host of the tag `cron`; after T, every execution of these rules is read back and
//     tick-to-start = startedAt − T is computed for each;
//   - the baseline: R webhook rules with the same action and target (pick one); at one instant T'
//     all R webhooks are posted at once (all in flight, keep-alive) and post-to-start =
//     startedAt − T' is computed the same way.
// The webhook rules are created first: their creation time tells how far ahead T must be for all
// cron rules to exist before it. The cron rules are deleted before the webhook phase. Every rule
// must have run exactly once, and every execution must have started and succeeded (exit 1 if not).
/* global fetch, AbortSignal */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeVersion, envNumber, fmtInt, fmtPct, inParallel, table } from './common.js';
import { Fleet } from './fleet-agents.js';
import { percentile } from './load.js';
import { startPitcrew } from './pitcrew.js';
import { runBench, cpuSeconds, machineProcessSeconds, onCleanup, ownCpuSeconds, waitFor } from './procs.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const RULES = Math.round(number('BENCH_CRON_RULES', 1000, 1));
const AGENTS = Math.round(number('BENCH_CRON_AGENTS', 50, 1));
/** Seconds between the end of the expected creation time and the tick. */
const LEAD_SECONDS = number('BENCH_CRON_LEAD_SECONDS', 10, 1);
/** How long after T (or T') the executions may take to start before the phase counts as failed. */
const WAIT_SECONDS = number('BENCH_CRON_WAIT_SECONDS', 60, 5);
/** Rule creations and deletions in flight. */
const CREATE_CONCURRENCY = Math.round(number('BENCH_CRON_CREATE_CONCURRENCY', 8, 1));
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 240 + 0.25 * RULES + 2 * WAIT_SECONDS, 10);
/** Attempts at creating every cron rule before its tick (each attempt leaves twice the margin). */
const ATTEMPTS = 3;
/** Quiet time after a phase's executions all ended: a doubled run would show up meanwhile. */
const SETTLE_MS = 2000;
const TARGET_P99_MS = 1000;

const TAG = 'cron';
const ACTION = { type: 'script', flavour: 'autofix', runbook: { script: 'true' } };
const TARGET = { type: 'specific_tags', tags: [TAG], pick: 'one' };
const ACTIVE = "('queued', 'dispatched', 'running')";

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench-cron: ${line}\n`);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
const codeAtStart = env.BENCH_E2E_CODE_VERSION || codeVersion(root, ['src', 'agent', 'package.json', 'bin']);

const iso = (ms) => new Date(ms).toISOString();
const fmtS = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'n/a');

/** The API with the tenant's token; resolves with the status and the parsed reply (204: null). */
function caller(base, token) {
  return async (method, url, body) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
}

/** A daily schedule (6 fields, seconds first, UTC) whose tick is the second `ms`. */
function dailyAt(ms) {
  const d = new Date(ms);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

/** Every execution of the tenant (GET /api/v1/executions, pages of 1,000). */
async function allExecutions(call) {
  const out = [];
  let cursor = null;
  do {
    const page = await call('GET', `/api/v1/executions?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/**
 * The server's CPU, this process's and the rest of the machine's over `fn`, as shares of one
 * core, and how late this process's event loop ran (the simulated agents answer on it).
 */
async function withCpu(pid, fn) {
  const c0 = { server: cpuSeconds(pid), own: ownCpuSeconds(), machine: machineProcessSeconds(), wall: Date.now() };
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const value = await fn();
  lag.disable();
  const window = Math.max(0.001, (Date.now() - c0.wall) / 1000);
  const server = cpuSeconds(pid) - c0.server;
  const own = ownCpuSeconds() - c0.own;
  const cpu = { server: server / window, bench: own / window, other: Math.max(0, machineProcessSeconds() - c0.machine - server - own) / window };
  return { value, cpu, lagMs: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 } };
}

/**
 * Polls the storage (read-only, beside the server) until `expected` executions more than
 * `before` exist and none is pending, and not before `notBefore`; then waits SETTLE_MS more.
 * Resolves with whether they were all there within the deadline.
 */
async function untilEnded(reader, server, before, expected, notBefore, deadline) {
  const counts = async () => {
    const row = (await reader.all(`select count(*) as n, sum(case when state in ${ACTIVE} then 1 else 0 end) as pending from executions`))[0];
    return { n: Number(row.n) - before, pending: Number(row.pending ?? 0) };
  };
  for (;;) {
    if (!server.alive()) throw new Error(`the server exited:\n${server.output()}`);
    const now = Date.now();
    if (now >= notBefore) {
      const c = await counts();
      if (c.n >= expected && c.pending === 0) break;
      if (now > deadline) return { complete: false, ...c };
    }
    await sleep(100);
  }
  await sleep(SETTLE_MS);
  return { complete: true, ...(await counts()) };
}

/** Per-execution latencies from `zero` (ms since the epoch), and how the runs spread over the agents. */
function summarize(executions, zero, hosts) {
  const started = executions.filter((e) => e.startedAt !== null).map((e) => Date.parse(e.startedAt) - zero).sort((a, b) => a - b);
  const queued = executions.map((e) => Date.parse(e.queuedAt) - zero).sort((a, b) => a - b);
  const perHost = new Map(hosts.map((h) => [h, 0]));
  for (const e of executions) perHost.set(e.hostname, (perHost.get(e.hostname) ?? 0) + 1);
  const perAgent = [...perHost.values()];
  const stats = (sorted) => ({ n: sorted.length, min: sorted[0], p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] });
  const states = {};
  for (const e of executions) states[e.state] = (states[e.state] ?? 0) + 1;
  return {
    count: executions.length,
    started: stats(started),
    queued: stats(queued),
    states,
    agentsUsed: perAgent.filter((n) => n > 0).length,
    perAgentMin: Math.min(...perAgent),
    perAgentMax: Math.max(...perAgent),
  };
}

/** How many of `ruleIds` have 0, 1 and more than 1 execution. */
function perRule(ruleIds, executions) {
  const counts = new Map(ruleIds.map((id) => [id, 0]));
  for (const e of executions) if (counts.has(e.ruleId)) counts.set(e.ruleId, counts.get(e.ruleId) + 1);
  const values = [...counts.values()];
  return { none: values.filter((n) => n === 0).length, once: values.filter((n) => n === 1).length, more: values.filter((n) => n > 1).length };
}

/** All R webhooks at once on keep-alive connections; resolves with the replies. */
function fireAll(port, paths) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  onCleanup(() => agent.destroy());
  const body = '{}';
  return Promise.all(paths.map((urlPath) => new Promise((resolve) => {
    const req = http.request({ agent, host: '127.0.0.1', port, path: urlPath, method: 'POST', timeout: WAIT_SECONDS * 1000, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let json = null;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode, json, text, at: Date.now() });
      });
    });
    req.on('timeout', () => req.destroy(new Error('no reply')));
    req.once('error', (error) => resolve({ status: 0, json: null, text: error.message, at: Date.now() }));
    req.end(body);
  }))).finally(() => agent.destroy());
}

async function main() {
  const startedAt = Date.now();
  if (!fs.existsSync(path.join(root, 'dist/agent/connection.js')) || !fs.existsSync(path.join(root, 'dist/src/cli/main.js'))) throw new Error('dist/ is not built: run npm run build first');
  const pc = await startPitcrew({ root, env, tempPrefix: 'pitcrew-bench-cron-', ruleName: 'bench webhook (unused)', progress });
  const { server, base, port, tlsPort, apiKey, token, storage } = pc;
  const call = caller(base, token);
  const certFile = path.join(pc.dataDir, 'tls', 'cert.pem');
  await waitFor(server, async () => fs.existsSync(certFile), 10_000, 'the TLS certificate');
  const fingerprint = new X509Certificate(fs.readFileSync(certFile)).fingerprint256;

  // The agents: enrolled with the API key, then all connected.
  const hostnames = Array.from({ length: AGENTS }, (_, i) => `cron-${String(i).padStart(5, '0')}`);
  const fleet = new Fleet(hostnames.map((hostname) => ({ hostname, tags: [TAG] })));
  const agentUrl = new URL(`https://127.0.0.1:${tlsPort}`);
  progress(`enrolling and connecting ${fmtInt(AGENTS)} agents (tag ${TAG})`);
  await fleet.enrol(agentUrl, apiKey, fingerprint, 16);
  const t0 = Date.now();
  fleet.start(agentUrl, fingerprint);
  onCleanup(() => fleet.stop());
  await fleet.allOnline(t0, 120_000, () => server.alive());

  // The baseline's rules first: how long R rules take to create sets how far ahead the tick goes.
  progress(`creating ${fmtInt(RULES)} webhook rules (${CREATE_CONCURRENCY} at a time)`);
  const w0 = Date.now();
  const webhookRules = new Array(RULES);
  await inParallel(Array.from({ length: RULES }, (_, i) => i), CREATE_CONCURRENCY, async (i) => {
    webhookRules[i] = await call('POST', '/api/v1/rules', { name: `bench webhook ${i}`, trigger: { type: 'webhook' }, action: ACTION, target: TARGET, infrastructureType: 'On_Premise' });
  });
  const webhookCreateMs = Date.now() - w0;

  // --- cron: R rules due in the same second T ---
  const reader = await storage.openReader();
  let cron;
  let margin = 1.5 * webhookCreateMs + LEAD_SECONDS * 1000;
  const attempts = [];
  for (let attempt = 1; attempt <= ATTEMPTS && !cron; attempt++, margin *= 2) {
    const tick = Math.ceil((Date.now() + margin) / 1000) * 1000;
    const schedule = dailyAt(tick);
    progress(`creating ${fmtInt(RULES)} cron rules "${schedule}" (UTC), all due at ${iso(tick)}, ${((tick - Date.now()) / 1000).toFixed(0)} s from now`);
    const c0 = Date.now();
    const rules = new Array(RULES);
    const savedAt = new Array(RULES);
    await inParallel(Array.from({ length: RULES }, (_, i) => i), CREATE_CONCURRENCY, async (i) => {
      rules[i] = await call('POST', '/api/v1/rules', { name: `bench cron ${i}`, trigger: { type: 'cron', schedule }, action: ACTION, target: TARGET, infrastructureType: 'On_Premise' });
      savedAt[i] = Date.now();
    });
    const createMs = Date.now() - c0;
    // Each rule's first tick must be T: a rule saved at or after T waits for tomorrow's. A reply
    // before T means the rule was saved before T; the service's own view of the last one agrees.
    let late = savedAt.filter((at) => at >= tick - 200).length;
    const lastView = await call('GET', `/api/v1/rules/${rules[savedAt.indexOf(Math.max(...savedAt))].id}`);
    const lastTick = lastView.schedule?.nextTicks?.[0];
    if (lastTick !== undefined && Date.parse(lastTick) !== tick) late = Math.max(late, 1);
    attempts.push({ tick, createMs, late, leftMs: tick - Date.now() });
    if (late > 0 || Date.now() > tick - 1000) {
      progress(`${late} of ${RULES} rules were saved too late for ${iso(tick)} (creation took ${fmtS(createMs)}); deleting them and trying again further ahead`);
      await inParallel(rules, CREATE_CONCURRENCY, (r) => call('DELETE', `/api/v1/rules/${r.id}`));
      continue;
    }
    const before = Number((await reader.all('select count(*) as n from executions'))[0].n);
    const early = Number((await reader.all(`select count(*) as n from events where source = 'cron'`))[0].n);
    progress(`all saved ${((tick - Date.now()) / 1000).toFixed(1)} s before the tick; waiting for ${iso(tick)}`);
    await sleep(Math.max(0, tick - 500 - Date.now()));
    const { value: waited, cpu, lagMs } = await withCpu(server.pid, () => untilEnded(reader, server, before, RULES, tick + 2000, tick + WAIT_SECONDS * 1000));
    cron = { tick, schedule, createMs, rules, before, early, waited, cpu, lagMs };
  }
  if (!cron) throw new Error(`could not create ${RULES} cron rules before their tick in ${ATTEMPTS} attempts: ${JSON.stringify(attempts)}`);
  const cronEvents = await reader.all(`select outcome, count(*) as n from events where source = 'cron' group by outcome`);

  progress(`deleting the ${fmtInt(RULES)} cron rules`);
  await inParallel(cron.rules, CREATE_CONCURRENCY, (r) => call('DELETE', `/api/v1/rules/${r.id}`));
  await sleep(1000);

  // --- the baseline: R webhooks posted at once, one per rule ---
  const hook = (r) => `/api/v1/trigger/channel/webhook/${apiKey}/${r.trigger.triggerId}`;
  const paths = webhookRules.map(hook);
  const beforeHooks = Number((await reader.all('select count(*) as n from executions'))[0].n);
  progress(`posting ${fmtInt(RULES)} webhooks at once`);
  let posted;
  const { value: hookWaited, cpu: hookCpu, lagMs: hookLag } = await withCpu(server.pid, async () => {
    const at = Date.now();
    const replies = await fireAll(port, paths);
    posted = { at, replies };
    const made = replies.reduce((sum, r) => sum + (r.status === 202 ? (r.json?.executionCount ?? r.json?.executionIds?.length ?? 0) : 0), 0);
    return untilEnded(reader, server, beforeHooks, made, at, at + WAIT_SECONDS * 1000);
  });
  const statuses = {};
  for (const r of posted.replies) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const replyMs = posted.replies.map((r) => r.at - posted.at).sort((a, b) => a - b);

  // --- read every execution back ---
  progress('reading the executions back (GET /api/v1/executions)');
  const executions = await allExecutions(call);
  const cronIds = new Set(cron.rules.map((r) => r.id));
  const hookIds = new Set(webhookRules.map((r) => r.id));
  const cronExecutions = executions.filter((e) => cronIds.has(e.ruleId));
  const hookExecutions = executions.filter((e) => hookIds.has(e.ruleId));
  const others = executions.length - cronExecutions.length - hookExecutions.length;
  await reader.close();
  await fleet.stop();
  const stopped = await server.stop(30_000);

  const runs = [...fleet.runs.values()];
  const result = {
    storage: storage.describe,
    webhookCreateMs,
    attempts,
    cron: {
      ...cron,
      summary: summarize(cronExecutions, cron.tick, hostnames),
      perRule: perRule(cron.rules.map((r) => r.id), cronExecutions),
      events: Object.fromEntries(cronEvents.map((e) => [e.outcome, Number(e.n)])),
    },
    hooks: {
      at: posted.at,
      statuses,
      replyP99: percentile(replyMs, 0.99),
      replyMax: replyMs[replyMs.length - 1],
      waited: hookWaited,
      cpu: hookCpu,
      lagMs: hookLag,
      summary: summarize(hookExecutions, posted.at, hostnames),
      perRule: perRule(webhookRules.map((r) => r.id), hookExecutions),
    },
    others,
    agentRuns: { once: runs.filter((h) => h.length === 1).length, more: runs.filter((h) => h.length > 1).length, misaddressed: fleet.misaddressed },
    problems: fleet.problemText(),
    exit: stopped.code ?? stopped.signal,
  };
  return report(result, (Date.now() - startedAt) / 1000);
}

// ---------------------------------------------------------------------------------------------
// Output

function report(r, seconds) {
  const cpu = os.cpus();
  const c = r.cron.summary;
  const h = r.hooks.summary;
  log();
  log(`pitcrew cron benchmark: ${fmtInt(RULES)} cron rules due in the same second, on one node`);
  log(`  storage      ${r.storage}`);
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}`);
  log(`  code         ${codeAtStart} (at the start); load average before the run ${loadBefore}`);
  log(`  agents       ${fmtInt(AGENTS)} simulated (dist/agent/connection.js in this process, pinned TLS), tag ${TAG}, answering execute at once`);
  log(`  rules        script \`true\`, target specific_tags [${TAG}], pick one; cron: "${r.cron.schedule}" (UTC), tick ${iso(r.cron.tick)}`);
  log(`  baseline     ${fmtInt(RULES)} webhook rules, the same action and target, one webhook each, all posted at once (keep-alive)`);
  log(`  creation     ${fmtInt(RULES)} webhook rules in ${fmtS(r.webhookCreateMs)}; ${r.attempts.map((a) => `${fmtInt(RULES)} cron rules in ${fmtS(a.createMs)}${a.late ? ` (${a.late} too late, retried)` : `, ${fmtS(a.leftMs)} before the tick`}`).join('; ')}`);
  log();
  // startedAt and queuedAt are whole milliseconds.
  const ms = (n) => fmtInt(n);
  const x = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)} ×` : '');
  const label = `R = ${fmtInt(RULES)}`;
  const rows = [
    ['rules', 'figure', 'cron tick (T)', 'webhooks at once (T\')', 'cron / webhook'],
    [label, 'executions started / expected', `${fmtInt(c.started.n)} / ${fmtInt(RULES)}`, `${fmtInt(h.started.n)} / ${fmtInt(RULES)}`, ''],
    [`${fmtInt(AGENTS)} agents`, '→ started p50 ms', ms(c.started.p50), ms(h.started.p50), x(c.started.p50, h.started.p50)],
    ['', '→ started p99 ms', ms(c.started.p99), ms(h.started.p99), x(c.started.p99, h.started.p99)],
    ['', '→ started min / max ms', `${ms(c.started.min)} / ${ms(c.started.max)}`, `${ms(h.started.min)} / ${ms(h.started.max)}`, ''],
    ['', '→ queued p50 ms', ms(c.queued.p50), ms(h.queued.p50), x(c.queued.p50, h.queued.p50)],
    ['', '→ queued p99 ms', ms(c.queued.p99), ms(h.queued.p99), x(c.queued.p99, h.queued.p99)],
    ['', '→ queued min / max ms', `${ms(c.queued.min)} / ${ms(c.queued.max)}`, `${ms(h.queued.min)} / ${ms(h.queued.max)}`, ''],
    ['', 'agents used; runs per agent min / max', `${c.agentsUsed}; ${c.perAgentMin} / ${c.perAgentMax}`, `${h.agentsUsed}; ${h.perAgentMin} / ${h.perAgentMax}`, ''],
    ['', 'server CPU, bench CPU', `${fmtPct(r.cron.cpu.server)}, ${fmtPct(r.cron.cpu.bench)}`, `${fmtPct(r.hooks.cpu.server)}, ${fmtPct(r.hooks.cpu.bench)}`, ''],
    ['', 'other procs CPU', fmtPct(r.cron.cpu.other), fmtPct(r.hooks.cpu.other), ''],
    ['', 'bench loop delay p99 / max ms', `${fmtInt(r.cron.lagMs.p99)} / ${fmtInt(r.cron.lagMs.max)}`, `${fmtInt(r.hooks.lagMs.p99)} / ${fmtInt(r.hooks.lagMs.max)}`, ''],
  ];
  log(table(rows));
  log('  → started: startedAt (the agent\'s start, same clock) − the tick T (cron) or the instant T\' all webhooks were sent (baseline).');
  log('  → queued: queuedAt (the execution stored: the scheduler\'s pass for a tick, the webhook\'s arrival) − T or T\'.');
  log('  CPU: share of one core from T − 0.5 s (T\') until every execution ended, plus 2 s; bench = this process, the agents included.');
  log();
  const verifyCron = r.cron.perRule;
  const verifyHooks = r.hooks.perRule;
  log('verification');
  log(`  cron rules with 0 / 1 / more executions: ${verifyCron.none} / ${verifyCron.once} / ${verifyCron.more}; states ${JSON.stringify(c.states)}; cron events ${JSON.stringify(r.cron.events)}${r.cron.early ? ` (${r.cron.early} before T)` : ''}${r.cron.waited.complete ? '' : `; NOT all ended within ${WAIT_SECONDS} s of T`}`);
  log(`  webhooks: statuses ${JSON.stringify(r.hooks.statuses)} (last reply ${fmtInt(r.hooks.replyMax)} ms after T'); rules with 0 / 1 / more executions: ${verifyHooks.none} / ${verifyHooks.once} / ${verifyHooks.more}; states ${JSON.stringify(h.states)}${r.hooks.waited.complete ? '' : `; NOT all ended within ${WAIT_SECONDS} s`}`);
  log(`  agents: executions run once ${fmtInt(r.agentRuns.once)}, more than once ${r.agentRuns.more}, misaddressed ${r.agentRuns.misaddressed}; other executions ${r.others}; agent warnings: ${r.problems}; server exit ${r.exit}`);
  const checks = [
    [verifyCron.once === RULES, 'every cron rule ran exactly once'],
    [(c.states.succeeded ?? 0) === RULES && c.started.n === RULES, 'every cron execution started and succeeded'],
    [r.cron.early === 0, 'no cron tick before T'],
    [r.hooks.statuses[202] === RULES, 'every webhook answered 202'],
    [verifyHooks.once === RULES, 'every webhook rule ran exactly once'],
    [(h.states.succeeded ?? 0) === RULES && h.started.n === RULES, 'every webhook execution started and succeeded'],
    [r.agentRuns.more === 0 && r.agentRuns.misaddressed === 0 && r.agentRuns.once === 2 * RULES, 'every execution reached its agent once'],
    [r.others === 0, 'no other execution'],
  ];
  for (const [ok, what] of checks) if (!ok) log(`  FAILED: ${what}`);
  const ok = checks.every(([pass]) => pass);
  if (ok) log(`  OK: ${fmtInt(2 * RULES)} executions, each rule exactly once, all succeeded`);
  log();
  log(`goal: p99 tick-to-start <= ${TARGET_P99_MS / 1000} s: ${fmtInt(c.started.p99)} ms → ${c.started.n === RULES && c.started.p99 <= TARGET_P99_MS ? 'met' : 'not met'} (baseline p99 post-to-start ${fmtInt(h.started.p99)} ms; ratio ${x(c.started.p99, h.started.p99) || 'n/a'})`);
  log();
  log(`done in ${seconds.toFixed(0)} s`);
  return ok;
}

runBench(main, BUDGET_SECONDS, progress);
