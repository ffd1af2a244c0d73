import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase as KyselySqliteDatabase, type SqliteStatement } from 'kysely';
import type pg from 'pg';
import { BackgroundCheckpoints, type CheckpointWorkerEntry } from './checkpointer.js';
import { serverDurability, walDurability, type Durability } from './durability.js';
import { withObjectRows } from './sqlite-rows.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface StoreOptions {
  /** PostgreSQL connection string; absent selects SQLite in dataDir. */
  databaseUrl?: string | undefined;
  dataDir: string;
  sqliteBusyTimeoutMs?: number;
  /** PostgreSQL only: told of each connection the server ended (a failover, pg_terminate_backend). */
  onConnectionLost?: ((error: Error) => void) | undefined;
  /**
   * SQLite only: checkpoints on a thread of their own (store/checkpointer.ts) instead of in the
   * commit that fills the WAL; `onFailure` is told once if the thread fails (checkpoints then run
   * in the commits again). The server's store has it; short-lived commands' stores do not need it.
   */
  backgroundCheckpoints?: { onFailure(reason: string): void; entry?: CheckpointWorkerEntry } | undefined;
}

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, for logs: the SQLite file or the PostgreSQL host/database (no password). */
  location: string;
  /** How group commits (ingest, execution ledger) become durable without holding the event loop. */
  durability: Durability;
  /** PostgreSQL only: a connection of its own, for session-scoped locks that must outlive queries. */
  dedicatedConnection?: () => Promise<pg.Client>;
  /**
   * SQLite only: SQLite's online backup of the live database into `target`, consistent while
   * writes go on (backups/backup.ts). `pagesPerStep`: pages copied between turns of the event
   * loop; writes through this connection update the copy as it goes, while a write by another
   * process restarts it, so a process of its own copies everything in one step.
   */
  backup?: (target: string, pagesPerStep: number) => Promise<void>;
  close(): Promise<void>;
}

let postgresDriver: typeof pg | undefined;

/**
 * node-postgres, loaded by the first PostgreSQL store: a SQLite service never needs it (~40 ms of
 * CPU at every start, bench/README.md session 34). Synchronous (`require`), so `openStore` stays so.
 */
function loadPg(): typeof pg {
  if (postgresDriver) return postgresDriver;
  const driver = createRequire(import.meta.url)('pg') as typeof pg;
  // int8 columns hold epoch milliseconds and counts, all well inside Number's safe range.
  driver.types.setTypeParser(driver.types.builtins.INT8, (value) => Number(value));
  return (postgresDriver = driver);
}

export function openStore(options: StoreOptions): Store {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.onConnectionLost ?? (() => undefined)) : openSqlite(options);
}

function openSqlite(options: StoreOptions): Store {
  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = path.join(options.dataDir, 'pitcrew.db');
  const sqlite = new SqliteDatabase(file, { timeout: options.sqliteBusyTimeoutMs ?? 5000 });
  // WAL lets readers run beside the writer; synchronous=FULL makes every commit reach the disk
  // before we reply, so an accepted event survives a crash or power loss. Group commits sync the
  // WAL off the event loop instead, with the same guarantee (store/durability.ts).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // A statement that writes many rows inside a transaction (a group commit's inserts, the update
  // that resolves a batch's incidents) keeps the pages it changes in a statement journal, to undo
  // itself alone. Past 64 KiB SQLite spills that journal to a temporary file: created, written and
  // deleted once per statement, which random alarm keys made every resolution batch. In memory
  // instead: 28 → 19 µs per incident resolved (bench/README.md, session 40). Temporary tables are
  // in memory too; big sorts still spill to files, migrations keep their journals in files
  // (migrations.ts), and pitcrew never runs VACUUM (which would build its copy in memory).
  sqlite.pragma('temp_store = MEMORY');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const durability = walDurability(`${file}-wal`);
  const background = options.backgroundCheckpoints;
  const checkpoints = background && new BackgroundCheckpoints(sqlite, file, options.sqliteBusyTimeoutMs ?? 5000, background.onFailure, background.entry);
  const close = async () => {
    await checkpoints?.stop();
    durability.close();
    await db.destroy();
  };
  const backup = async (target: string, pagesPerStep: number) => {
    await sqlite.backup(target, { progress: () => pagesPerStep });
  };
  return { db, dialect: 'sqlite', location: file, durability, backup, close };
}

/**
 * Kysely prepares every statement again on each query; preparing costs more than running most of
 * ours. Statements are reused by their SQL text (bounded: least recently used out first), and
 * their rows built by sqlite-rows.ts.
 * The connection stays on the main thread: on a worker thread each trip waited for the busy event
 * loop and group commits took ~4.3 ms instead of ~1.5 ms (11.0k against 14.8k events/s, bench/).
 * The whole ingest transaction on a worker thread with a connection of its own freed the main
 * thread (98 % -> ~60 % busy) but left throughput where it was (~15-16k events/s), at the price of
 * immediate transactions and busy-handler waits on both connections: not kept either.
 * Safe because Kysely runs one statement at a time on the connection and never streams here.
 */
/** Statements longer than this are prepared for their one use (a group commit's usual ones are far shorter). */
const MAX_CACHED_SOURCE = 64 * 1024;

function withStatementCache(sqlite: SqliteDatabase.Database, capacity = 500): KyselySqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const prepare = (source: string) => {
    let statement = cache.get(source);
    if (statement) {
      cache.delete(source);
    } else {
      statement = withObjectRows(sqlite.prepare(source));
      // A fan-out's inserts of thousands of rows: rare, each of another size, and large prepared.
      if (source.length > MAX_CACHED_SOURCE) return statement;
      if (cache.size >= capacity) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return statement;
  };
  return new Proxy(sqlite, { get: (target, property) => (property === 'prepare' ? prepare : Reflect.get(target, property, target)) });
}

/**
 * node-postgres reports a connection the server ended (a failover, a restart, pg_terminate_backend:
 * 57P01 "terminating connection due to administrator command") as an 'error' event on its Client,
 * whether or not a query was running, and an 'error' event nobody listens to is thrown as an
 * uncaught exception: the process dies. The pool listens only while a client is idle (its 'error'
 * event, https://node-postgres.com/apis/pool); a client checked out (a Kysely transaction, a group
 * commit between its trips) has no listener unless we add one, so every client gets one for life
 * when the pool connects it (node-postgres' maintainers' advice: brianc/node-postgres#2439,
 * #3202). The query under way still fails and its caller answers 503 or retries; the broken
 * client is not queryable any more, so its release drops it from the pool.
 */
function openPostgres(databaseUrl: string, onConnectionLost: (error: Error) => void): Store {
  const driver = loadPg();
  const pool = new driver.Pool({ connectionString: databaseUrl, max: 10 });
  // A client reports one loss twice (the server's 57P01, then the socket's end): told once.
  const watch = (client: pg.Client) => client.once('error', onConnectionLost).on('error', () => undefined);
  pool.on('error', () => undefined); // the same error, also given to the client's own listener
  pool.on('connect', watch);
  const url = new URL(databaseUrl);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const dedicatedConnection = async () => {
    const client = new driver.Client({ connectionString: databaseUrl });
    watch(client);
    await client.connect();
    return client;
  };
  return { db, dialect: 'postgres', location: `${url.hostname}:${url.port || 5432}${url.pathname}`, durability: serverDurability, dedicatedConnection, close: () => db.destroy() };
}

export async function ping(store: Store): Promise<void> {
  await sql`select 1`.execute(store.db);
}
