// What each connection keeps on the V8 heap, by constructor: two heap snapshots of one process (before and
// after N connections) and optionally two of a baseline process (bench/README.md, session 36: heap41).
//
//   node bench/heap-diff.mjs N pitcrew-empty.heapsnapshot pitcrew-full.heapsnapshot [bare-empty.heapsnapshot bare-full.heapsnapshot]
//
// Snapshots come from `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=DIR` (BENCH_FLEET_SERVER_FLAGS, BENCH_FLEET_BARE_FLAGS)
// and a SIGUSR2 to the server with none and with all N agents connected (BENCH_FLEET_RESTART=0, a long BENCH_FLEET_IDLE_SECONDS).
// Prints bytes per connection (self sizes, summed by node type and constructor or function name), largest difference first.
import fs from 'node:fs';

function sums(file) {
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8'));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const byKey = new Map();
  let total = 0;
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]];
    // Strings and numbers by type alone; code by type (its names are functions, not what a connection keeps).
    const key = /string|number|code/.test(type) ? type : `${type}:${snapshot.strings[snapshot.nodes[i + nameAt]].slice(0, 50)}`;
    const size = snapshot.nodes[i + sizeAt];
    const entry = byKey.get(key) ?? { count: 0, size: 0 };
    entry.count += 1;
    entry.size += size;
    byKey.set(key, entry);
    total += size;
  }
  return { byKey, total };
}

function perConnection(empty, full, n) {
  const a = sums(empty);
  const b = sums(full);
  const byKey = new Map();
  for (const key of new Set([...a.byKey.keys(), ...b.byKey.keys()])) {
    const before = a.byKey.get(key) ?? { count: 0, size: 0 };
    const after = b.byKey.get(key) ?? { count: 0, size: 0 };
    byKey.set(key, { count: (after.count - before.count) / n, size: (after.size - before.size) / n });
  }
  return { byKey, total: (b.total - a.total) / n };
}

const [nText, ...files] = process.argv.slice(2);
const n = Number(nText);
if (!(n > 0) || (files.length !== 2 && files.length !== 4)) {
  process.stderr.write('usage: node bench/heap-diff.mjs N empty.heapsnapshot full.heapsnapshot [baseline-empty baseline-full]\n');
  process.exit(2);
}
const main = perConnection(files[0], files[1], n);
const base = files.length === 4 ? perConnection(files[2], files[3], n) : { byKey: new Map(), total: 0 };
process.stdout.write(`bytes per connection: ${main.total.toFixed(0)}${files.length === 4 ? `; baseline ${base.total.toFixed(0)}` : ''}\n`);
const zero = { count: 0, size: 0 };
const rows = [...new Set([...main.byKey.keys(), ...base.byKey.keys()])]
  .map((key) => ({ key, a: main.byKey.get(key) ?? zero, b: base.byKey.get(key) ?? zero }))
  .filter(({ a, b }) => Math.abs(a.size - b.size) >= 4)
  .sort((x, y) => Math.abs(y.a.size - y.b.size) - Math.abs(x.a.size - x.b.size));
process.stdout.write(`${['objects', 'bytes', 'baseline objects', 'bytes', 'difference', 'type:constructor'].join('\t')}\n`);
for (const { key, a, b } of rows.slice(0, 40)) {
  process.stdout.write(`${[a.count.toFixed(2), a.size.toFixed(0), b.count.toFixed(2), b.size.toFixed(0), (a.size - b.size).toFixed(0), key].join('\t')}\n`);
}
