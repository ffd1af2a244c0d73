// Which b-trees (tables and indexes) each SQLite commit of a pitcrew server writes, by 8 s window:
// the WAL frames per commit, by owner. Found why bench/alerts.js fire+resolve slowed round by round
// (bench/README.md, session 41). Two parts in one file:
//
// 1. Loaded into the servers by --import, it counts. After each `commit` on a connection to a
//    pitcrew.db, a passive checkpoint: its log count is the frames that commit wrote (the WAL starts
//    again after each full checkpoint), whose page numbers the frame headers hold. When the server
//    is stopped (SIGTERM, SIGINT) it writes PREFIX.<this|baseline>.json and hard-links its database
//    beside it (copies it across file systems), since the bench deletes its directory. A checkpoint per commit changes the timing: count
//    with it, time without it.
//
//      BENCH_WAL_PAGES_OUT=/tmp/wal NODE_OPTIONS="--import $PWD/bench/wal-pages.js" \
//        BENCH_ALERTS_PATHS=fire+resolve BENCH_BASELINE_ROOT=../base node bench/alerts.js
//
// 2. Run as a script, it reports: the database's dbstat table names each page's owner.
//
//      node bench/wal-pages.js /tmp/wal.this     # or /tmp/wal.baseline
//
// The servers must load this better-sqlite3 (a baseline worktree links this node_modules).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sqlite from 'better-sqlite3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const WINDOW_MS = 8000;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

function count(prefix) {
  const out = `${prefix}.${process.cwd() === root ? 'this' : 'baseline'}`;
  const statement = Object.getPrototypeOf(new Sqlite(':memory:').prepare('select 1'));
  const run = statement.run;
  const started = performance.now();
  const windows = new Map();
  const header = Buffer.alloc(4);
  let database;
  let wal;
  let pageSize;
  let counting = false;
  statement.run = function (...parameters) {
    const result = run.apply(this, parameters);
    if (counting || !/^\s*commit\s*$/i.test(this.source) || !this.database.name.endsWith('pitcrew.db')) return result;
    counting = true;
    try {
      database = this.database.name;
      const [{ log: frames }] = this.database.pragma('wal_checkpoint(PASSIVE)');
      pageSize ??= this.database.pragma('page_size', { simple: true });
      wal ??= fs.openSync(`${database}-wal`, 'r');
      const key = Math.floor((performance.now() - started) / WINDOW_MS);
      const window = windows.get(key) ?? { commits: 0, pages: {} };
      window.commits += 1;
      for (let frame = 0; frame < frames; frame++) {
        fs.readSync(wal, header, 0, 4, WAL_HEADER + frame * (FRAME_HEADER + pageSize));
        const page = header.readUInt32BE(0);
        window.pages[page] = (window.pages[page] ?? 0) + 1;
      }
      windows.set(key, window);
    } finally {
      counting = false;
    }
    return result;
  };
  const save = () => {
    if (database === undefined) return;
    fs.writeFileSync(`${out}.json`, JSON.stringify([...windows]));
    fs.rmSync(`${out}.db`, { force: true });
    try {
      fs.linkSync(database, `${out}.db`);
    } catch (error) {
      // PREFIX on another file system than the server's data directory: a copy instead.
      if (error.code !== 'EXDEV') throw error;
      fs.copyFileSync(database, `${out}.db`);
    }
  };
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => { save(); process.exit(0); });
}

function report(prefix) {
  const db = new Sqlite(`${prefix}.db`, { readonly: true });
  const owner = new Map();
  for (const [name, page] of db.prepare('select name, pageno from dbstat').raw().iterate()) owner.set(page, name);
  const windows = JSON.parse(fs.readFileSync(`${prefix}.json`, 'utf8')).filter(([, w]) => w.commits >= 20);
  const perCommit = windows.map(([key, w]) => {
    const frames = {};
    for (const [page, n] of Object.entries(w.pages)) {
      const name = owner.get(Number(page)) ?? '(freed since)';
      frames[name] = (frames[name] ?? 0) + n / w.commits;
    }
    return { key, commits: w.commits, frames };
  });
  const last = perCommit.at(-1)?.frames ?? {};
  const names = [...new Set(perCommit.flatMap((w) => Object.keys(w.frames)))].sort((a, b) => (last[b] ?? 0) - (last[a] ?? 0));
  const cells = (value) => perCommit.map((w) => value(w).toFixed(1).padStart(7)).join('');
  console.log(`WAL frames per commit, by owner; windows of ${WINDOW_MS / 1000} s (commits):`);
  console.log(`${''.padEnd(36)}${perCommit.map((w) => `${w.key}(${w.commits})`.padStart(7)).join('')}`);
  for (const name of names) {
    if (perCommit.every((w) => (w.frames[name] ?? 0) < 0.05)) continue;
    console.log(`${name.padEnd(36)}${cells((w) => w.frames[name] ?? 0)}`);
  }
  console.log(`${'total'.padEnd(36)}${cells((w) => Object.values(w.frames).reduce((a, b) => a + b, 0))}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv[2]) {
    console.error('usage: node bench/wal-pages.js PREFIX.this|PREFIX.baseline');
    process.exit(2);
  }
  report(process.argv[2]);
} else if (process.env.BENCH_WAL_PAGES_OUT && process.argv.includes('server')) {
  count(process.env.BENCH_WAL_PAGES_OUT);
}
