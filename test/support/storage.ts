import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { TestEnv } from './app.js';

/**
 * Makes the next write to `table` fail for real, the way each database fails in production, and
 * returns what mends it. SQLite: another process holds the write lock past the busy timeout
 * (SQLITE_BUSY; reads through the service wait too). PostgreSQL: the table is gone, so statements
 * on it fail and their transaction rolls back.
 */
export async function breakStorage(env: TestEnv, table: 'events' | 'executions' = 'events'): Promise<() => Promise<void>> {
  if (env.dialect === 'sqlite') {
    const other = new SqliteDatabase(path.join(env.database.dataDir, 'pitcrew.db'));
    other.pragma('busy_timeout = 0');
    other.exec('BEGIN EXCLUSIVE');
    return async () => {
      other.exec('ROLLBACK');
      other.close();
    };
  }
  await sql`alter table ${sql.table(table)} rename to ${sql.table(`${table}_away`)}`.execute(env.store.db);
  return async () => {
    await sql`alter table ${sql.table(`${table}_away`)} rename to ${sql.table(table)}`.execute(env.store.db);
  };
}
