// Helpers shared by the benchmarks (bench/run.js, bench/e2e.js): settings from the environment,
// the code version measured, the plain-text tables they print, and pitcrew's /metrics.
/* global fetch, AbortSignal */
import { execFileSync } from 'node:child_process';

/** A numeric setting from the environment: the fallback when unset, an error when below min. */
export function envNumber(env, name, fallback, min) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

/** The commit measured, and whether the working tree differed from it. */
export function codeVersion(root, paths = ['src', 'package.json', 'bin']) {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', ...paths], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n').filter(Boolean).length;
    return `git ${head}${dirty ? ` + ${dirty} uncommitted change(s) in ${paths.map((p) => (p.includes('.') ? p : `${p}/`)).join(', ')}` : ''}`;
  } catch {
    return 'git version unknown';
  }
}

export function fmtInt(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

export function fmtMs(n) {
  return Number.isFinite(n) ? n.toFixed(2) : 'n/a';
}

export function fmtPct(n) {
  return Number.isFinite(n) ? `${(n * 100).toFixed(1)} %` : 'n/a';
}

/** Rows of cells; the first row is the header. The first two columns are left-aligned, the rest right-aligned. */
export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  return rows
    .map((r, ri) => {
      const cells = r.map((c, i) => (i < 2 ? String(c ?? '').padEnd(widths[i]) : String(c ?? '').padStart(widths[i])));
      const line = cells.join('  ').trimEnd();
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

/** Runs fn over items with at most `limit` at once. */
export async function inParallel(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A pitcrew server's /metrics, as Prometheus text. */
export async function fetchMetrics(base) {
  return (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
}

/**
 * The upper bound of the bucket that holds quantile q of a Prometheus histogram (e.g. 0.05 for
 * "≤ 50 ms"), from its `_bucket` lines in `text`; undefined when it has no observation.
 */
export function histogramBound(text, name, q) {
  const buckets = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} ([0-9.eE+-]+)$`, 'gm'))]
    .map((m) => ({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), count: Number(m[2]) }));
  const total = buckets.at(-1)?.count ?? 0;
  return total === 0 ? undefined : buckets.find((b) => b.count >= q * total).le;
}
