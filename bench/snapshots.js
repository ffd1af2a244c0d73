// Graph snapshot benchmark (bench/README.md, issue 39), with Debian's real Prometheus
// (/usr/bin/prometheus, as the tests start it) scraping a gauge served by this process:
// (a) one capture, alert to stored PNG (the graph_snapshot execution's started → finished: the
//     query_range call, the chart drawn by ECharts and rasterised by resvg, the insert), beside
//     the bare query_range call of the same query and step from this process, in the same run;
// (b) snapshots per second on one node with the alert ingest running beside it, and the ingest's
//     throughput and the server's CPU per alert (whole process, and its main thread) without (A) and
//     with (B) the captures, rounds interleaved A B A B … (goal: it keeps >= 90 %, by medians).
// Only 127.0.0.1 is ever targeted.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fmtInt, fmtPct, table } from './common.js';
import { cpuSeconds, freePort, listenOnLoopback, mainThreadCpuSeconds, makeTempDir, onCleanup, runBench } from './procs.js';
import { startPitcrew } from './pitcrew.js';

/* global fetch, AbortSignal */

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);
const PROMETHEUS = '/usr/bin/prometheus';
const CAPTURES = Math.round(number('BENCH_SNAPSHOTS_CAPTURES', 10, 1));
const SECONDS = number('BENCH_SNAPSHOTS_SECONDS', 10, 1);
// Pairs of rounds, A (the ingest alone) then B (with captures beside it), and each round's length.
const ROUNDS = Math.round(number('BENCH_SNAPSHOTS_ROUNDS', 5, 1));
const WARMUP = number('BENCH_SNAPSHOTS_WARMUP', 5, 0);
// Graph alerts offered per second beside the ingest: a capture per alert of a rule that draws graphs.
const RATE = number('BENCH_SNAPSHOTS_RATE', 2, 0.1);
const ALERTS_PER_NOTIFICATION = 100;
const ALERT_CONNECTIONS = 4;
const GOAL = 0.9;
const METRIC = 'bench_load';
const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

/** Alertmanager's webhook message, version 4 (prometheus/alertmanager notify/webhook/webhook.go `Message`). */
function message(alerts) {
  return JSON.stringify({ receiver: 'pitcrew', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0 });
}
function alert(alertname, instance, startsAt, fingerprint, expr) {
  return { status: 'firing', labels: { alertname, instance, severity: 'critical' }, annotations: {}, startsAt, endsAt: '0001-01-01T00:00:00Z', generatorURL: `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1`, fingerprint };
}

async function startPrometheus(work) {
  const metrics = http.createServer((_request, response) => {
    const t = Date.now() / 1000;
    response.setHeader('content-type', 'text/plain; version=0.0.4');
    response.end(`# TYPE ${METRIC} gauge\n${[0, 1, 2].map((i) => `${METRIC}{instance="web-${i}:9100"} ${(Math.sin(t / 10 + i) + 1) * 10}`).join('\n')}\n`);
  });
  const target = await listenOnLoopback(metrics);
  const port = await freePort();
  fs.writeFileSync(path.join(work, 'prometheus.yml'), `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: load\n    honor_labels: true\n    static_configs:\n      - targets: ['${new URL(target).host}']\n`);
  const child = spawn(PROMETHEUS, [`--config.file=${path.join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(work, 'prometheus-data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
  onCleanup(() => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    const answer = await fetch(`${url}/api/v1/query?query=${METRIC}`).then((r) => r.json()).catch(() => undefined);
    if ((answer?.data?.result?.length ?? 0) > 0) {
      // A 60 min window is drawn in steps of 12-13 s: the last step must fall after the first scrape.
      await new Promise((resolve) => setTimeout(resolve, 30_000));
      return url;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('Prometheus scraped nothing in 30 s');
}

const post = (url, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) }).then(async (r) => (await r.arrayBuffer(), r.status));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function executionsOf(pitcrew, ruleId) {
  const items = [];
  let cursor;
  do {
    const page = await pitcrew.api('GET', `/api/v1/executions?ruleId=${ruleId}&limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

async function main() {
  if (!fs.existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: apt-get install prometheus`);
  const loadBefore = os.loadavg();
  const work = makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-snapshots-'));
  const prometheusUrl = await startPrometheus(work);
  const nodeFlags = env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${path.join(benchDir, 'profiles')}`] : [];
  const pitcrew = await startPitcrew({ root, env: { ...env, PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8' }, tempPrefix: 'pitcrew-bench-snapshots-', ruleName: 'bench webhook', nodeFlags, progress });
  const integration = await pitcrew.api('POST', '/api/v1/integrations', { name: 'bench prometheus', type: 'alertmanager', config: { prometheusUrl } });
  const rule = (name, alarmName, action) => pitcrew.api('POST', '/api/v1/rules', { name, trigger: { type: 'alert', integrationId: integration.id, alarmName }, action, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' });
  const graphs = await rule('bench graphs', 'BenchGraph', { type: 'graph_snapshot', windowMinutes: 60 });
  await rule('bench ingest', 'NodeDiskFull', { type: 'script', flavour: 'autofix', runbook: { script: 'true' } });
  const alertUrl = `${pitcrew.base}/api/v1/trigger/channel/alertmanager/${pitcrew.apiKey}/${integration.id}`;
  const expr = `${METRIC} > 15`;
  let serial = 0;
  const graphAlert = (i) => alert('BenchGraph', `web-${i % 3}:9100`, new Date(Date.now() - 60_000 + (serial++ % 50_000)).toISOString(), (0x1000000 + serial).toString(16), expr);

  // (a) one capture at a time, beside the bare query_range of the same window and step (60 min, 12 s).
  const captureMs = [];
  const bareMs = [];
  for (let i = 0; i < CAPTURES; i++) {
    const before = (await executionsOf(pitcrew, graphs.id)).length;
    await post(alertUrl, message([graphAlert(i)]));
    let done;
    while (!done) {
      const items = await executionsOf(pitcrew, graphs.id);
      done = items.length > before ? items.find((e) => e.finishedAt && !captureMs.some((c) => c.id === e.id)) : undefined;
      if (!done) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (done.state !== 'succeeded') throw new Error(`capture failed: ${done.reason}`);
    captureMs.push({ id: done.id, ms: Date.parse(done.finishedAt) - Date.parse(done.startedAt) });
    const end = Date.now() / 1000;
    const started = performance.now();
    const answer = await fetch(`${prometheusUrl}/api/v1/query_range?query=${encodeURIComponent(METRIC)}&start=${end - 3600}&end=${end}&step=12`).then((r) => r.json());
    bareMs.push(performance.now() - started);
    if (answer.status !== 'success') throw new Error('query_range failed');
  }

  // (b) the ingest alone (A) and with captures beside it (B), interleaved A B A B …, after a warm-up of the ingest.
  const ingest = ingestLoad(alertUrl);
  progress(`warm-up: ingest alone, ${WARMUP} s`);
  await measureRound(pitcrew, graphs.id, ingest, undefined, WARMUP);
  const rounds = [];
  for (let r = 0; r < ROUNDS * 2; r++) {
    const withSnapshots = r % 2 === 1;
    progress(`round ${r + 1}/${ROUNDS * 2}: ingest ${withSnapshots ? 'with' : 'without'} captures, ${SECONDS} s`);
    const round = await measureRound(pitcrew, graphs.id, ingest, withSnapshots ? (k) => post(alertUrl, message([graphAlert(k)])) : undefined, SECONDS);
    rounds.push({ round: r + 1, withSnapshots, ...round });
    if (withSnapshots) await drained(pitcrew, graphs.id);
  }
  const loadAfter = os.loadavg();
  await pitcrew.server.stop(15_000);
  return report({ pitcrew, rounds, captureMs, bareMs, loadBefore, loadAfter });
}

/** Waits (up to 30 s, unmeasured) until every capture posted has ended: none spills into the next round. */
async function drained(pitcrew, graphRuleId) {
  for (let i = 0; i < 300; i++) {
    if ((await executionsOf(pitcrew, graphRuleId)).every((e) => e.finishedAt)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  progress('captures still running 30 s after their round: the next round has them beside it');
}

/** Four connections posting Alertmanager notifications of 100 alerts each, back to back, until `until`. */
function ingestLoad(alertUrl) {
  let n = 0;
  const body = () => message(Array.from({ length: ALERTS_PER_NOTIFICATION }, (_, i) => alert('NodeDiskFull', `web-${i}:9100`, new Date(Date.UTC(2026, 0, 1) + n++ * 1000).toISOString(), (i + 1).toString(16).padStart(16, '0'), 'node_filesystem_avail_bytes < 1')));
  return async (until) => {
    let alerts = 0;
    await Promise.all(Array.from({ length: ALERT_CONNECTIONS }, async () => {
      while (performance.now() < until) if ((await post(alertUrl, body())) === 202) alerts += ALERTS_PER_NOTIFICATION;
    }));
    return alerts;
  };
}

/** RATE graph alerts a second, on one connection, until `until`: how many were taken. */
async function offerCaptures(postGraphAlert, until) {
  let taken = 0;
  const first = performance.now();
  for (let k = 0; performance.now() < until; k++) {
    if ((await postGraphAlert(k)) === 202) taken += 1;
    const wait = first + ((k + 1) * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return taken;
}

/** One round: the ingest's alerts/s, the server's CPU per alert (whole process, and its main thread: the event loop), captures ended. */
async function measureRound(pitcrew, graphRuleId, ingest, postGraphAlert, seconds) {
  const { pid } = pitcrew.server;
  const [cpu, mainCpu] = [cpuSeconds(pid), mainThreadCpuSeconds(pid)];
  const start = Date.now();
  const until = performance.now() + seconds * 1000;
  const [alerts, graphAlerts] = await Promise.all([ingest(until), postGraphAlert ? offerCaptures(postGraphAlert, until) : 0]);
  const end = Date.now();
  const [cpuUsed, mainCpuUsed] = [cpuSeconds(pid) - cpu, mainThreadCpuSeconds(pid) - mainCpu];
  const elapsed = (end - start) / 1000;
  const ended = (await executionsOf(pitcrew, graphRuleId)).filter((e) => e.finishedAt && Date.parse(e.finishedAt) >= start && Date.parse(e.finishedAt) <= end);
  const snapshots = ended.filter((e) => e.state === 'succeeded').length;
  return {
    alerts,
    snapshots,
    cpuMs: cpuUsed * 1000,
    mainCpuMs: mainCpuUsed * 1000,
    alertsPerSecond: alerts / elapsed,
    cores: cpuUsed / elapsed,
    cpuMsPerAlert: (cpuUsed * 1000) / Math.max(1, alerts),
    mainCpuMsPerAlert: (mainCpuUsed * 1000) / Math.max(1, alerts),
    graphAlerts,
    snapshotsPerSecond: snapshots / elapsed,
    failed: ended.filter((e) => e.state !== 'succeeded').length,
  };
}

function report({ pitcrew, rounds, captureMs, bareMs, loadBefore, loadAfter }) {
  const of = (withSnapshots, key) => rounds.filter((r) => r.withSnapshots === withSnapshots).map((r) => r[key]);
  const fmtLoad = (load) => load.map((l) => l.toFixed(2)).join(' ');
  const medianShare = median(of(true, 'alertsPerSecond')) / median(of(false, 'alertsPerSecond'));
  const bestShare = Math.max(...of(true, 'alertsPerSecond')) / Math.max(...of(false, 'alertsPerSecond'));
  // A capture's CPU: what a B round used beyond its alerts at the A rounds' cost per alert, per snapshot stored.
  const perCapture = (cpuKey, perAlertKey) => median(rounds.filter((r) => r.withSnapshots && r.snapshots > 0).map((r) => (r[cpuKey] - r.alerts * median(of(false, perAlertKey))) / r.snapshots));
  const captureCpu = perCapture('cpuMs', 'cpuMsPerAlert');
  const captureMainCpu = perCapture('mainCpuMs', 'mainCpuMsPerAlert');
  const spread = (values) => `${fmtInt(Math.min(...values))}–${fmtInt(Math.max(...values))}`;
  log();
  log('pitcrew graph snapshot benchmark');
  log(`  storage      ${pitcrew.storage.describe}`);
  log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; load before ${fmtLoad(loadBefore)}, after ${fmtLoad(loadAfter)}; code ${env.BENCH_E2E_CODE_VERSION ?? codeVersion(root)}`);
  log(`  Prometheus   ${PROMETHEUS}, 3 series scraped every 1 s; the capture draws a 60 min window (about 300 steps)`);
  log(`  load         ingest: ${ALERT_CONNECTIONS} connections of Alertmanager notifications of ${ALERTS_PER_NOTIFICATION} alerts; captures: ${RATE} graph alert(s)/s offered; ${ROUNDS} × (A alone, B with captures) of ${SECONDS} s after ${WARMUP} s of warm-up`);
  log();
  log(`  (a) one capture, alert to stored PNG (median of ${captureMs.length}): ${median(captureMs.map((c) => c.ms)).toFixed(0)} ms; the bare query_range of the same window from this process: ${median(bareMs).toFixed(1)} ms`);
  log();
  log(table([
    ['round', 'captures beside', 'ingest alerts/s', 'server cores busy', 'server CPU ms/alert', 'main thread CPU ms/alert', 'graph alerts posted', 'snapshots/s', 'captures failed'],
    ...rounds.map((r) => [String(r.round), r.withSnapshots ? 'B yes' : 'A no', fmtInt(r.alertsPerSecond), r.cores.toFixed(2), r.cpuMsPerAlert.toFixed(3), r.mainCpuMsPerAlert.toFixed(3), String(r.graphAlerts), r.snapshotsPerSecond.toFixed(1), String(r.failed)]),
  ]));
  log();
  log(table([
    ['', 'A: ingest alone', 'B: with captures', 'B ÷ A'],
    ['alerts/s, median', fmtInt(median(of(false, 'alertsPerSecond'))), fmtInt(median(of(true, 'alertsPerSecond'))), fmtPct(medianShare)],
    ['alerts/s, best', fmtInt(Math.max(...of(false, 'alertsPerSecond'))), fmtInt(Math.max(...of(true, 'alertsPerSecond'))), fmtPct(bestShare)],
    ['alerts/s, range', spread(of(false, 'alertsPerSecond')), spread(of(true, 'alertsPerSecond')), ''],
    ['server cores busy, median', median(of(false, 'cores')).toFixed(2), median(of(true, 'cores')).toFixed(2), fmtPct(median(of(true, 'cores')) / median(of(false, 'cores')))],
    ['server CPU ms/alert, median', median(of(false, 'cpuMsPerAlert')).toFixed(3), median(of(true, 'cpuMsPerAlert')).toFixed(3), fmtPct(median(of(true, 'cpuMsPerAlert')) / median(of(false, 'cpuMsPerAlert')))],
    ['main thread CPU ms/alert, median', median(of(false, 'mainCpuMsPerAlert')).toFixed(3), median(of(true, 'mainCpuMsPerAlert')).toFixed(3), fmtPct(median(of(true, 'mainCpuMsPerAlert')) / median(of(false, 'mainCpuMsPerAlert')))],
    ['snapshots/s, median', '', median(of(true, 'snapshotsPerSecond')).toFixed(1), ''],
  ]));
  log(`  a capture's CPU on the server (B rounds beyond their alerts at A's cost, median): ${captureCpu.toFixed(1)} ms, of it on the main thread ${captureMainCpu.toFixed(1)} ms (${fmtPct(captureMainCpu / captureCpu)})`);
  log(`  were the ingest bound by its event loop alone (a core free for the drawing), it would keep ${fmtPct(median(of(false, 'mainCpuMsPerAlert')) / median(of(true, 'mainCpuMsPerAlert')))} (main thread CPU per alert, A ÷ B)`);
  log(`  (b) the ingest kept ${fmtPct(medianShare)} of its throughput (medians; best rounds ${fmtPct(bestShare)}); goal ≥ ${fmtPct(GOAL)}`);
  const failures = [];
  if (medianShare < GOAL) failures.push('the ingest kept less than 90 % of its throughput beside the captures (medians)');
  if (rounds.some((r) => r.failed > 0)) failures.push('some captures failed');
  for (const failure of failures) log(`  FAILED: ${failure}`);
  return failures.length === 0;
}

runBench(main, number('BENCH_TIMEOUT', 300 + WARMUP + ROUNDS * 2 * (SECONDS + 10), 10), progress);
