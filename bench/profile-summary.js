// Summarises V8 .cpuprofile files (as written by `node --cpu-prof`, e.g. by BENCH_CPU_PROF=1 npm run bench):
// self time by function and by area (pitcrew's dist/ folder, npm package, node internals). Several
// files (e.g. the ten agents of bench/e2e.js) are summed as one.
//
//   node bench/profile-summary.js bench/profiles/CPU.<...>.cpuprofile [more.cpuprofile ...] [top=25]
//
// PROFILE_FROM and PROFILE_TO (seconds from each profile's start) keep only the samples between
// them, e.g. to leave out the server's start-up: print the busy milliseconds per second with
// PROFILE_TIMELINE=1 to find the window.
import fs from 'node:fs';

const args = process.argv.slice(2);
const top = args.length > 1 && /^\d+$/.test(args[args.length - 1]) ? Number(args.pop()) : 25;
const files = args;
if (files.length === 0) {
  console.error('usage: node bench/profile-summary.js <file.cpuprofile> [more.cpuprofile ...] [top]');
  process.exit(2);
}
const file = files.length === 1 ? files[0] : `${files.length} profiles`;

// Node ids are per file: they are prefixed with the file's index.
const byId = new Map();
const selfUs = new Map();
const profile = { nodes: [] };
const from = Number(process.env.PROFILE_FROM ?? 0) * 1e6;
const to = Number(process.env.PROFILE_TO ?? Infinity) * 1e6;
files.forEach((f, fi) => {
  const p = JSON.parse(fs.readFileSync(f, 'utf8'));
  for (const n of p.nodes) {
    const node = { ...n, id: `${fi}:${n.id}`, children: (n.children ?? []).map((c) => `${fi}:${c}`) };
    byId.set(node.id, node);
    profile.nodes.push(node);
  }
  const busyPerSecond = [];
  let at = 0;
  for (let i = 0; i < p.samples.length; i++) {
    at += p.timeDeltas[i] ?? 0;
    const id = `${fi}:${p.samples[i]}`;
    if (byId.get(id).callFrame.functionName !== '(idle)') busyPerSecond[Math.floor(at / 1e6)] = (busyPerSecond[Math.floor(at / 1e6)] ?? 0) + (p.timeDeltas[i] ?? 0);
    if (at < from || at > to) continue;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  if (process.env.PROFILE_TIMELINE === '1') console.log(`${f}: busy ms per second: ${Array.from(busyPerSecond, (us, s) => `${s}:${Math.round((us ?? 0) / 1000)}`).join(' ')}`);
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

function area(url) {
  if (!url) return '(native / V8)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return `npm:${pkg[1]}`;
  const dist = url.match(/\/dist\/([^/]+)\//);
  if (dist) return `pitcrew:${dist[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

const fns = new Map();
const areas = new Map();
for (const [id, us] of selfUs) {
  const { callFrame } = byId.get(id);
  const name = callFrame.functionName || '(anonymous)';
  const where = callFrame.url ? `${callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${callFrame.lineNumber + 1}` : '';
  const key = `${name} ${where}`.trim();
  fns.set(key, (fns.get(key) ?? 0) + us);
  const a = ['(idle)', '(program)', '(garbage collector)'].includes(name) ? name : area(callFrame.url);
  areas.set(a, (areas.get(a) ?? 0) + us);
}

// Total time (self + callees) per function, counting a function once per stack even if recursive.
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = (id) => {
  const { callFrame } = byId.get(id);
  const where = callFrame.url ? `${callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${callFrame.lineNumber + 1}` : '';
  return `${callFrame.functionName || '(anonymous)'} ${where}`.trim();
};
const totals = new Map();
for (const [id, us] of selfUs) {
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const key = keyOf(at);
    if (seen.has(key)) continue;
    seen.add(key);
    totals.set(key, (totals.get(key) ?? 0) + us);
  }
}

const pct = (us) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
const ms = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
console.log('\nself time by area');
for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${pct(us)} ${ms(us)}  ${a}`);
console.log(`\ntop ${top} functions by self time`);
for (const [k, us] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${pct(us)} ${ms(us)}  ${k}`);
console.log(`\ntop ${top} functions of pitcrew (dist/) by total time (self + callees)`);
for (const [k, us] of [...totals].filter(([k]) => /^\S+ dist\/(?!esm|cjs|compile|toad)/.test(k)).sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${pct(us)} ${ms(us)}  ${k}`);
