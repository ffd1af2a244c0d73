// Incident analytics benchmark (bench/README.md): GET /api/v1/incidents/analytics and
// /candidates over 1,000,000 resolved incidents, on SQLite and on PostgreSQL, through a real
// pitcrew server. Issue 38 asks each to answer in under 1 s. The incidents are written straight
// into the server's database (its migrations applied by `pitcrew bootstrap`), not through HTTP:
// the server is stopped, the incidents' indexes dropped, the rows inserted, the indexes made again
// from their own definitions, the server started again. The migration's triggers stay, so every
// day seeded is marked stale as an ingest would mark it, and as an upgrade through migration 0028
// marks a database that already holds them: the worst case is the call made at once (the background
// has just begun recomputing them, the call reads its stale days from the incidents); what a user sees is the call right after
// incidents resolved at a busy pace with the background running. The baseline, same server, same
// run: GET /api/v1/incidents?limit=50.
//
// Only 127.0.0.1 is ever targeted; the PostgreSQL database is created for the run and dropped.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { codeVersion, envNumber, fmtInt, table } from './common.js';
import { cpuSeconds, runBench } from './procs.js';
import { startPitcrew } from './pitcrew.js';

/* global fetch, AbortSignal */

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const env = process.env;
const number = (name, fallback, min) => envNumber(env, name, fallback, min);

const INCIDENTS = Math.round(number('BENCH_INCIDENTS', 1_000_000, 1000));
const ALARMS = 200;
const HOSTS = 2000;
const DAYS = 90;
const WARM_CALLS = Math.round(number('BENCH_INCIDENTS_CALLS', 5, 1));
const GOAL_MS = 1000;
const PG_URL = env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const STORAGES = (env.BENCH_INCIDENTS_STORAGE ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean);
const DAY_MS = 86_400_000;
const INTEGRATION_TYPES = ['alertmanager', 'zabbix', 'datadog', 'monasca', 'pagerduty'];
const AUTO_EXPLAIN_MS = number('BENCH_INCIDENTS_AUTO_EXPLAIN_MS', 0, 0);
/** Incidents resolved per second while the server runs (a busy tenant: 1,000,000 over 90 days is 0.13 a second). */
const PACE = number('BENCH_INCIDENTS_PACE', 20, 1);
const PACE_SECONDS = number('BENCH_INCIDENTS_PACE_SECONDS', 10, 1);
const PACE_ROUNDS = Math.round(number('BENCH_INCIDENTS_PACE_ROUNDS', 3, 1));

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

/** A small seeded PRNG (mulberry32): the same incidents on both databases, run after run. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks index i with weight 1 / (i + 1)^s (Zipf): a few alarms and hosts take most incidents. */
function zipf(n, s, random) {
  const cumulative = [];
  let total = 0;
  for (let i = 0; i < n; i++) cumulative.push((total += 1 / (i + 1) ** s));
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** A UUIDv7 of time `ms` (store/ids.ts idAt), its random part from the PRNG. */
function idAt(ms, random) {
  const hex = ms.toString(16).padStart(12, '0');
  const r = () => Math.floor(random() * 0x10000).toString(16).padStart(4, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7${r().slice(1)}-${(0x8000 | (Math.floor(random() * 0x4000))).toString(16)}-${r()}${r()}${r()}`;
}

const ALARM_WORDS = ['NodeDiskFull', 'HighMemory', 'ServiceDown', 'CertificateExpiry', 'HighLoad', 'SwapUsage', 'InodesLow', 'NtpDrift', 'PodCrashLoop', 'QueueBacklog'];

/**
 * The data set: 200 alarms (Zipf 1.1: the first takes ~21 %), each of one integration (one in ten
 * of a webhook: no integration), with its severity and its typical resolution time (log-normal
 * around 1 min to 3 h); 2,000 hosts (Zipf 0.8); resolutions spread over the last 90 days; 75 %
 * resolved by the tool, 15 % by automation, 10 % by hand; the alarms the rules cover carry them.
 */
function dataSet({ tenantId, integrations, ruleOf, now }) {
  const random = prng(38);
  const alarms = Array.from({ length: ALARMS }, (_, i) => ({
    name: `${ALARM_WORDS[i % ALARM_WORDS.length]}_${String(i).padStart(3, '0')}`,
    integrationId: i % 10 === 9 ? null : integrations[i % integrations.length],
    severity: ['critical', 'warning', 'warning', 'info'][i % 4],
    medianMs: Math.exp(Math.log(60_000) + random() * Math.log(180)),
  }));
  const hosts = Array.from({ length: HOSTS }, (_, i) => `web-${String(i).padStart(4, '0')}.example.com`);
  const alarm = zipf(ALARMS, 1.1, random);
  const host = zipf(HOSTS, 0.8, random);
  const start = now - DAYS * DAY_MS;
  return {
    alarms,
    hosts,
    *rows() {
      for (let n = 0; n < INCIDENTS; n++) {
        const a = alarms[alarm()];
        const hostname = hosts[host()];
        // In time order, as incidents resolve, evenly over the days: a table's rows lie as the ingest would have written them.
        const resolvedAt = start + Math.floor(((n + random()) * (DAYS * DAY_MS - 60_000)) / INCIDENTS);
        // Box-Muller: a log-normal resolution time around the alarm's median.
        const gauss = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
        const duration = Math.max(1000, Math.min(7 * DAY_MS, Math.round(a.medianMs * Math.exp(gauss))));
        const openedAt = resolvedAt - duration;
        const who = random();
        const resolvedBy = who < 0.75 ? 'tool' : who < 0.9 ? 'automation' : 'manual';
        const rule = ruleOf(a.name);
        const key = `${a.name}|${hostname}`;
        yield {
          id: idAt(openedAt, random),
          tenant_id: tenantId,
          integration_id: a.integrationId,
          incident_key: key,
          state: 'resolved',
          alarm_name: a.name,
          severity: a.severity,
          hostname,
          host_key: hostname,
          opened_at: openedAt,
          resolved_at: resolvedAt,
          last_seen_at: resolvedAt,
          last_fired_at: openedAt,
          last_fingerprint: null,
          occurrences: 1 + Math.floor(random() * random() * 5),
          resolved_by: resolvedBy,
          resolved_by_user: null,
          last_fix_at: resolvedBy === 'automation' ? resolvedAt - 30_000 : null,
          rule_ids: rule && random() < 0.6 ? JSON.stringify([rule]) : '[]',
          execution_ids: '[]',
          execution_count: resolvedBy === 'automation' ? 1 : 0,
        };
      }
    },
  };
}

const COLUMNS = ['id', 'tenant_id', 'integration_id', 'incident_key', 'state', 'alarm_name', 'severity', 'hostname', 'host_key', 'opened_at', 'resolved_at',
  'last_seen_at', 'last_fired_at', 'last_fingerprint', 'occurrences', 'resolved_by', 'resolved_by_user', 'last_fix_at', 'rule_ids', 'execution_ids', 'execution_count'];
const PG_TYPES = { opened_at: 'bigint', resolved_at: 'bigint', last_seen_at: 'bigint', last_fired_at: 'bigint', last_fix_at: 'bigint', occurrences: 'integer', execution_count: 'integer' };

/** A direct connection to the server's database: SQLite (better-sqlite3) or PostgreSQL (pg). */
async function openDirect(pitcrew) {
  if (pitcrew.storage.kind === 'SQLite') {
    const db = new SqliteDatabase(path.join(pitcrew.dataDir, 'pitcrew.db'));
    db.pragma('busy_timeout = 30000');
    return {
      all: async (text, params = []) => db.prepare(text).all(...params),
      run: async (text) => void db.exec(text),
      indexes: async () => db.prepare("select name, sql from sqlite_master where type = 'index' and tbl_name = 'incidents' and sql is not null").all().map((r) => ({ name: r.name, sql: r.sql })),
      insertAll: async (rows) => {
        const insert = db.prepare(`insert into incidents (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
        db.transaction(() => {
          for (const row of rows) insert.run(...COLUMNS.map((c) => row[c]));
        })();
      },
      close: async () => db.close(),
    };
  }
  const client = new pg.Client({ connectionString: pitcrew.storage.serverEnv.DATABASE_URL });
  await client.connect();
  return {
    all: async (text, params = []) => (await client.query(text, params)).rows,
    run: async (text) => void (await client.query(text)),
    indexes: async () => (await client.query("select indexname as name, indexdef as sql from pg_indexes where tablename = 'incidents' and indexname <> 'incidents_pkey'")).rows,
    insertAll: async (rows) => {
      // One statement per 20,000 rows: a column array each, unnest()ed server-side.
      const text = `insert into incidents (${COLUMNS.join(', ')}) select * from unnest(${COLUMNS.map((c, i) => `$${i + 1}::${PG_TYPES[c] ?? 'text'}[]`).join(', ')})`;
      await client.query('begin');
      let chunk = COLUMNS.map(() => []);
      let size = 0;
      const flush = async () => {
        if (size > 0) await client.query(text, chunk);
        chunk = COLUMNS.map(() => []);
        size = 0;
      };
      for (const row of rows) {
        COLUMNS.forEach((c, i) => chunk[i].push(row[c]));
        if (++size === 20_000) await flush();
      }
      await flush();
      await client.query('commit');
    },
    close: async () => client.end(),
  };
}

/** Stops the server, writes the incidents with their indexes dropped and made again after, starts it again. */
async function seed(pitcrew, data) {
  await pitcrew.server.stop(15_000);
  const db = await openDirect(pitcrew);
  const started = performance.now();
  const indexes = await db.indexes();
  for (const index of indexes) await db.run(`drop index ${index.name}`);
  await db.insertAll(data.rows());
  const inserted = performance.now();
  for (const index of indexes) await db.run(index.sql);
  // PostgreSQL: what autovacuum does within minutes of such a load, done now: the statistics, and
  // the visibility map without which an index-only scan reads every row's page too.
  if (pitcrew.storage.kind === 'PostgreSQL') await db.run('vacuum analyze incidents');
  // Profiling: PostgreSQL's plans of the server's statements slower than this, in its log (auto_explain).
  if (pitcrew.storage.kind === 'PostgreSQL' && AUTO_EXPLAIN_MS > 0) {
    await db.run(`do $$ begin execute format('alter database %I set session_preload_libraries = ''auto_explain''', current_database());
      execute format('alter database %I set auto_explain.log_min_duration = ${AUTO_EXPLAIN_MS}', current_database());
      execute format('alter database %I set auto_explain.log_analyze = on', current_database()); end $$`);
  }
  const [{ n }] = await db.all('select count(*) as n from incidents');
  const [{ stale }] = await db.all('select count(distinct day) as stale from incident_days_stale');
  await db.close();
  const seconds = { insert: (inserted - started) / 1000, indexes: (performance.now() - inserted) / 1000 };
  pitcrew.server = await pitcrew.startServer();
  return { count: Number(n), staleDays: Number(stale), seconds, indexes: indexes.length };
}

/** One GET through the server: its time, the server's CPU for it, the body. */
async function timed(pitcrew, url) {
  const cpuBefore = cpuSeconds(pitcrew.server.pid);
  const started = performance.now();
  const res = await fetch(`${pitcrew.base}${url}`, { headers: { authorization: `Bearer ${pitcrew.token}` }, signal: AbortSignal.timeout(120_000) });
  const body = await res.text();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`GET ${url} → ${res.status}: ${body}`);
  return { ms, cpuMs: (cpuSeconds(pitcrew.server.pid) - cpuBefore) * 1000, body: JSON.parse(body) };
}

const dayText = (ms) => new Date(ms).toISOString().slice(0, 10);

async function benchStorage(kind) {
  const serverEnv = { ...env };
  if (kind === 'postgres') serverEnv.DATABASE_URL = PG_URL;
  else delete serverEnv.DATABASE_URL;
  const pitcrew = await startPitcrew({ root, env: serverEnv, tempPrefix: `pitcrew-bench-incidents-${kind}-`, ruleName: 'bench rule', progress: (line) => progress(`${kind}: ${line}`) });
  const integrations = [];
  for (const type of INTEGRATION_TYPES) integrations.push((await pitcrew.api('POST', '/api/v1/integrations', { name: `bench ${type}`, type })).id);
  const now = Date.now();
  const [tenant] = await (async () => {
    const db = await openDirect(pitcrew);
    try {
      return await db.all('select id from tenants');
    } finally {
      await db.close();
    }
  })();
  // Rules on ten of the frequent alarms (one disabled): their incidents carry them, the analytics' before/after and the candidates read them.
  const rules = new Map();
  const probe = dataSet({ tenantId: tenant.id, integrations, ruleOf: () => undefined, now });
  for (const [i, a] of probe.alarms.slice(0, 30).entries()) {
    if (i % 3 !== 0 || a.integrationId === null) continue;
    const rule = await pitcrew.api('POST', '/api/v1/rules', {
      name: `fix ${a.name}`, enabled: i !== 9,
      trigger: { type: 'alert', integrationId: a.integrationId, alarmName: a.name },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
      target: { type: 'trigger_host' },
      infrastructureType: 'On_Premise',
    });
    rules.set(a.name, rule.id);
  }
  const data = dataSet({ tenantId: tenant.id, integrations, ruleOf: (name) => rules.get(name), now });
  progress(`${kind}: seeding ${fmtInt(INCIDENTS)} resolved incidents`);
  const seeded = await seed(pitcrew, data);
  progress(`${kind}: seeded ${fmtInt(seeded.count)} in ${seeded.seconds.insert.toFixed(1)} s + ${seeded.seconds.indexes.toFixed(1)} s of indexes; ${seeded.staleDays} days stale`);

  const today = dayText(now);
  const from90 = dayText(now - (DAYS - 1) * DAY_MS);
  const topIntegration = integrations[0];
  const topAlarm = data.alarms[0].name;
  const topHost = data.hosts[0];
  const queries = [
    ['analytics 30 d', '/api/v1/incidents/analytics'],
    ['analytics 90 d', `/api/v1/incidents/analytics?from=${from90}&to=${today}`],
    ['analytics 30 d, integrationId', `/api/v1/incidents/analytics?integrationId=${topIntegration}`],
    ['analytics 90 d, integrationId', `/api/v1/incidents/analytics?from=${from90}&integrationId=${topIntegration}`],
    ['analytics 30 d, hostname', `/api/v1/incidents/analytics?hostname=${topHost}`],
    ['analytics 90 d, hostname', `/api/v1/incidents/analytics?from=${from90}&hostname=${topHost}`],
    ['analytics 30 d, alarmName', `/api/v1/incidents/analytics?alarmName=${topAlarm}`],
    ['analytics 90 d, alarmName', `/api/v1/incidents/analytics?from=${from90}&alarmName=${topAlarm}`],
    ['analytics 90 d, all three', `/api/v1/incidents/analytics?from=${from90}&integrationId=${data.alarms[0].integrationId}&alarmName=${topAlarm}&hostname=${topHost}`],
    ['candidates 30 d', '/api/v1/incidents/candidates'],
    ['candidates 90 d', `/api/v1/incidents/candidates?from=${from90}`],
    ['baseline: list, limit 50', '/api/v1/incidents?limit=50'],
  ];

  // The worst case: a million incidents landed at once (the seeding), the call made as soon as the
  // server answers; the background has just begun, the call reads what is left of its 30 days from the incidents.
  const startedAt = pitcrew.server.listeningAt;
  const cold = await timed(pitcrew, queries[0][1]);
  // Then how long the background takes to recompute all 90 days (and the cold call's share).
  const catchUp = await (async () => {
    const db = await openDirect(pitcrew);
    try {
      for (;;) {
        const [{ n }] = await db.all('select count(*) as n from incident_days_stale');
        if (Number(n) === 0) return (Date.now() - startedAt) / 1000;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await db.close();
    }
  })();
  progress(`${kind}: the background recomputed every stale day ${catchUp.toFixed(1)} s after the server started`);
  const results = [];
  for (let call = 0; call < WARM_CALLS; call++) {
    for (const [name, url] of queries) results.push({ name, ...(await timed(pitcrew, url)) });
  }
  // What a user sees: incidents resolving at a busy pace (each its own transaction, as the ingest
  // writes them) with the background running, and the dashboard called right after the last one.
  const paced = [];
  const db = await openDirect(pitcrew);
  const [first] = data.rows();
  for (let round = 0; round < PACE_ROUNDS; round++) {
    for (let n = 0; n < PACE * PACE_SECONDS; n++) {
      const at = Date.now();
      await db.insertAll([{ ...first, id: idAt(at - 60_000, Math.random), opened_at: at - 60_000, resolved_at: at, last_seen_at: at, last_fired_at: at - 60_000 }]);
      await new Promise((resolve) => setTimeout(resolve, 1000 / PACE));
    }
    paced.push(await timed(pitcrew, queries[0][1]));
  }
  await db.close();
  const check = cold.body;
  return { kind, pitcrew, seeded, cold, catchUp, paced, results, queries, check };
}

function summarise(run) {
  const rows = [['call', 'median ms', 'max ms', 'server CPU ms (median)', 'goal < 1 s']];
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
  rows.push(['worst case: 30 d at once after 1M landed at once', run.cold.ms.toFixed(0), '', run.cold.cpuMs.toFixed(0), run.cold.ms < GOAL_MS ? 'met' : 'not met (worst case)']);
  rows.push([`30 d right after ${PACE * PACE_SECONDS} resolutions at ${PACE}/s`, median(run.paced.map((r) => r.ms)).toFixed(0), Math.max(...run.paced.map((r) => r.ms)).toFixed(0),
    median(run.paced.map((r) => r.cpuMs)).toFixed(0), Math.max(...run.paced.map((r) => r.ms)) < GOAL_MS ? 'met' : 'NOT MET']);
  const failures = [];
  if (Math.max(...run.paced.map((r) => r.ms)) >= GOAL_MS) failures.push(`${run.kind}: the 30-day analytics after resolutions at ${PACE}/s took up to ${Math.max(...run.paced.map((r) => r.ms)).toFixed(0)} ms`);
  for (const [name] of run.queries) {
    const of = run.results.filter((r) => r.name === name);
    const ms = median(of.map((r) => r.ms));
    const max = Math.max(...of.map((r) => r.ms));
    const isBaseline = name.startsWith('baseline');
    rows.push([name, ms.toFixed(0), max.toFixed(0), median(of.map((r) => r.cpuMs)).toFixed(0), isBaseline ? '' : max < GOAL_MS ? 'met' : 'NOT MET']);
    if (!isBaseline && max >= GOAL_MS) failures.push(`${run.kind}: ${name} took up to ${max.toFixed(0)} ms`);
  }
  return { rows, failures };
}

async function main() {
  const runs = [];
  for (const kind of STORAGES) {
    const run = await benchStorage(kind);
    runs.push(run);
    await run.pitcrew.server.stop(15_000);
    await run.pitcrew.storage.drop();
  }
  log();
  log('pitcrew incident analytics benchmark');
  log(`  machine      ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}; code ${env.BENCH_E2E_CODE_VERSION ?? codeVersion(root)}`);
  log(`  data         ${fmtInt(INCIDENTS)} resolved incidents over ${DAYS} days, ${ALARMS} alarms (Zipf 1.1), ${HOSTS} hosts (Zipf 0.8), ${INTEGRATION_TYPES.length} integrations + webhook; one call at a time, ${WARM_CALLS} warm calls each`);
  const failures = [];
  for (const run of runs) {
    log();
    log(`  ${run.pitcrew.storage.describe}`);
    log(`  seeded ${fmtInt(run.seeded.count)} incidents: insert ${run.seeded.seconds.insert.toFixed(1)} s, ${run.seeded.indexes} indexes ${run.seeded.seconds.indexes.toFixed(1)} s; ${run.seeded.staleDays} days marked stale`);
    log(`  the background recomputed the 90 stale days ${run.catchUp.toFixed(1)} s after the server started (the worst-case call among them)`);
    log(`  cold 30 d answer: ${fmtInt(run.check.resolved)} resolved, ${fmtInt(run.check.automated)} by automation, top alarm ${run.check.frequent[0]?.alarmName} (${fmtInt(run.check.frequent[0]?.count)})`);
    const s = summarise(run);
    log(table(s.rows));
    failures.push(...s.failures);
  }
  for (const failure of failures) log(`  NOT MET: ${failure}`);
  return failures.length === 0;
}

runBench(main, number('BENCH_TIMEOUT', 1800, 10), progress);
