import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

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
