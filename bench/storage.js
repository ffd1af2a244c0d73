// Where the server under test stores events: a fresh SQLite file in a temp dir, or a dedicated
// PostgreSQL database created for this run and dropped afterwards (no other database is touched).
// openReader() gives a read-only view of it for the benchmark's own queries (plain SQL, no
// parameters; PostgreSQL returns bigint columns as strings).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { onCleanup } from './procs.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/**
 * @param {string | undefined} adminUrl  DATABASE_URL given to the bench, or undefined for SQLite
 * @param {string} dataDir               the server's PITCREW_DATA_DIR
 */
export async function prepareStorage(adminUrl, dataDir) {
  if (!adminUrl) {
    const file = path.join(dataDir, 'pitcrew.db');
    return {
      kind: 'SQLite',
      describe: `SQLite ${file} (WAL; group commits synced by fdatasync before replies)`,
      serverEnv: {},
      countEvents: async () => {
        const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
        try {
          return db.prepare('select count(*) as n from events').get().n;
        } finally {
          db.close();
        }
      },
      openReader: async () => {
        // Read-only, in WAL mode beside the server's writer: it never blocks the server.
        const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
        let open = true;
        const close = async () => {
          if (open) db.close();
          open = false;
        };
        onCleanup(close);
        return { all: async (sql) => db.prepare(sql).all(), close };
      },
      drop: async () => undefined,
    };
  }

  const url = new URL(adminUrl);
  if (!/^postgres(ql)?:$/.test(url.protocol)) throw new Error('DATABASE_URL must be a postgres:// URL');
  if (!LOOPBACK.has(url.hostname)) throw new Error(`the bench only talks to loopback addresses; DATABASE_URL host is ${url.hostname}`);
  const name = `pitcrew_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(`drop database if exists "${name}" with (force)`);
    } finally {
      await c.end();
    }
  };
  onCleanup(drop);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${name}`;
  const pgVersion = await (async () => {
    const c = new pg.Client({ connectionString: dbUrl.toString() });
    await c.connect();
    try {
      return (await c.query('show server_version')).rows[0].server_version;
    } finally {
      await c.end();
    }
  })();
  return {
    kind: 'PostgreSQL',
    describe: `PostgreSQL ${pgVersion} at ${url.hostname}:${url.port || 5432}, dedicated database ${name} (dropped at the end)`,
    serverEnv: { DATABASE_URL: dbUrl.toString() },
    countEvents: async () => {
      const c = new pg.Client({ connectionString: dbUrl.toString() });
      await c.connect();
      try {
        return Number((await c.query('select count(*) as n from events')).rows[0].n);
      } finally {
        await c.end();
      }
    },
    openReader: async () => {
      const c = new pg.Client({ connectionString: dbUrl.toString() });
      await c.connect();
      let open = true;
      const close = async () => {
        if (open) await c.end();
        open = false;
      };
      // Registered after drop, so it runs before it (cleanups run in reverse order).
      onCleanup(close);
      return { all: async (sql) => (await c.query(sql)).rows, close };
    },
    drop,
  };
}
