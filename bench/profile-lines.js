// The source lines with the most samples in V8 .cpuprofile files (as `node --cpu-prof` writes them,
// e.g. with BENCH_CPU_PROF=1), from each function's line ticks. Where bench/profile-summary.js says
// which function costs, this says which line of it. Several files are summed as one. The lines'
// text is read from the files as they are now: run it before dist/ is rebuilt.
//
//   node bench/profile-lines.js FILE.cpuprofile [more.cpuprofile ...] [top=25]
//
// PROFILE_LINES_MATCH (a regular expression) keeps only the lines whose text matches, e.g.
// PROFILE_LINES_MATCH='\.\.\.[A-Za-z_(]' for object and array spreads: on Node 20 a spread of two
// objects, or one followed by a new key, takes V8's slow path (bench/README.md, session 39).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const top = args.length > 1 && /^\d+$/.test(args[args.length - 1]) ? Number(args.pop()) : 25;
if (args.length === 0) {
  console.error('usage: node bench/profile-lines.js <file.cpuprofile> [more.cpuprofile ...] [top]');
  process.exit(2);
}
const match = process.env.PROFILE_LINES_MATCH ? new RegExp(process.env.PROFILE_LINES_MATCH) : undefined;

const sources = new Map();
/** The text of a line of a script the profile names (file: URLs only; '' when it cannot be read). */
function lineOf(url, line) {
  if (!sources.has(url)) {
    let lines = [];
    try {
      lines = fs.readFileSync(url.startsWith('file:') ? fileURLToPath(url) : url, 'utf8').split('\n');
    } catch {
      // node: internals and code that is gone: shown without text
    }
    sources.set(url, lines);
  }
  return sources.get(url)[line - 1] ?? '';
}

const ticks = new Map();
let busy = 0;
for (const file of args) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const node of profile.nodes) {
    const { url, functionName } = node.callFrame;
    if (!['(idle)', '(program)', '(garbage collector)'].includes(functionName)) busy += node.hitCount;
    if (!url) continue;
    for (const { line, ticks: count } of node.positionTicks ?? []) {
      const text = lineOf(url, line).trim();
      if (match && !match.test(text)) continue;
      const key = `${url.replace(/^.*\/(dist|node_modules|bench)\//, '$1/')}:${line}\t${text.slice(0, 120)}`;
      ticks.set(key, (ticks.get(key) ?? 0) + count);
    }
  }
}

console.log(`${args.length === 1 ? args[0] : `${args.length} profiles`}: ${busy} busy samples (not idle, program or GC)`);
for (const [key, count] of [...ticks].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  const [where, text] = key.split('\t');
  console.log(`${String(count).padStart(7)} ${((100 * count) / busy).toFixed(1).padStart(5)} %  ${where}  ${text}`);
}
