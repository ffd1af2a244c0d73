import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

/** A list of statements for one trip to the database, where the dialect can (the SQLite worker). */
export class BatchQuery {
  constructor(readonly queries: CompiledQuery[]) {}
}

export interface BatchCapable {
  executeBatch(batch: BatchQuery): Promise<QueryResult<unknown>[]>;
}

function canBatch(connection: unknown): connection is BatchCapable {
  return typeof (connection as Partial<BatchCapable>).executeBatch === 'function';
}

/**
 * Runs statements that do not depend on each other's results, in order, on one connection:
 * in a single message to the SQLite worker, one after the other elsewhere. Measured reason:
 * a group commit made nine trips to the worker, each waiting for a busy event loop (bench/).
 */
export async function runBatch(connection: DatabaseConnection, queries: CompiledQuery[]): Promise<QueryResult<unknown>[]> {
  if (canBatch(connection)) return connection.executeBatch(new BatchQuery(queries));
  const results: QueryResult<unknown>[] = [];
  for (const query of queries) results.push(await connection.executeQuery(query));
  return results;
}
