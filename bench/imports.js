// Import benchmark (bench/README.md): a Monasca history imported by the import runner
// (src/imports/runner.ts: Keystone token, GET /v2.0/alarms and /v2.0/alarms/state-history page by
// page through the egress-checked, rate-limited, read-only fetch, each page applied to incidents
// with its cursor in one transaction), against, in the same run:
//
// - apply: the same pages' observations applied with applyObservations, one transaction a page,
//   on a fresh database: the bookkeeping the import cannot avoid, without the tool;
// - fetch: the same calls to the same emulator with a bare policy fetch and JSON parse: the reading
//   the import cannot avoid, without the bookkeeping.
//
// The tool is the tests' Keystone + Monasca emulator (test/support/keystone-monasca.ts, bundled
// with esbuild into dist/bench/), in this process, holding A alarms with T state changes each in the
// look-back. pitcrew runs from dist/ over SQLite in a temp data directory. R alternating rounds,
// each on fresh databases; the median round is reported.
// Exit 0 when every import applied A × T observations and made A × T / 2 incidents, all resolved;
// 1 otherwise; 2 when the time budget ran out.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import pino from 'pino';
import { codeVersion, envNumber, fmtInt, fmtMs, fmtPct, table } from './common.js';
import { makeTempDir, onCleanup, runBench } from './procs.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const ALARMS = Math.round(number('BENCH_IMPORT_ALARMS', 1000, 1));
const CHANGES = 2 * Math.round(number('BENCH_IMPORT_CHANGES', 10, 2) / 2);
const ROUNDS = Math.round(number('BENCH_IMPORT_ROUNDS', 3, 1));
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 120 + ROUNDS * ALARMS * CHANGES * 0.002, 10);
const USER = { username: 'bench-reader', password: 'bench-reader-password', projects: ['ops'] };

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);
const codeAtStart = codeVersion(root);
const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');

async function main() {
  const startedAt = Date.now();
  for (const file of ['dist/src/imports/runner.js', 'dist/src/incidents/apply.js']) {
    if (!fs.existsSync(path.join(root, file))) throw new Error(`${file} is missing: run npm run build first (npm run bench does)`);
  }
  const dist = (file) => import(path.join(root, 'dist/src', file));
  const [{ ImportRunner }, { applyObservations }, { toolImporters }, { createIntegration }, { configureImport }, { openStore }, { migrateToLatest }, { bootstrapTenant }, { SecretBox }, { EgressPolicy }, { policyFetch }] = await Promise.all([
    dist('imports/runner.js'), dist('incidents/apply.js'), dist('integrations/importers.js'), dist('integrations/repository.js'), dist('integrations/import-settings.js'),
    dist('store/database.js'), dist('store/migrations.js'), dist('tenants/bootstrap.js'), dist('identity/secret-box.js'), dist('egress/policy.js'), dist('egress/fetch.js'),
  ]);

  const emulatorModule = path.join(root, 'dist/bench/keystone-monasca.mjs');
  await build({ entryPoints: [path.join(root, 'test/support/keystone-monasca.ts')], outfile: emulatorModule, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  const { startKeystoneMonasca, emulatedAlarm, transition } = await import(emulatorModule);
  const cloud = await startKeystoneMonasca([USER]);
  onCleanup(() => cloud.close());
  const project = cloud.projects.get('ops');
  const now = Date.now();
  const span = (20 * 86_400_000) / CHANGES;
  for (let a = 0; a < ALARMS; a++) project.alarms.push(emulatedAlarm(`alarm-${String(a).padStart(6, '0')}`, { id: 'def-cpu', name: 'high cpu', severity: 'HIGH' }, `web-${a}`, now - 40 * 86_400_000));
  // State changes in time order, across alarms, as Monasca records them: ALARM, OK, ALARM, OK…
  for (let c = 0; c < CHANGES; c++) {
    for (let a = 0; a < ALARMS; a++) transition(project, `alarm-${String(a).padStart(6, '0')}`, c % 2 === 0 ? 'ALARM' : 'OK', now - 25 * 86_400_000 + c * span + a);
  }
  const expectedObservations = ALARMS * CHANGES;
  const expectedIncidents = (ALARMS * CHANGES) / 2;

  const work = makeTempDir(path.join(os.tmpdir(), 'pitcrew-bench-imports-'));
  const box = new SecretBox(Buffer.alloc(32, 9));
  const egress = new EgressPolicy(['127.0.0.0/8']);
  const logger = pino({ level: 'silent' });
  const toIncidents = async (db, tenantId, integrationId, observations, receivedAt, options) => {
    await applyObservations(db, tenantId, integrationId, observations, receivedAt, options);
  };
  let databases = 0;
  async function freshStore() {
    const dataDir = path.join(work, `data-${(databases += 1)}`);
    const store = openStore({ dataDir });
    await migrateToLatest(store);
    const tenant = await bootstrapTenant(store, 'bench');
    const integration = await createIntegration(store.db, box, tenant.tenantId, { name: 'monasca', type: 'monasca', config: { monascaUrl: cloud.url } });
    const login = { version: 'v3', identityUrl: cloud.url, username: USER.username, password: USER.password, project: 'ops' };
    // At the most the API allows: the import's own limit would otherwise be most of what is measured.
    await configureImport(store.db, box, integration, { enabled: false, lookbackDays: 30, requestsPerSecond: 100, secret: login });
    return { store, tenant, integration };
  }
  const incidentsOf = async (store, integrationId) => {
    const rows = await store.db.selectFrom('incidents').select(['state']).where('integration_id', '=', integrationId).execute();
    return { total: rows.length, resolved: rows.filter((r) => r.state === 'resolved').length };
  };

  // The import's calls and pages, recorded once (not timed), for the two baselines.
  const calls = [];
  const pages = [];
  {
    const { store, tenant, integration } = await freshStore();
    const base = policyFetch(egress);
    const recording = (url, init) => {
      calls.push({ url, init: { method: init.method, headers: init.headers, body: init.body } });
      return base(url, init);
    };
    const sink = async (db, tenantId, integrationId, observations, receivedAt, options) => {
      pages.push({ observations, options });
      await toIncidents(db, tenantId, integrationId, observations, receivedAt, options);
    };
    const runner = new ImportRunner({ store, box, fetch: recording, importerOf: toolImporters(), sink, nodeId: 'bench-node', logger });
    await store.db.insertInto('nodes').values({ id: 'bench-node', started_at: now, heartbeat_at: now }).execute();
    runner.start();
    await runner.request(integration);
    await runner.runPass();
    await runner.idle();
    await runner.stop();
    const imported = pages.reduce((n, p) => n + p.observations.length, 0);
    if (imported !== expectedObservations) throw new Error(`the recording import applied ${imported} observations, expected ${expectedObservations}`);
    await store.close();
    void tenant;
  }
  progress(`recorded: ${calls.length} calls, ${pages.length} pages, ${fmtInt(expectedObservations)} observations`);

  const failures = [];
  const targets = {
    async import() {
      const { store, integration } = await freshStore();
      await store.db.insertInto('nodes').values({ id: 'bench-node', started_at: now, heartbeat_at: now }).execute();
      const runner = new ImportRunner({ store, box, fetch: policyFetch(egress), importerOf: toolImporters(), sink: toIncidents, nodeId: 'bench-node', logger });
      runner.start();
      const t0 = performance.now();
      await runner.request(integration);
      await runner.runPass();
      await runner.idle();
      const ms = performance.now() - t0;
      await runner.stop();
      const row = await store.db.selectFrom('imports').select(['state', 'imported', 'error']).executeTakeFirstOrThrow();
      const made = await incidentsOf(store, integration.id);
      if (row.state !== 'succeeded' || row.imported !== expectedObservations) failures.push(`import: ${row.state} ${row.imported} ${row.error ?? ''}`);
      if (made.total !== expectedIncidents || made.resolved !== expectedIncidents) failures.push(`import made ${made.total} incidents (${made.resolved} resolved), expected ${expectedIncidents}`);
      await store.close();
      return ms;
    },
    async apply() {
      const { store, tenant, integration } = await freshStore();
      const t0 = performance.now();
      for (const page of pages) {
        await store.db.transaction().execute((tx) => toIncidents(tx, tenant.tenantId, integration.id, page.observations, Date.now(), page.options));
      }
      const ms = performance.now() - t0;
      const made = await incidentsOf(store, integration.id);
      if (made.total !== expectedIncidents) failures.push(`apply made ${made.total} incidents, expected ${expectedIncidents}`);
      await store.close();
      return ms;
    },
    async fetch() {
      const bare = policyFetch(egress);
      const t0 = performance.now();
      for (const call of calls) {
        // The token call's answer is a token in a header; every other answer is JSON the import parses.
        const response = await bare(call.url, call.init);
        if (!response.ok) failures.push(`fetch ${call.init.method} ${call.url}: HTTP ${response.status}`);
        await response.json();
      }
      return performance.now() - t0;
    },
  };

  const order = ['import', 'apply', 'fetch'];
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const results = {};
    for (const key of round % 2 === 0 ? order : [...order].reverse()) {
      progress(`round ${round + 1}/${ROUNDS} ${key}`);
      results[key] = await targets[key]();
    }
    rounds.push(results);
  }
  const median = (key) => [...rounds.map((r) => r[key])].sort((a, b) => a - b)[Math.floor((rounds.length - 1) / 2)];
  const ms = { import: median('import'), apply: median('apply'), fetch: median('fetch') };
  const perSecond = (millis) => expectedObservations / (millis / 1000);
  const floorMs = (calls.length - 1) * (1000 / 100);

  const cpu = os.cpus();
  log();
  log('pitcrew import benchmark');
  log(`  machine      ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, node ${process.version}`);
  log(`  code         ${codeAtStart}; load average before the run ${loadBefore}`);
  log(`  tool         Keystone + Monasca emulator on loopback, in this process: ${fmtInt(ALARMS)} alarms × ${CHANGES} state changes = ${fmtInt(expectedObservations)} in the look-back`);
  log(`  import       ${calls.length} calls (token, then per page the alarm list and 1,000 transitions), ${pages.length} pages; requestsPerSecond 100 (a floor of ${fmtMs(floorMs)} ms); SQLite`);
  log(`  rounds       ${ROUNDS}, alternating order, each on fresh databases (median round shown)`);
  log();
  const each = (key) => rounds.map((r) => fmtMs(r[key])).join(' / ');
  log(table([
    ['figure', 'import (runner)', 'apply only', 'fetch only', 'import / (apply + fetch)'],
    ['ms', fmtMs(ms.import), fmtMs(ms.apply), fmtMs(ms.fetch), fmtPct(ms.import / (ms.apply + ms.fetch))],
    ['  each round', each('import'), each('apply'), each('fetch'), ''],
    ['observations/s', fmtInt(perSecond(ms.import)), fmtInt(perSecond(ms.apply)), fmtInt(perSecond(ms.fetch)), ''],
    ['ms per page', fmtMs(ms.import / pages.length), fmtMs(ms.apply / pages.length), fmtMs(ms.fetch / pages.length), ''],
  ]));
  log('  import: request to the end of the run (claim, token, pages read and applied with their cursor, end); apply: the same pages\' observations');
  log('  applied with applyObservations, a transaction each; fetch: the same calls, answered by the same emulator, read and parsed.');
  log();
  const checks = [[failures.length === 0, `every import applied ${fmtInt(expectedObservations)} observations and made ${fmtInt(expectedIncidents)} incidents, all resolved (${failures.length} failures${failures.length ? `: ${failures[0]}` : ''})`]];
  log('verification');
  for (const [ok, what] of checks) log(`  ${ok ? 'OK' : 'FAILED'}: ${what}`);
  log();
  log(`done in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  return checks.every(([ok]) => ok);
}

runBench(main, BUDGET_SECONDS, progress);
