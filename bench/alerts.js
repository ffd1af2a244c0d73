// Integration ingest benchmark (bench/README.md): alerts per second through an Alertmanager
// integration, each notification carrying 100 alerts, against events per second through the
// webhook on the same server in the same run (the baseline). Checks that a 100-alert notification
// is stored in one transaction, and that every alert answered 202 was stored as its event.
//
// pitcrew runs as a child process; the load comes from this process over keep-alive HTTP/1.1,
// the same client for both paths, rounds alternating. Only 127.0.0.1 is ever targeted.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fetchMetrics, fmtInt, fmtPct, table } from './common.js';
import { budgetSeconds, cleanupAll, cpuSeconds } from './procs.js';
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
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 120 + ROUNDS * 2 * (SECONDS + 5), 10);
const TARGET_SHARE = 0.8;

const WEBHOOK_BODY = JSON.stringify({ HostName: 'web-1', AlarmName: 'disk_full', Severity: 'critical', Act: true, MetaData: { Key1: 'Value1' } });

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);
const codeAtStart = env.BENCH_E2E_CODE_VERSION ?? codeVersion(root);

/**
 * Alertmanager's webhook message, version 4 (prometheus/alertmanager notify/webhook/webhook.go
 * `Message`, template/template.go `Alert`): `n` makes every alert a new firing (its startsAt),
 * so none is a duplicate of an earlier one.
 */
function notification(n) {
  const startsAt = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  const alerts = [];
  for (let i = 0; i < ALERTS_PER_NOTIFICATION; i++) {
    alerts.push(`{"status":"firing","labels":{"alertname":"NodeDiskFull","instance":"web-${i}:9100","job":"node","severity":"critical"},"annotations":{"summary":"disk full on web-${i}"},"startsAt":"${startsAt}","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus:9090/graph","fingerprint":"f${i.toString(16).padStart(15, '0')}"}`);
  }
  return `{"receiver":"pitcrew","status":"firing","alerts":[${alerts.join(',')}],"groupLabels":{"alertname":"NodeDiskFull"},"commonLabels":{"alertname":"NodeDiskFull"},"commonAnnotations":{},"externalURL":"http://alertmanager:9093","version":"4","groupKey":"{}:{alertname=\\"NodeDiskFull\\"}","truncatedAlerts":0}`;
}

/** `connections` loops posting for `seconds`; `bodyOf(n)` gives the n-th body. Counts 202s and the rest. */
async function load({ url, connections, seconds, bodyOf }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  const until = performance.now() + seconds * 1000;
  let n = 0;
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
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      const status = await post(bodyOf(n++));
      if (status === 202) counts.ok += 1;
      else if (status === 0) counts.errors += 1;
      else counts.other += 1;
    }
  }));
  agent.destroy();
  return { ...counts, seconds: (performance.now() - started) / 1000 };
}

async function metrics(base) {
  const text = await fetchMetrics(base);
  const sum = (pattern) => [...text.matchAll(new RegExp(`^${pattern} ([0-9.eE+-]+)$`, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
  return { batchSum: sum('pitcrew_ingest_batch_size_sum'), batchCount: sum('pitcrew_ingest_batch_size_count'), events: sum('pitcrew_events_total\\{[^}]*\\}') };
}

async function main() {
  const pitcrew = await startPitcrew({ root, env, tempPrefix: 'pitcrew-bench-alerts-', ruleName: 'bench webhook', progress });
  const { base, metricsBase, apiKey, api, webhookPath, server } = pitcrew;
  const integration = await api('POST', '/api/v1/integrations', { name: 'bench prometheus', type: 'alertmanager' });
  await api('POST', '/api/v1/rules', {
    name: 'bench alert',
    trigger: { type: 'alert', integrationId: integration.id },
    action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
    target: { type: 'trigger_host' },
    infrastructureType: 'On_Premise',
  });
  const alertUrl = `${base}/api/v1/trigger/channel/alertmanager/${apiKey}/${integration.id}`;
  const webhookUrl = `${base}${webhookPath}`;

  // One notification on the idle server: one transaction for its 100 alerts.
  const before = await metrics(metricsBase);
  const one = await fetch(alertUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: notification(-1), signal: AbortSignal.timeout(10_000) });
  await one.arrayBuffer();
  const after = await metrics(metricsBase);
  const oneTransaction = { ok: one.status === 202, transactions: after.batchCount - before.batchCount, alerts: after.batchSum - before.batchSum };

  const rounds = [];
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of ['webhook', 'alerts']) {
      progress(`round ${round + 1}/${ROUNDS}: ${path}, ${SECONDS} s`);
      const cpuBefore = cpuSeconds(server.pid);
      const result = path === 'webhook'
        ? await load({ url: webhookUrl, connections: WEBHOOK_CONNECTIONS, seconds: SECONDS, bodyOf: () => WEBHOOK_BODY })
        : await load({ url: alertUrl, connections: ALERT_CONNECTIONS, seconds: SECONDS, bodyOf: () => notification(n++) });
      const items = path === 'webhook' ? result.ok : result.ok * ALERTS_PER_NOTIFICATION;
      rounds.push({ path, round, ...result, items, perSecond: items / result.seconds, cpuMsPerItem: ((cpuSeconds(server.pid) - cpuBefore) * 1000) / Math.max(1, items) });
    }
  }
  const final = await metrics(metricsBase);
  // Every item answered 202 is one event: the rounds', and the first notification's alerts.
  const answered = rounds.reduce((total, r) => total + r.items, 0) + ALERTS_PER_NOTIFICATION;
  const best = (path) => Math.max(...rounds.filter((r) => r.path === path).map((r) => r.perSecond));
  const share = best('alerts') / best('webhook');

  log();
  log('pitcrew integration ingest benchmark');
  log(`  storage      ${pitcrew.storage.describe}`);
  log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; code ${codeAtStart}`);
  log(`  load         keep-alive HTTP/1.1 from this process; webhook: ${WEBHOOK_CONNECTIONS} connections, one event each; alerts: ${ALERT_CONNECTIONS} connections, Alertmanager notifications of ${ALERTS_PER_NOTIFICATION} alerts; ${SECONDS} s per round`);
  log();
  log(table([
    ['round', 'path', 'requests 202', 'other', 'errors', 'items/s', 'server CPU per item'],
    ...rounds.map((r) => [String(r.round + 1), r.path, fmtInt(r.ok), fmtInt(r.other), fmtInt(r.errors), fmtInt(r.perSecond), `${(r.cpuMsPerItem * 1000).toFixed(0)} µs`]),
  ]));
  log();
  log(`  one notification of ${ALERTS_PER_NOTIFICATION} alerts: ${oneTransaction.transactions} transaction(s) holding ${oneTransaction.alerts} events`);
  log(`  alerts/s ÷ webhook events/s (best rounds): ${fmtPct(share)} (goal ≥ ${fmtPct(TARGET_SHARE)})`);
  log(`  events stored ${fmtInt(final.events)}, items answered 202 ${fmtInt(answered)}`);
  const stored = final.events === answered;
  const failures = [
    ...(oneTransaction.ok && oneTransaction.transactions === 1 && oneTransaction.alerts === ALERTS_PER_NOTIFICATION ? [] : ['the notification was not one transaction of its alerts']),
    ...(stored ? [] : ['stored events differ from the items answered 202']),
    ...(rounds.some((r) => r.other + r.errors > 0) ? ['some requests were not answered 202'] : []),
  ];
  for (const failure of failures) log(`  FAILED: ${failure}`);
  return failures.length === 0 ? 0 : 1;
}

budgetSeconds(BUDGET_SECONDS, progress);
main()
  .then(async (code) => {
    await cleanupAll();
    process.exit(code);
  })
  .catch(async (error) => {
    progress(error.stack ?? String(error));
    await cleanupAll();
    process.exit(1);
  });
