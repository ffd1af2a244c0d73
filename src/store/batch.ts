import type { CompiledQuery, DatabaseConnection, Kysely, QueryResult } from 'kysely';
import type { Durability } from './durability.js';
import type { Database } from './schema.js';

/**
 * Runs statements that do not depend on each other's results, in order, on one connection.
 * Group commits are written as a few such trips (reads, then writes with the commit) rather than
 * statement by statement through Kysely's transaction API, which costs a promise round per query.
 */
export async function runBatch(connection: DatabaseConnection, queries: CompiledQuery[]): Promise<QueryResult<unknown>[]> {
  const results: QueryResult<unknown>[] = [];
  for (const query of queries) results.push(await connection.executeQuery(query));
  return results;
}

/** A group-commit transaction written as trips: the first opens it, the last commits it. */
export class BatchTransaction {
  constructor(
    private readonly connection: DatabaseConnection,
    private readonly durability: Durability,
  ) {}

  /** Begins the transaction and runs the reads in the same trip; returns the reads' results. */
  async begin(reads: CompiledQuery[]): Promise<QueryResult<unknown>[]> {
    const results = await runBatch(this.connection, [...this.durability.begin, ...reads]);
    return results.slice(this.durability.begin.length);
  }

  read(queries: CompiledQuery[]): Promise<QueryResult<unknown>[]> {
    return runBatch(this.connection, queries);
  }

  /** Writes and commits in one trip; returns the writes' results. The commit is durable once `Durability.flush()` resolves. */
  async commit(writes: CompiledQuery[]): Promise<QueryResult<unknown>[]> {
    const results = await runBatch(this.connection, [...writes, ...this.durability.commit]);
    return results.slice(0, writes.length);
  }

  /**
   * Never throws: the error that made us roll back is the one to report. SQLite may have rolled
   * back by itself already (SQLITE_FULL, SQLITE_IOERR), and then its ROLLBACK fails; Kysely's
   * SQLite connection throws that synchronously, which a `.catch()` on the call would not see.
   * Every statement runs, so `synchronous` is set back to FULL for the writes that follow.
   */
  async rollback(): Promise<void> {
    for (const statement of this.durability.rollback) {
      try {
        await this.connection.executeQuery(statement);
      } catch {
        // Nothing left to roll back.
      }
    }
  }
}

/** What a group-commit transaction returned, and when its commit is on disk. */
export interface Committed<T> {
  value: T;
  durable: Promise<void>;
}

/**
 * Runs `work` as one group-commit transaction on a connection of its own, rolled back if it
 * throws. Resolves at the commit, with `durable` settling once the commit is on disk: the next
 * batch can run while this one is synced, and nobody may be told of it before `durable`.
 */
export async function inBatchTransaction<T>(db: Kysely<Database>, durability: Durability, work: (tx: BatchTransaction) => Promise<T>): Promise<Committed<T>> {
  const value = await db.getExecutor().provideConnection(async (connection) => {
    const tx = new BatchTransaction(connection, durability);
    try {
      return await work(tx);
    } catch (error) {
      await tx.rollback();
      throw error;
    }
  });
  return { value, durable: durability.flush() };
}
