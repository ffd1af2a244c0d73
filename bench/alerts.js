// Integration ingest benchmark (bench/README.md): alerts per second through an Alertmanager
// integration, each notification carrying 100 alerts, against events per second through the
// webhook on the same server in the same run. Checks that a 100-alert notification is stored in
// one transaction, and that every alert answered 202 was stored as its event.
// With BENCH_BASELINE_ROOT (a checkout built before a change, as bench/api.js takes it), a second
// server runs that code, rounds alternate between the two, and each path's figures are compared:
// issue 38 asks the incident bookkeeping to cost the alert path at most 10 % of its throughput.
// The alert path runs in three variants then (VARIANTS: re-firing, new alarms, fire+resolve).
//
// pitcrew runs as a child process; the load comes from this process over keep-alive HTTP/1.1,
// the same client for both paths, rounds alternating. Only 127.0.0.1 is ever targeted.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fetchMetrics, fmtInt, fmtPct, table } from './common.js';
import { cpuSeconds, mainThreadCpuSeconds, runBench } from './procs.js';
import { startPitcrew } from './pitcrew.js';

/* global fetch, AbortSignal */

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const SECONDS = number('BENCH_ALERTS_SECONDS', 8, 1);
const ROUNDS = Math.round(number('BENCH_ALERTS_ROUNDS', 2, 1));
const ALERTS_PER_NOTIFICATION = Math.round(number('BENCH_ALERTS_PER_NOTIFICATION', 100, 1));
const WEBHOOK_CONNECTIONS = Math.round(number('BENCH_ALERTS_WEBHOOK_CONNECTIONS', 50, 1));
const ALERT_CONNECTIONS = Math.round(number('BENCH_ALERTS_CONNECTIONS', 4, 1));
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 180 + ROUNDS * 8 * (SECONDS + 5), 10);
const TARGET_SHARE = 0.8;
// Issue 38: the incident bookkeeping may cost the alert path at most this share of the baseline's throughput.
const LIMIT = 0.1;
const BASELINE_ROOT = env.BENCH_BASELINE_ROOT ? path.resolve(env.BENCH_BASELINE_ROOT) : undefined;

const WEBHOOK_BODY = JSON.stringify({ HostName: 'web-1', AlarmName: 'disk_full', Severity: 'critical', Act: true, MetaData: { Key1: 'Value1' } });

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);
const codeAtStart = env.BENCH_E2E_CODE_VERSION ?? codeVersion(root);

/** One alert of an Alertmanager webhook message (template/template.go `Alert`). */
function alertJson({ status, host, startsAt, endsAt = '0001-01-01T00:00:00Z', fingerprint }) {
  return `{"status":"${status}","labels":{"alertname":"NodeDiskFull","instance":"${host}:9100","job":"node","severity":"critical"},"annotations":{"summary":"disk full on ${host}"},"startsAt":"${startsAt}","endsAt":"${endsAt}","generatorURL":"http://prometheus:9090/graph","fingerprint":"${fingerprint}"}`;
}

/** Alertmanager's webhook message, version 4 (prometheus/alertmanager notify/webhook/webhook.go `Message`). */
function message(status, alerts) {
  return `{"receiver":"pitcrew","status":"${status}","alerts":[${alerts.join(',')}],"groupLabels":{"alertname":"NodeDiskFull"},"commonLabels":{"alertname":"NodeDiskFull"},"commonAnnotations":{},"externalURL":"http://alertmanager:9093","version":"4","groupKey":"{}:{alertname=\\"NodeDiskFull\\"}","truncatedAlerts":0}`;
}

// Tool times from the bench's start on, as a tool sends them (an alert's startsAt is about when it
// fired). A step of 10 ms per notification keeps each firing's time its own and behind the clock (a run
// sends a few thousand per variant over minutes): with a second per step they ran into the future,
// which no tool sends. BENCH_ALERTS_OLD_TIMES=1 sends the times of sessions 26-29 (from 1 January
// 2026, a second a step: months before their receipt), to compare with their figures.
const START_MS = env.BENCH_ALERTS_OLD_TIMES === '1' ? Date.UTC(2026, 0, 1) : Math.floor(Date.now() / 1000) * 1000;
const STEP_MS = env.BENCH_ALERTS_OLD_TIMES === '1' ? 1000 : 10;
const at = (steps) => new Date(START_MS + steps * STEP_MS).toISOString();
const hex = (n) => n.toString(16).padStart(16, '0');

/**
 * The notifications of each variant of the alert path; `n` counts the notifications of the
 * variant, `c` and `k` are the connection and its own count (a connection's bodies are sent in order).
 * - `re-firing`: the same 100 label sets (hosts web-0…99), every notification a new firing of
 *   each (its startsAt moves): no duplicate in the alert log; each is an occurrence of its open incident.
 * - `new alarms`: 100 label sets never seen before in each notification: each alert opens an incident.
 * - `fire+resolve`: a connection's notifications alternate: 100 new label sets firing, then the
 *   same resolved (endsAt): each alert opens an incident, the next notification resolves it. Their
 *   times move on from round to round, as a tool's do: `c` counts on across rounds (it starts at the
 *   notifications sent before), while the pair count restarts. Until session 41 every round sent the
 *   first round's times again, so each round's incidents (whose ids are made from the time they
 *   opened: incidents/book.ts) were inserted among all the earlier rounds' in the id-ordered indexes,
 *   and the pages a commit wrote there grew round by round (bench/README.md, session 41).
 */
const VARIANTS = {
  're-firing': (n) => message('firing', Array.from({ length: ALERTS_PER_NOTIFICATION }, (_, i) =>
    alertJson({ status: 'firing', host: `web-${i}`, startsAt: at(n), fingerprint: hex(i) }))),
  'new alarms': (n) => message('firing', Array.from({ length: ALERTS_PER_NOTIFICATION }, (_, i) =>
    alertJson({ status: 'firing', host: `new-${n}-${i}`, startsAt: at(n), fingerprint: hex((n + 1) * 256 + i) }))),
  'fire+resolve': (n, c, k) => {
    const pair = Math.floor(k / 2);
    const resolved = k % 2 === 1;
    return message(resolved ? 'resolved' : 'firing', Array.from({ length: ALERTS_PER_NOTIFICATION }, (_, i) => alertJson({
      status: resolved ? 'resolved' : 'firing', host: `flap-${c}-${pair}-${i}`, startsAt: at(c + pair), ...(resolved ? { endsAt: at(c + pair + 60) } : {}),
      fingerprint: hex((c + 1) * 2 ** 32 + (pair + 1) * 256 + i),
    })));
  },
};

/** The first notification, on the idle server: before the rounds, and a label set the rounds never send. */
const notification = () => message('firing', Array.from({ length: ALERTS_PER_NOTIFICATION }, (_, i) =>
  alertJson({ status: 'firing', host: `first-${i}`, startsAt: at(-1), fingerprint: hex(0xfff00 + i) })));

/** `connections` loops posting for `seconds`; `bodyOf(n, c, k)` gives the n-th body, the k-th of connection c. Counts 202s and the rest. */
async function load({ url, connections, seconds, bodyOf, first = 0 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  const until = performance.now() + seconds * 1000;
  let n = first;
  const counts = { ok: 0, other: 0, errors: 0 };
  const post = (body) => new Promise((resolve) => {
    const request = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
    });
    request.on('error', () => resolve(0));
    request.end(body);
  });
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, async (_, c) => {
    // A connection ends on a whole pair: fire+resolve leaves no incident open.
    for (let k = 0; performance.now() < until || k % 2 === 1; k++) {
      const status = await post(bodyOf(n++, c + first, k));
      if (status === 202) counts.ok += 1;
      else if (status === 0) counts.errors += 1;
      else counts.other += 1;
    }
  }));
  agent.destroy();
  return { ...counts, seconds: (performance.now() - started) / 1000, sent: n - first };
}

async function metrics(base) {
  const text = await fetchMetrics(base);
  const sum = (pattern) => [...text.matchAll(new RegExp(`^${pattern} ([0-9.eE+-]+)$`, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
  return { batchSum: sum('pitcrew_ingest_batch_size_sum'), batchCount: sum('pitcrew_ingest_batch_size_count'), events: sum('pitcrew_events_total\\{[^}]*\\}') };
}

/** A server with its integration, alert rule and URLs; `name` tells this build from the baseline. */
async function server(name, serverRoot) {
  // BENCH_CPU_PROF=1: each server writes a V8 profile to bench/profiles/ when it stops (bench/profile-summary.js reads it).
  const nodeFlags = env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${path.join(benchDir, 'profiles')}`] : [];
  const pitcrew = await startPitcrew({ root: serverRoot, env, nodeFlags, tempPrefix: `pitcrew-bench-alerts-${name.replace(/\W+/g, '-')}-`, ruleName: 'bench webhook', progress: (line) => progress(`${name}: ${line}`) });
  const integration = await pitcrew.api('POST', '/api/v1/integrations', { name: 'bench prometheus', type: 'alertmanager' });
  await pitcrew.api('POST', '/api/v1/rules', {
    name: 'bench alert',
    trigger: { type: 'alert', integrationId: integration.id },
    action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
    target: { type: 'trigger_host' },
    infrastructureType: 'On_Premise',
  });
  return {
    name, pitcrew,
    alertUrl: `${pitcrew.base}/api/v1/trigger/channel/alertmanager/${pitcrew.apiKey}/${integration.id}`,
    webhookUrl: `${pitcrew.base}${pitcrew.webhookPath}`,
    counters: {},
    answered: 0,
  };
}

/** One notification on the idle server: one transaction for its alerts. */
async function firstNotification(s) {
  const before = await metrics(s.pitcrew.metricsBase);
  const one = await fetch(s.alertUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: notification(), signal: AbortSignal.timeout(10_000) });
  await one.arrayBuffer();
  const after = await metrics(s.pitcrew.metricsBase);
  s.answered += ALERTS_PER_NOTIFICATION;
  return { ok: one.status === 202, transactions: after.batchCount - before.batchCount, alerts: after.batchSum - before.batchSum };
}

async function round(s, path) {
  const cpuBefore = cpuSeconds(s.pitcrew.server.pid);
  const mainBefore = mainThreadCpuSeconds(s.pitcrew.server.pid);
  const first = s.counters[path] ?? 0;
  const result = path === 'webhook'
    ? await load({ url: s.webhookUrl, connections: WEBHOOK_CONNECTIONS, seconds: SECONDS, bodyOf: () => WEBHOOK_BODY })
    : await load({ url: s.alertUrl, connections: ALERT_CONNECTIONS, seconds: SECONDS, bodyOf: VARIANTS[path], first });
  s.counters[path] = first + result.sent;
  const items = path === 'webhook' ? result.ok : result.ok * ALERTS_PER_NOTIFICATION;
  // A resolved alert is an event too (stored, acted on by no rule here).
  s.answered += items;
  const perItem = (seconds) => (seconds * 1000) / Math.max(1, items);
  return { ...result, items, perSecond: items / result.seconds, cpuMsPerItem: perItem(cpuSeconds(s.pitcrew.server.pid) - cpuBefore), mainMsPerItem: perItem(mainThreadCpuSeconds(s.pitcrew.server.pid) - mainBefore) };
}

async function main() {
  const servers = [await server('this build', root), ...(BASELINE_ROOT ? [await server('baseline', BASELINE_ROOT)] : [])];
  const oneTransaction = {};
  for (const s of servers) oneTransaction[s.name] = await firstNotification(s);

  const paths = env.BENCH_ALERTS_PATHS ? env.BENCH_ALERTS_PATHS.split(',') : ['webhook', ...(BASELINE_ROOT ? Object.keys(VARIANTS) : ['re-firing'])];
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const path of paths) {
      for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
        progress(`round ${r + 1}/${ROUNDS}: ${path} on ${s.name}, ${SECONDS} s`);
        rounds.push({ path, round: r, server: s.name, ...(await round(s, path)) });
      }
    }
  }
  const finals = {};
  for (const s of servers) finals[s.name] = await metrics(s.pitcrew.metricsBase);
  for (const s of servers) await s.pitcrew.server.stop(15_000);

  const of = (name, path) => rounds.filter((r) => r.server === name && r.path === path);
  const best = (name, path) => Math.max(...of(name, path).map((r) => r.perSecond));
  const leastCpu = (name, path) => Math.min(...of(name, path).map((r) => r.cpuMsPerItem));
  const leastMain = (name, path) => Math.min(...of(name, path).map((r) => r.mainMsPerItem));
  const share = best('this build', 're-firing') / best('this build', 'webhook');

  log();
  log('pitcrew integration ingest benchmark');
  log(`  storage      ${servers[0].pitcrew.storage.describe}`);
  log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; code ${codeAtStart}${BASELINE_ROOT ? `; baseline ${BASELINE_ROOT} (${codeVersion(BASELINE_ROOT)})` : ''}`);
  log(`  load         keep-alive HTTP/1.1 from this process; webhook: ${WEBHOOK_CONNECTIONS} connections, one event each; alerts: ${ALERT_CONNECTIONS} connections, Alertmanager notifications of ${ALERTS_PER_NOTIFICATION} alerts; ${SECONDS} s per round${BASELINE_ROOT ? ', servers alternating' : ''}`);
  log();
  log(table([
    ['round', 'path', 'server', 'requests 202', 'other', 'errors', 'items/s', 'server CPU per item', 'its main thread'],
    ...rounds.map((r) => [String(r.round + 1), r.path, r.server, fmtInt(r.ok), fmtInt(r.other), fmtInt(r.errors), fmtInt(r.perSecond), `${(r.cpuMsPerItem * 1000).toFixed(0)} µs`, `${(r.mainMsPerItem * 1000).toFixed(0)} µs`]),
  ]));
  log();
  const failures = [];
  for (const s of servers) {
    const one = oneTransaction[s.name];
    log(`  ${s.name}: one notification of ${ALERTS_PER_NOTIFICATION} alerts: ${one.transactions} transaction(s) holding ${one.alerts} events; events stored ${fmtInt(finals[s.name].events)}, alerts and webhook calls answered 202 ${fmtInt(s.answered)}`);
    if (!(one.ok && one.transactions === 1 && one.alerts === ALERTS_PER_NOTIFICATION)) failures.push(`${s.name}: the notification was not one transaction of its alerts`);
    if (finals[s.name].events !== s.answered) failures.push(`${s.name}: stored events differ from the items answered 202`);
  }
  log(`  this build: alerts/s ÷ webhook events/s (re-firing, best rounds): ${fmtPct(share)} (goal ≥ ${fmtPct(TARGET_SHARE)})`);
  if (BASELINE_ROOT) {
    for (const path of paths) {
      const ratio = best('this build', path) / best('baseline', path);
      log(`  ${path.padEnd(12)} this build ${fmtInt(best('this build', path))}/s, baseline ${fmtInt(best('baseline', path))}/s (best rounds): ${fmtPct(ratio)} of before (goal ≥ ${fmtPct(1 - LIMIT)}); ` +
        `server CPU per item ${(leastCpu('this build', path) * 1000).toFixed(0)} µs vs ${(leastCpu('baseline', path) * 1000).toFixed(0)} µs (${(leastCpu('this build', path) / leastCpu('baseline', path)).toFixed(2)} ×); its main thread ${(leastMain('this build', path) * 1000).toFixed(0)} µs vs ${(leastMain('baseline', path) * 1000).toFixed(0)} µs (${(leastMain('this build', path) / leastMain('baseline', path)).toFixed(2)} ×)`);
      if (path !== 'webhook' && ratio < 1 - LIMIT) failures.push(`${path}: the alert path is more than ${fmtPct(LIMIT)} slower than the baseline`);
    }
  }
  if (rounds.some((r) => r.other + r.errors > 0)) failures.push('some requests were not answered 202');
  for (const failure of failures) log(`  FAILED: ${failure}`);
  return failures.length === 0;
}

runBench(main, BUDGET_SECONDS, progress);
