// What building SQLite's rows costs (store/sqlite-rows.ts): better-sqlite3's own row objects
// against raw arrays made into one compiled object literal per statement, on the same statement,
// rounds interleaved. A migrated schema's `incidents` (25 columns) read by id, BENCH_ROWS_BATCH at a
// time, as the ingest reads a batch's open incidents. Run after `npx tsc -p tsconfig.build.json`,
// on each Node to compare (`PATH=<node bin>:$PATH node bench/sqlite-rows.js`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { openStore } = await import(path.join(root, 'dist/src/store/database.js'));
const { migrateToLatest } = await import(path.join(root, 'dist/src/store/migrations.js'));
const { withObjectRows } = await import(path.join(root, 'dist/src/store/sqlite-rows.js'));
const { idAt } = await import(path.join(root, 'dist/src/store/ids.js'));

const ROWS = Number(process.env.BENCH_ROWS ?? 12_000);
const BATCH = Number(process.env.BENCH_ROWS_BATCH ?? 120);
const ROUNDS = Number(process.env.BENCH_ROWS_ROUNDS ?? 7);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-bench-rows-'));
const store = openStore({ dataDir: dir });
await migrateToLatest(store);
await store.close();
const db = new Database(path.join(dir, 'pitcrew.db'));
const columns = db.prepare('select name from pragma_table_info(?)').pluck().all('incidents');
const insert = db.prepare(`insert into incidents (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
const ids = [];
db.transaction(() => {
  for (let i = 0; i < ROWS; i++) {
    const at = Date.UTC(2026, 10, 1) + i * 1000;
    const row = {
      id: idAt(at), tenant_id: 'a3f1c2d4-0000-4000-8000-000000000001', integration_id: 'b4e2d3c5-0000-4000-8000-000000000002', incident_key: (i * 2654435761 % 2 ** 32).toString(16).padStart(16, '0'),
      state: 'open', alarm_name: 'HighLoad', severity: 'critical', hostname: `web-${i}`, host_key: `web-${i}`, opened_at: at, resolved_at: null, last_seen_at: at, last_fired_at: at,
      last_fingerprint: 'd3adb33fd3adb33f', occurrences: 1, resolved_by: null, resolved_by_user: null, last_fix_at: null, rule_ids: '["c5f3e4d6-0000-4000-8000-000000000003"]', execution_ids: '[]',
      execution_count: 0, last_alert_id: idAt(at), alert_count: 1, last_event_id: idAt(at), event_count: 1,
    };
    ids.push(row.id);
    insert.run(columns.map((column) => row[column]));
  }
})();

const source = `select * from incidents where id in (${Array(BATCH).fill('?').join(', ')})`;
const ways = { 'better-sqlite3 rows': db.prepare(source), 'object literals (sqlite-rows.ts)': withObjectRows(db.prepare(source)) };
const best = Object.fromEntries(Object.keys(ways).map((name) => [name, Infinity]));
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, statement] of round % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
    const started = process.hrtime.bigint();
    let rows = 0;
    for (let b = 0; b + BATCH <= ids.length; b += BATCH) {
      const got = statement.all(ids.slice(b, b + BATCH));
      rows += got.length;
      for (const row of got) sink += row.occurrences;
    }
    best[name] = Math.min(best[name], Number(process.hrtime.bigint() - started) / rows / 1000);
  }
}
db.close();
fs.rmSync(dir, { recursive: true, force: true });

const [native, built] = Object.values(best);
console.log(`SQLite rows of incidents (${columns.length} columns, ${BATCH} by id a statement), node ${process.version}, least of ${ROUNDS} rounds (${sink > 0 ? 'read' : 'none read'})`);
for (const [name, us] of Object.entries(best)) console.log(`  ${name.padEnd(34)} ${us.toFixed(2)} µs per row`);
console.log(`  object literals / better-sqlite3: ${(built / native).toFixed(2)} ×`);
