// What the incidents table's layout costs on SQLite (issue 38), better-sqlite3 alone: 100-row
// inserts of new incidents (the ingest's `new alarms`: one alarm name, a batch's hosts side by
// side, random keys) and 100-row updates of re-firing ones (`update … from (values …)`, as
// incidents/writes.ts), each batch committed and synced (WAL, synchronous=FULL). The schema is
// that of a database migrated by this checkout's build (`npx tsc -p tsconfig.build.json`); each
// variant changes it, and the variants alternate round by round. Prints process CPU per row.
//
//   node bench/incident-table.js base 'drop=tenant' 'drop=all' wor cluster
//
// Variants: `base` (as migrated); `drop=NAME+NAME` (without incidents_NAME; `all`: every index
// but incidents_open_key, the one the ingest reads and the uniqueness of open incidents);
// `wor` (WITHOUT ROWID, clustered on id); `cluster` (WITHOUT ROWID on (tenant_id, id) in place of
// incidents_tenant, with a unique index on id). BENCH_TABLE_ROUNDS (3), BENCH_TABLE_BATCHES (150),
// BENCH_TABLE_PRESENT (rows present first: 20,000).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';

const env = process.env;
const ROUNDS = Number(env.BENCH_TABLE_ROUNDS ?? 3);
const BATCHES = Number(env.BENCH_TABLE_BATCHES ?? 150);
const PRESENT = Number(env.BENCH_TABLE_PRESENT ?? 20_000);
const SIZE = 100;
const variants = process.argv.length > 2 ? process.argv.slice(2) : ['base', 'drop=all'];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-bench-table-'));

async function migratedSchema() {
  const { openStore } = await import('../dist/src/store/database.js');
  const { migrateToLatest } = await import('../dist/src/store/migrations.js');
  const store = openStore({ dataDir: path.join(dir, 'schema') });
  await migrateToLatest(store);
  await store.close();
  const db = new SqliteDatabase(path.join(dir, 'schema', 'pitcrew.db'), { readonly: true });
  const ddl = db.prepare(`select type, name, sql from sqlite_master where tbl_name in ('incidents', 'incident_days_stale') and sql is not null order by type = 'table' desc`).all();
  db.close();
  return ddl;
}

function create(file, variant, ddl) {
  const db = new SqliteDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const dropped = /drop=([\w+]+)/.exec(variant)?.[1]?.split('+') ?? [];
  const skipped = (type, name) => (dropped.includes('all') ? type === 'index' && name !== 'incidents_open_key' : dropped.some((d) => name === `incidents_${d}`))
    || (variant === 'cluster' && name === 'incidents_tenant');
  for (const { type, name, sql } of ddl) {
    if (skipped(type, name)) continue;
    let text = sql;
    if (type === 'table' && name === 'incidents' && variant === 'wor') text = `${text.replace('"id" text primary key', '"id" text primary key not null')} without rowid`;
    if (type === 'table' && name === 'incidents' && variant === 'cluster') text = `${text.replace('"id" text primary key', '"id" text not null').replace(/\)$/, ', primary key ("tenant_id", "id")) without rowid')}`;
    db.exec(text);
    if (type === 'table' && name === 'incidents' && variant === 'cluster') db.exec('create unique index incidents_id on incidents (id)');
  }
  return db;
}

const COLUMNS = ['id', 'tenant_id', 'integration_id', 'incident_key', 'state', 'alarm_name', 'severity', 'hostname', 'host_key', 'opened_at', 'last_seen_at', 'last_fired_at', 'last_fingerprint', 'occurrences', 'rule_ids', 'execution_ids', 'execution_count', 'last_alert_id', 'alert_count', 'last_event_id', 'event_count'];
const OCCURRED = ['severity', 'last_seen_at', 'last_fired_at', 'last_fingerprint', 'occurrences', 'last_alert_id', 'alert_count', 'last_event_id', 'event_count'];
const hex = (bytes) => crypto.randomBytes(bytes).toString('hex');
const idAt = (ms) => `${ms.toString(16).padStart(12, '0')}7${hex(10).slice(0, 19)}`;

function subject(variant, ddl) {
  const file = path.join(dir, `${variant.replace(/\W/g, '_')}.db`);
  const db = create(file, variant, ddl);
  const tenant = crypto.randomUUID();
  const integration = crypto.randomUUID();
  let clock = Date.now() - 30 * 86_400_000;
  let seq = 0;
  const row = () => {
    const at = ++clock;
    const host = `new-${Math.floor(seq / SIZE)}-${seq++ % SIZE}`;
    return [idAt(at), tenant, integration, hex(20), 'open', 'NodeDiskFull', 'critical', host, host, at, at, at, hex(8), 1, '[]', '[]', 0, idAt(at), 1, idAt(at), 1];
  };
  const insert = db.prepare(`insert into incidents (${COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: SIZE }, () => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ')}`);
  const update = db.prepare(`update "incidents" set ${OCCURRED.map((c, i) => `"${c}" = "v"."column${i + 2}"`).join(', ')} from (values ${Array.from({ length: SIZE }, () => `(${['?', ...OCCURRED].map(() => '?').join(', ')})`).join(', ')}) as "v" where "incidents"."id" = "v"."column1"`);
  const begin = db.prepare('begin');
  const commit = db.prepare('commit');
  const inTransaction = (statement, parameters) => { begin.run(); statement.run(parameters); commit.run(); };
  const batch = () => Array.from({ length: SIZE }, row);
  for (let n = 0; n < PRESENT / SIZE; n++) inTransaction(insert, batch().flat());
  const hot = batch();
  inTransaction(insert, hot.flat());
  let occurrences = 1;
  return {
    variant,
    inserts: () => Array.from({ length: BATCHES }, () => batch().flat()),
    insert: (parameters) => inTransaction(insert, parameters),
    updates: () => Array.from({ length: BATCHES }, () => { const at = ++clock; occurrences += 1; return hot.flatMap((r) => [r[0], 'critical', at, at, hex(8), occurrences, idAt(at), occurrences, idAt(at), occurrences]); }),
    update: (parameters) => inTransaction(update, parameters),
    close: () => db.close(),
  };
}

const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const timed = (work, inputs) => { const start = cpu(); for (const input of inputs) work(input); return (cpu() - start) / (inputs.length * SIZE); };

const ddl = await migratedSchema();
const subjects = variants.map((v) => subject(v, ddl));
const results = new Map();
for (let round = 1; round <= ROUNDS; round++) {
  for (const s of round % 2 === 1 ? subjects : [...subjects].reverse()) {
    const insert = timed(s.insert, s.inserts());
    const update = timed(s.update, s.updates());
    results.set(s.variant, [...(results.get(s.variant) ?? []), [insert, update]]);
    console.log(`round ${round}  ${s.variant.padEnd(28)} insert ${insert.toFixed(1).padStart(6)} µs/row   re-firing update ${update.toFixed(1).padStart(6)} µs/row`);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`\nload average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; median of ${ROUNDS} rounds of ${BATCHES} batches of ${SIZE}, ${PRESENT} rows present first`);
for (const [variant, rounds] of results) console.log(`${variant.padEnd(28)} insert ${median(rounds.map((r) => r[0])).toFixed(1).padStart(6)} µs/row   re-firing update ${median(rounds.map((r) => r[1])).toFixed(1).padStart(6)} µs/row`);
for (const s of subjects) s.close();
fs.rmSync(dir, { recursive: true, force: true });
