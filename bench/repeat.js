// Runs one benchmark several times in a row and summarises its target lines: each target's figure in
// every run, their median, and in how many runs it was met. One run of a ratio benchmark on a shared
// or virtual machine moves by ±10-30 % (bench/README.md, "Noise"); a goal is judged on the median.
//
//   node bench/repeat.js K node bench/fleet.js          # the environment is passed on to every run
//   BENCH_REPEAT_DIR=/tmp/runs node bench/repeat.js 3 node bench/run.js
//
// Each run's whole output is kept in BENCH_REPEAT_DIR (a new temporary directory by default), named
// by its number. A target line is one with "→" and a verdict, "met" or "NOT MET", as every bench
// prints them; its figure is the number after the arrow or, when there is none, the last before it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { table } from './common.js';

const NUMBER = /(-?\d[\d,]*(?:\.\d+)?)\s*(%|×|µs|ms|s\b|\/s)?/g;

/** A target line's label, figure (number and unit) and verdict; undefined for any other line. */
function parseTarget(line) {
  const arrow = line.indexOf('→');
  if (arrow < 0) return undefined;
  const verdict = /(NOT MET|\bmet)\b[^→]*$/.exec(line.slice(arrow + 1));
  if (!verdict) return undefined;
  const left = line.slice(0, arrow).trim();
  const right = line.slice(arrow + 1, arrow + 1 + verdict.index);
  const after = [...right.matchAll(NUMBER)][0];
  const before = [...left.matchAll(NUMBER)].at(-1);
  const found = after ?? before;
  if (!found) return undefined;
  const label = (after ? left : left.slice(0, before.index)).trim().replace(/\s{2,}/g, ' ');
  return { label, value: Number(found[1].replaceAll(',', '')), unit: found[2] ?? '', met: verdict[1] === 'met' };
}

function runOnce({ command, args, count, dir }, index) {
  const file = path.join(dir, `run-${index + 1}.txt`);
  const out = fs.createWriteStream(file);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      out.write(chunk);
    });
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      out.end();
      process.stderr.write(`bench-repeat: run ${index + 1} of ${count} ended (exit ${code}); output in ${file}\n`);
      resolve({ code, targets: text.split('\n').map(parseTarget).filter(Boolean) });
    });
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const [countText, command, ...args] = process.argv.slice(2);
  const count = Number(countText);
  if (!Number.isInteger(count) || count < 1 || !command) {
    process.stderr.write('usage: node bench/repeat.js K COMMAND [ARGS...]   (K runs of COMMAND, then the median of each target)\n');
    process.exit(2);
  }
  const dir = process.env.BENCH_REPEAT_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-bench-repeat-'));
  fs.mkdirSync(dir, { recursive: true });
  const runs = [];
  for (let i = 0; i < count; i++) runs.push(await runOnce({ command, args, count, dir }, i));
  // Targets by label, in the order the first run printed them.
  const byLabel = new Map();
  runs.forEach((run, i) => {
    for (const t of run.targets) {
      if (!byLabel.has(t.label)) byLabel.set(t.label, { unit: t.unit, values: new Array(count).fill(undefined), met: 0 });
      const entry = byLabel.get(t.label);
      entry.values[i] = t.value;
      if (t.met) entry.met += 1;
    }
  });
  const rows = [['target', ...runs.map((_r, i) => `run ${i + 1}`), 'median', 'met in']];
  for (const [label, e] of byLabel) {
    const seen = e.values.filter((v) => v !== undefined);
    rows.push([label, ...e.values.map((v) => (v === undefined ? '-' : `${v}`)), `${Number(median(seen).toFixed(2))} ${e.unit}`.trim(), `${e.met} of ${seen.length}`]);
  }
  process.stdout.write(`\n${count} runs of: ${[command, ...args].join(' ')} (exit codes ${runs.map((r) => r.code).join(', ')}); outputs in ${dir}\n\n`);
  process.stdout.write(`${table(rows)}\n`);
  if (runs.some((r) => r.code !== 0)) process.exitCode = 1;
}

await main();
