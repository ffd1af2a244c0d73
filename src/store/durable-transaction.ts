import type { Kysely, Transaction } from 'kysely';
import type { Durability } from './durability.js';
import type { Database } from './schema.js';

/**
 * A Kysely transaction made durable as group commits are (durability.ts): on SQLite its COMMIT
 * runs with synchronous=NORMAL and the WAL is then synced off the event loop. Resolves once the
 * commit is on disk, as a plain transaction under synchronous=FULL would, but without holding the
 * loop for the sync: a rule changed through the API held it for about half of each PATCH's time
 * (bench/api.js). The connection is held from `relax` to `restore`, so no other statement runs
 * with the relaxed setting.
 */
export async function durableTransaction<T>(db: Kysely<Database>, durability: Durability, work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  const value = await db.connection().execute(async (connection) => {
    for (const statement of durability.relax) await connection.executeQuery(statement);
    try {
      return await connection.transaction().execute(work);
    } finally {
      for (const statement of durability.restore) await connection.executeQuery(statement);
    }
  });
  await durability.flush();
  return value;
}
