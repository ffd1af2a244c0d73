import { sql, type Kysely, type Transaction } from 'kysely';
import type { Store } from './database.js';
import type { Database } from './schema.js';

/**
 * A transaction that reads, then writes, from a process beside the running server (the CLI's
 * bootstrap and migrate). On SQLite a plain (deferred) transaction takes the write lock only at
 * its first write, and if the server committed since the transaction's first read, SQLite answers
 * "database is locked" at once, without waiting (the busy timeout does not apply to that case):
 * the server writes every second (its heartbeat), so `pitcrew bootstrap` beside a running server
 * failed now and then, more often on a busy machine. BEGIN IMMEDIATE takes the lock first, waiting
 * up to the busy timeout. PostgreSQL's transactions need nothing more.
 */
export async function writeTransaction<T>(store: Pick<Store, 'db' | 'dialect'>, work: (db: Kysely<Database> | Transaction<Database>) => Promise<T>): Promise<T> {
  if (store.dialect === 'postgres') return store.db.transaction().execute(work);
  return store.db.connection().execute(async (db) => {
    await sql`begin immediate`.execute(db);
    try {
      const result = await work(db);
      await sql`commit`.execute(db);
      return result;
    } catch (error) {
      // SQLite may have rolled back already (a full disk): the work's error is the one to tell.
      await sql`rollback`.execute(db).catch(() => undefined);
      throw error;
    }
  });
}
