// What resolving an incident costs the database, in process (issue 38: the ingest's resolution).
// Each batch opens 100 incidents (a commit) and resolves them (a commit, timed), with the ingest's
// own statement shapes, over a database holding BENCH_RESOLUTION_SEED resolved incidents first.
// Variants drop one index or trigger before the batches, to rank what each costs. Prints per
// resolution: this process's CPU (SQLite does the work in process), PostgreSQL's backend CPU,
// and the WAL written. Run after `npx tsc -p tsconfig.build.json`.
//
//   node bench/incident-resolution.js                       # SQLite, every variant
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/incident-resolution.js
//   BENCH_RESOLUTION_VARIANTS=all,incidents_key_resolved node bench/incident-resolution.js
//   BENCH_RESOLUTION_VARIANTS=all,before:0041_incident_resolution_writes node bench/incident-resolution.js   # against the schema before
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { openStore } = await import(path.join(root, 'dist/src/store/database.js'));
const { migrateToLatest } = await import(path.join(root, 'dist/src/store/migrations.js'));
const { idAt } = await import(path.join(root, 'dist/src/store/ids.js'));

const env = process.env;
const SEED = Number(env.BENCH_RESOLUTION_SEED ?? 20_000);
const BATCHES = Number(env.BENCH_RESOLUTION_BATCHES ?? 60);
const REPEATS = Number(env.BENCH_RESOLUTION_REPEATS ?? 2);
const PER_BATCH = 100;
const TENANT = 't-bench';
const INTEGRATION = 'i-bench';

const postgresUrl = env.DATABASE_URL;
const dialect = postgresUrl ? 'postgres' : 'sqlite';

/** Every index and trigger a resolution writes (a variant drops one); `all` keeps them. */
async function droppable(store) {
  const names = await indexNames(store);
  const triggers = (await triggerNames(store)).filter((t) => t.includes('stale'));
  return ['all', ...names.filter((n) => n.startsWith('incidents_') && n !== 'incidents_pkey'), ...triggers.map((t) => `trigger:${t}`)];
}

async function indexNames(store) {
  const rows = dialect === 'postgres'
    ? await raw(store, `select indexname as name from pg_indexes where tablename = 'incidents'`)
    : await raw(store, `select name from sqlite_master where type = 'index' and tbl_name = 'incidents' and sql is not null`);
  return rows.map((r) => r.name).sort();
}

async function triggerNames(store) {
  const rows = dialect === 'postgres'
    ? await raw(store, `select tgname as name from pg_trigger where tgrelid = 'incidents'::regclass and not tgisinternal`)
    : await raw(store, `select name from sqlite_master where type = 'trigger' and tbl_name = 'incidents'`);
  return rows.map((r) => r.name).sort();
}

async function raw(store, text, parameters = []) {
  const { CompiledQuery } = await import('kysely');
  return (await store.db.executeQuery(CompiledQuery.raw(text, parameters))).rows;
}

// BENCH_RESOLUTION_SHAPE=alerts: bench/alerts.js's fire+resolve instead (keys in ascending order, one alarm,
// a batch's hosts side by side): every index's entries of a batch land together.
const ALERTS_SHAPE = env.BENCH_RESOLUTION_SHAPE === 'alerts';
let clock = Date.UTC(2026, 0, 1);
let sequence = 0;
const key = () => (ALERTS_SHAPE ? (++sequence).toString(16).padStart(16, '0') : randomBytes(8).toString('hex'));

function incident(now, host) {
  const hostname = ALERTS_SHAPE ? `flap-${Math.floor(sequence / 100)}-${sequence % 100}` : `host-${host}`;
  return {
    id: idAt(now), tenant_id: TENANT, integration_id: INTEGRATION, incident_key: key(), state: 'open', alarm_name: ALERTS_SHAPE ? 'NodeDiskFull' : `alarm-${host % 50}`,
    severity: 'critical', hostname, host_key: hostname, opened_at: now, resolved_at: null, last_seen_at: now,
    last_fired_at: now, last_fingerprint: key(), occurrences: 1, resolved_by: null, resolved_by_user: null, last_fix_at: null,
    rule_ids: '[]', execution_ids: '[]', execution_count: 0, last_alert_id: null, alert_count: 1, last_event_id: null, event_count: 1,
  };
}

const COLUMNS = Object.keys(incident(0, 0));

function insertText(count) {
  let n = 0;
  const row = () => `(${COLUMNS.map(() => (dialect === 'postgres' ? `$${++n}` : '?')).join(', ')})`;
  return `insert into incidents (${COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: count }, row).join(', ')}`;
}

// The ingest's resolution (incidents/writes.ts RESOLVING): every touched column and the state's.
const RESOLVING = [['severity', 'text'], ['last_seen_at', 'bigint'], ['last_fired_at', 'bigint'], ['last_fingerprint', 'text'], ['occurrences', 'integer'],
  ['rule_ids', 'text'], ['execution_ids', 'text'], ['execution_count', 'integer'], ['last_alert_id', 'text'], ['alert_count', 'integer'],
  ['last_event_id', 'text'], ['event_count', 'integer'], ['state', 'text'], ['resolved_at', 'bigint'], ['resolved_by', 'text'], ['resolved_by_user', 'text']];

function resolveText(count) {
  let n = 0;
  const placeholder = (type) => (dialect === 'postgres' ? `$${++n}::${type}` : '?');
  const row = () => `(${[placeholder('text'), ...RESOLVING.map(([, type]) => placeholder(type))].join(', ')})`;
  const assignments = RESOLVING.map(([column], i) => `"${column}" = "v"."column${i + 2}"`).join(', ');
  return `update "incidents" set ${assignments} from (values ${Array.from({ length: count }, row).join(', ')}) as "v" where "incidents"."id" = "v"."column1"`;
}

/** A connection of one's own: better-sqlite3's handle, or one pg client (its backend's pid for its CPU). */
async function connect(where) {
  if (dialect === 'sqlite') {
    const { default: Sqlite } = await import('better-sqlite3');
    const db = new Sqlite(path.join(where, 'pitcrew.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // No checkpoint while measuring: the WAL's size is then what the commits wrote.
    db.pragma('wal_autocheckpoint = 0');
    const cache = new Map();
    const prepared = (text) => cache.get(text) ?? cache.set(text, db.prepare(text)).get(text);
    return {
      run: async (text, parameters = []) => { prepared(text).run(...parameters); },
      all: async (text, parameters = []) => prepared(text).all(...parameters),
      wal: async () => fs.statSync(path.join(where, 'pitcrew.db-wal')).size,
      serverCpu: async () => 0,
      close: async () => db.close(),
      checkpoint: async () => db.pragma('wal_checkpoint(TRUNCATE)'),
    };
  }
  const client = new pg.Client({ connectionString: where });
  await client.connect();
  const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid;
  const lsn = async () => (await client.query(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint as n`)).rows[0].n;
  return {
    run: async (text, parameters = []) => { await client.query(text, parameters); },
    all: async (text, parameters = []) => (await client.query(text, parameters)).rows,
    wal: async () => Number(await lsn()),
    serverCpu: async () => {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks (100 Hz) to ms
    },
    close: () => client.end(),
    checkpoint: async () => { await client.query('checkpoint'); },
  };
}

async function freshDatabase() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-bench-resolution-'));
  if (dialect === 'sqlite') {
    const store = openStore({ dataDir });
    await migrateToLatest(store);
    return { store, where: dataDir, drop: async () => { await store.close(); fs.rmSync(dataDir, { recursive: true, force: true }); } };
  }
  const name = `pitcrew_bench_resolution_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const store = openStore({ databaseUrl: url.toString(), dataDir });
  await migrateToLatest(store);
  return {
    store, where: url.toString(),
    drop: async () => { await store.close(); await admin.query(`drop database "${name}" with (force)`); await admin.end(); fs.rmSync(dataDir, { recursive: true, force: true }); },
  };
}

async function dropOne(c, variant, store) {
  if (variant === 'all') return;
  // The schema before a migration of this build: its down.
  if (variant.startsWith('before:')) {
    const migration = await import(path.join(root, `dist/src/store/migrations/${variant.slice('before:'.length)}.js`));
    await migration.down(store.db);
    return;
  }
  if (variant.startsWith('trigger:')) {
    const name = variant.slice('trigger:'.length);
    await c.run(dialect === 'postgres' ? `drop trigger ${name} on incidents` : `drop trigger ${name}`);
  } else await c.run(`drop index ${variant}`);
}

/** Open then resolve `count` incidents, in batches; the resolutions' costs when `measure`. */
async function batches(c, count, measure) {
  const totals = { cpuMs: 0, serverMs: 0, walBytes: 0, resolved: 0 };
  for (let b = 0; b < count; b++) {
    const rows = Array.from({ length: PER_BATCH }, () => incident(clock++, Math.floor(Math.random() * 5000)));
    await c.run('begin');
    await c.run(insertText(rows.length), rows.flatMap((r) => COLUMNS.map((col) => r[col])));
    await c.run('commit');
    const resolvedAt = clock + 60_000;
    const parameters = rows.flatMap((r) => [r.id, r.severity, resolvedAt, r.last_fired_at, r.last_fingerprint, 1, '[]', '[]', 0, null, 2, null, 2, 'resolved', resolvedAt, 'tool', null]);
    const cpu = process.cpuUsage();
    const server = await c.serverCpu();
    const wal = await c.wal();
    await c.run('begin');
    await c.run(resolveText(rows.length), parameters);
    await c.run('commit');
    if (!measure) continue;
    const used = process.cpuUsage(cpu);
    totals.cpuMs += (used.user + used.system) / 1000;
    totals.serverMs += (await c.serverCpu()) - server;
    const walAfter = await c.wal();
    totals.walBytes += walAfter >= wal ? walAfter - wal : walAfter;
    totals.resolved += rows.length;
  }
  return totals;
}

async function seed(c) {
  for (let done = 0; done < SEED; done += 1000) {
    const rows = Array.from({ length: 1000 }, () => ({ ...incident(clock++, Math.floor(Math.random() * 5000)), state: 'resolved', resolved_by: 'tool' }));
    for (const r of rows) r.resolved_at = r.opened_at + 600_000;
    await c.run('begin');
    for (let i = 0; i < rows.length; i += 100) {
      const chunk = rows.slice(i, i + 100);
      await c.run(insertText(chunk.length), chunk.flatMap((r) => COLUMNS.map((col) => r[col])));
    }
    await c.run('commit');
  }
}

async function measure(variant) {
  const database = await freshDatabase();
  const c = await connect(database.where);
  try {
    await seed(c);
    await dropOne(c, variant, database.store);
    await batches(c, 10, false);
    await c.checkpoint();
    const t = await batches(c, BATCHES, true);
    return { cpu: (t.cpuMs * 1000) / t.resolved, server: (t.serverMs * 1000) / t.resolved, wal: t.walBytes / t.resolved };
  } finally {
    await c.close();
    await database.drop();
  }
}

async function main() {
  const probe = await freshDatabase();
  const all = await droppable(probe.store);
  await probe.drop();
  const variants = env.BENCH_RESOLUTION_VARIANTS ? env.BENCH_RESOLUTION_VARIANTS.split(',') : all;
  const [load] = os.loadavg();
  process.stdout.write(`${dialect}${ALERTS_SHAPE ? ", bench/alerts.js's shape" : ''}, ${SEED} resolved incidents seeded, ${BATCHES} batches of ${PER_BATCH} resolutions, ${REPEATS} passes, load ${load.toFixed(1)}\n`);
  const results = new Map(variants.map((v) => [v, []]));
  // Passes interleave the variants, so that the machine's load falls on each alike; the least of each is kept.
  for (let pass = 0; pass < REPEATS; pass++) {
    for (const variant of variants) {
      results.get(variant).push(await measure(variant));
      process.stderr.write(`bench: pass ${pass + 1}, ${variant}: ${JSON.stringify(results.get(variant).at(-1))}\n`);
    }
  }
  const least = (list, field) => Math.min(...list.map((r) => r[field]));
  const base = results.get('all') ?? results.get(variants[0]);
  process.stdout.write(`${'without'.padEnd(34)} ${'client CPU µs'.padStart(14)} ${'server CPU µs'.padStart(14)} ${'WAL bytes'.padStart(10)}\n`);
  for (const [variant, list] of results) {
    const cpu = least(list, 'cpu');
    const server = least(list, 'server');
    const delta = (x, y) => (base && variant !== 'all' ? ` (${(x - y >= 0 ? '+' : '')}${(x - y).toFixed(1)})` : '');
    process.stdout.write(`${variant.padEnd(34)} ${cpu.toFixed(1).padStart(7)}${delta(cpu, least(base, 'cpu'))} ${server.toFixed(1).padStart(7)}${delta(server, least(base, 'server'))} ${least(list, 'wal').toFixed(0).padStart(8)}\n`);
  }
  process.stdout.write(`load at the end ${os.loadavg()[0].toFixed(1)}\n`);
}

await main();
