// The ingest's incident bookkeeping alone, in process (issue 38): per batch of 100 alarms, the
// reads of their incidents (IncidentReads), the book (IncidentBook: sight, chain an alert and an
// event each), its writes (incidentWrites), in a group-commit transaction made durable as the
// ingest makes it. Reports this process's CPU per alarm (user + system), which on PostgreSQL is
// pitcrew's side alone. Against built trees (`npx tsc -p tsconfig.build.json`), alternating them
// round by round so that both see the same load:
//
//   node bench/incident-book.js [ROOT ...]        (default: this checkout)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/incident-book.js . /tmp/pre
//
// BENCH_BOOK_VARIANTS (`new alarms,re-firing`; also `fire+resolve`: a batch of new alarms, then a batch resolving them), BENCH_BOOK_ROUNDS (3), BENCH_BOOK_BATCHES (100 per variant and round), BENCH_BOOK_PRESENT
// (incidents present before the rounds: 20,000). BENCH_BOOK_WAL=1 (SQLite): instead of the CPU, the WAL
// pages each batch's commit wrote, per alarm (the WAL emptied before each batch): what load does not move.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import pg from 'pg';

const env = process.env;
const ROUNDS = Number(env.BENCH_BOOK_ROUNDS ?? 3);
const BATCHES = Number(env.BENCH_BOOK_BATCHES ?? 100);
const PRESENT = Number(env.BENCH_BOOK_PRESENT ?? 20_000);
const SIZE = 100;
const VARIANTS = env.BENCH_BOOK_VARIANTS ? env.BENCH_BOOK_VARIANTS.split(',') : ['new alarms', 're-firing'];
const roots = (process.argv.length > 2 ? process.argv.slice(2) : ['.']).map((r) => path.resolve(r));

async function setUp(root, index) {
  const dist = (file) => import(path.join(root, 'dist/src', file));
  const [{ openStore }, { migrateToLatest }, { inBatchTransaction }, { Statements }, { IncidentReads }, { incidentWrites }, { newId }] = await Promise.all(
    ['store/database.js', 'store/migrations.js', 'store/batch.js', 'store/statements.js', 'incidents/reads.js', 'incidents/writes.js', 'store/ids.js'].map(dist),
  );
  let databaseUrl;
  if (env.DATABASE_URL) {
    const name = `pitcrew_bench_book_${process.pid}_${index}`;
    const admin = new pg.Client({ connectionString: env.DATABASE_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    await admin.end();
    databaseUrl = env.DATABASE_URL.replace(/\/[^/]*$/, `/${name}`);
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-bench-book-'));
  const store = openStore({ databaseUrl, dataDir });
  await migrateToLatest(store);
  const statements = new Statements(store.dialect);
  const tenantId = newId();
  const integrationId = newId();
  let clock = Date.now() - 30 * 86_400_000;
  let seq = 0;
  const sighting = (key, host) => {
    const at = ++clock;
    return { tenantId, integrationId, receivedAt: at, repeat: { by: 'notification', fingerprint: crypto.randomBytes(8).toString('hex') },
      observation: { incidentKey: key, alarmName: 'NodeDiskFull', hostname: host, severity: 'critical', state: 'firing', at } };
  };
  const fresh = () => Array.from({ length: SIZE }, () => { const n = seq++; return sighting(crypto.createHash('sha1').update(String(n)).digest('hex').slice(0, 16), `new-${Math.floor(n / SIZE)}-${n % SIZE}`); });
  const hot = Array.from({ length: SIZE }, (_, i) => `hot-${i}`);
  const batch = async (sightings) => {
    const committed = await inBatchTransaction(store.db, store.durability, async (tx) => {
      const reads = new IncidentReads(statements, store.dialect, sightings, clock);
      const book = reads.book(await tx.begin(reads.queries));
      for (const s of sightings) {
        const id = book.sight(s);
        if (id !== null) {
          book.link(id, [], []);
          book.chain(id, 'alert', newId());
          book.chain(id, 'event', newId());
        }
      }
      await tx.commit(incidentWrites(statements, store.dialect, book));
    });
    await committed.durable;
    return sightings.length;
  };
  const resolved = (fired) => fired.map((s) => {
    const at = ++clock;
    return { ...s, receivedAt: at, repeat: { by: 'notification', fingerprint: crypto.randomBytes(8).toString('hex') }, observation: { ...s.observation, state: 'resolved', at } };
  });
  const fireAndResolve = async () => {
    const fired = fresh();
    return (await batch(fired)) + (await batch(resolved(fired)));
  };
  for (let n = 0; n < PRESENT / SIZE; n++) await batch(fresh());
  const refire = () => batch(hot.map((key, i) => sighting(key, `web-${i}`)));
  await refire();
  return { root, store, dataDir, work: { 'new alarms': () => batch(fresh()), 're-firing': refire, 'fire+resolve': fireAndResolve } };
}

const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const subjects = [];
for (const [i, root] of roots.entries()) subjects.push(await setUp(root, i));
if (env.BENCH_BOOK_WAL === '1') {
  const pragma = async (s, text) => (await s.store.db.executeQuery(CompiledQuery.raw(text))).rows[0];
  for (const variant of VARIANTS) {
    for (const s of subjects) {
      const pages = [];
      for (let b = 0; b < BATCHES; b++) {
        await pragma(s, 'pragma wal_checkpoint(TRUNCATE)');
        const alarms = await s.work[variant]();
        pages.push((await pragma(s, 'pragma wal_checkpoint(PASSIVE)')).log / alarms);
      }
      pages.sort((a, b) => a - b);
      console.log(`${variant.padEnd(12)} WAL pages per alarm: median ${pages[Math.floor(BATCHES / 2)].toFixed(2)} (least ${pages[0].toFixed(2)}, most ${pages[BATCHES - 1].toFixed(2)})  ${s.root}`);
    }
  }
  for (const s of subjects) { await s.store.close(); fs.rmSync(s.dataDir, { recursive: true, force: true }); }
  process.exit(0);
}
const results = new Map();
for (let round = 1; round <= ROUNDS; round++) {
  const order = round % 2 === 1 ? subjects : [...subjects].reverse();
  for (const variant of VARIANTS) {
    for (const s of order) {
      const start = cpu();
      let alarms = 0;
      for (let b = 0; b < BATCHES; b++) alarms += await s.work[variant]();
      const perAlarm = (cpu() - start) / alarms;
      const key = `${variant}\n${s.root}`;
      results.set(key, [...(results.get(key) ?? []), perAlarm]);
      console.log(`round ${round}  ${variant.padEnd(10)}  ${perAlarm.toFixed(1).padStart(6)} µs per alarm  ${s.root}`);
    }
  }
}
console.log(`\n${subjects[0].store.dialect}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; least (median) CPU per alarm over ${ROUNDS} rounds of ${BATCHES} batches of ${SIZE}`);
for (const [key, values] of results) {
  const [variant, root] = key.split('\n');
  const sorted = [...values].sort((a, b) => a - b);
  console.log(`${variant.padEnd(10)}  ${sorted[0].toFixed(1).padStart(6)} (${sorted[Math.floor(sorted.length / 2)].toFixed(1)}) µs  ${root}`);
}
for (const s of subjects) {
  await s.store.close();
  fs.rmSync(s.dataDir, { recursive: true, force: true });
}
