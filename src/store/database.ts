import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { WorkerSqliteDialect } from './sqlite-dialect.js';

export type Dialect = 'sqlite' | 'postgres';

export interface StoreOptions {
  /** PostgreSQL connection string; absent selects SQLite in dataDir. */
  databaseUrl?: string | undefined;
  dataDir: string;
  sqliteBusyTimeoutMs?: number;
}

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, for logs: the SQLite file or the PostgreSQL host/database (no password). */
  location: string;
  /** PostgreSQL only: a connection of its own, for session-scoped locks that must outlive queries. */
  dedicatedConnection?: () => Promise<pg.Client>;
  close(): Promise<void>;
}

// int8 columns hold epoch milliseconds and counts, all well inside Number's safe range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openStore(options: StoreOptions): Store {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openSqlite(options);
}

function openSqlite(options: StoreOptions): Store {
  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = path.join(options.dataDir, 'pitcrew.db');
  const db = new Kysely<Database>({ dialect: new WorkerSqliteDialect({ file, busyTimeoutMs: options.sqliteBusyTimeoutMs ?? 5000 }) });
  return { db, dialect: 'sqlite', location: file, close: () => db.destroy() };
}

function openPostgres(databaseUrl: string): Store {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const url = new URL(databaseUrl);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const dedicatedConnection = async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  return { db, dialect: 'postgres', location: `${url.hostname}:${url.port || 5432}${url.pathname}`, dedicatedConnection, close: () => db.destroy() };
}

export async function ping(store: Store): Promise<void> {
  await sql`select 1`.execute(store.db);
}
