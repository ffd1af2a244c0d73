// Webhook latency during scheduled backups (bench/README.md): p50/p99 of webhooks at a fixed rate
// on a single node (SQLite) without a backup schedule, then on the same data directory with
// PITCREW_BACKUP_SCHEDULE every second, so SQLite's online backup runs back to back in the
// service's own process (src/backups/schedule.ts) the whole time the same load is measured. The
// run without backups is the baseline measured in the same run, on the same server build, data and ports.
// Only 127.0.0.1 is ever targeted.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeVersion, envNumber, fetchMetrics, fmtInt, fmtMs, fmtPct, table } from './common.js';
import { runLoad } from './load.js';
import { runBench } from './procs.js';
import { startPitcrew } from './pitcrew.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const number = (name, fallback, min) => envNumber(process.env, name, fallback, min);

const SEED = Math.round(number('BENCH_BACKUP_SEED', 20_000, 0));
const RATE = Math.round(number('BENCH_BACKUP_RATE', 300, 1));
const SECONDS = number('BENCH_BACKUP_SECONDS', 10, 1);
const ROUNDS = Math.round(number('BENCH_BACKUP_ROUNDS', 2, 1));
const CONNECTIONS = Math.round(number('BENCH_BACKUP_CONNECTIONS', 20, 1));
const BUDGET_SECONDS = number('BENCH_TIMEOUT', 300 + ROUNDS * 2 * (SECONDS + 40), 10);
// Events as monitoring tools send them, with 2 KiB of metadata, so the database the backups copy grows.
const BODY = JSON.stringify({ HostName: 'web-1', AlarmName: 'disk_full', Severity: 'critical', MetaData: { Detail: 'x'.repeat(2048) } });
const EVERY_SECOND = '* * * * * *';

const log = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`bench: ${line}\n`);

/** Scheduled backups written whole so far, from the server's own counter. */
async function backupsTaken(metricsBase) {
  const text = await fetchMetrics(metricsBase);
  const count = (outcome) => Number(new RegExp(`^pitcrew_backups_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { ok: count('ok'), failed: count('failed') };
}

async function main() {
  const codeAtStart = codeVersion(root);
  const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  // Backups on a schedule are the single node's (SQLite): PostgreSQL is backed up with its own tools.
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const pitcrew = await startPitcrew({ root, env, tempPrefix: 'pitcrew-backup-bench-', ruleName: 'backup bench', progress });
  const url = `${pitcrew.base}${pitcrew.webhookPath}`;
  let server = pitcrew.server;
  const load = (amount, rate) => runLoad({ url, body: BODY, connections: CONNECTIONS, amount, rate, watchdogMs: (amount / (rate ?? 500) + 60) * 1000, stopWhen: server.exited });

  progress(`seeding ${fmtInt(SEED)} events`);
  const seeded = SEED > 0 ? await load(SEED) : { ok: 0 };
  const restart = async (extraEnv) => {
    await server.stop();
    server = await pitcrew.startServer({ extraEnv });
  };
  const measure = async (withBackups) => {
    await restart(withBackups ? { PITCREW_BACKUP_SCHEDULE: EVERY_SECOND, PITCREW_BACKUP_KEEP: '1' } : {});
    await load(Math.min(RATE * 2, 2000), RATE); // warm-up
    const before = await backupsTaken(pitcrew.metricsBase);
    const r = await load(RATE * SECONDS, RATE);
    const after = await backupsTaken(pitcrew.metricsBase);
    r.backups = after.ok - before.ok;
    r.backupsFailed = after.failed - before.failed;
    if (!server.alive()) throw new Error(`pitcrew exited:\n${server.output()}`);
    return r;
  };

  const without = [];
  const during = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    progress(`round ${round + 1}/${ROUNDS}: without backups, then with a backup every second`);
    without.push(await measure(false));
    during.push(await measure(true));
  }
  const median = (runs) => [...runs].sort((a, b) => a.p99 - b.p99)[Math.floor((runs.length - 1) / 2)];
  const [a, b] = [median(without), median(during)];
  const refused = [...without, ...during].reduce((n, r) => n + r.non2xx + r.errors + r.unanswered, 0);
  const backups = during.reduce((n, r) => n + r.backups, 0);
  const failed = during.reduce((n, r) => n + r.backupsFailed, 0);

  log(`pitcrew webhook latency during scheduled backups: ${codeAtStart}; ${os.cpus().length} CPUs; load average before ${loadBefore}; SQLite`);
  log(`${fmtInt(seeded.ok)} events seeded (2 KiB of metadata each); webhooks at ${fmtInt(RATE)}/s for ${SECONDS} s over ${CONNECTIONS} connections; PITCREW_BACKUP_SCHEDULE "${EVERY_SECOND}" (back to back)`);
  log();
  log(table([
    ['webhooks', 'figure', 'no backup (baseline)', 'backups running', 'backups / none'],
    [`median of ${ROUNDS} rounds`, 'accepted/s', fmtInt(a.throughput), fmtInt(b.throughput), fmtPct(b.throughput / a.throughput)],
    ['', 'p50 ms', fmtMs(a.p50), fmtMs(b.p50), `${(b.p50 / a.p50).toFixed(2)} ×`],
    ['', 'p99 ms', fmtMs(a.p99), fmtMs(b.p99), `${(b.p99 / a.p99).toFixed(2)} ×`],
    ['', 'p99 range', `${fmtMs(Math.min(...without.map((r) => r.p99)))}–${fmtMs(Math.max(...without.map((r) => r.p99)))}`, `${fmtMs(Math.min(...during.map((r) => r.p99)))}–${fmtMs(Math.max(...during.map((r) => r.p99)))}`],
  ]));
  log();
  log(`backups written whole while measured: ${backups} (${failed} failed) in ${fmtInt(ROUNDS * SECONDS)} s`);
  const ok = refused === 0 && backups > 0 && failed === 0;
  log(`verification: ${refused} webhooks refused or unanswered, ${backups} backups taken → ${ok ? 'OK' : 'FAILED'}`);
  return ok;
}

runBench(main, BUDGET_SECONDS, progress);
