import { PostgresAdapter, sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Host names compare without case, everywhere (engine/decide.ts hostKey, RFC 4343): executions and
 * escalations get the key beside the name they keep, as hosts (hostname_key) and events (host_key)
 * already have, so `?hostname=web-1` finds the runs of a host once named WEB-1. A stored column,
 * not lower() in queries: SQLite's lower() folds ASCII only and PostgreSQL's folds by locale, so
 * the two would disagree; the key is computed once, by one function, where the row is written.
 * No index: the filter was unindexed before too, and each index is one more b-tree for every
 * execution the ingest transaction writes (see 0006).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // lower() under the "C" collation folds ASCII only on PostgreSQL, as SQLite's lower() does:
  // the same key hostKey() makes (host names are ASCII: agents/routes.ts enrols no other).
  const key = db.getExecutor().adapter instanceof PostgresAdapter ? sql`lower(trim(hostname) collate "C")` : sql`lower(trim(hostname))`;
  for (const table of ['executions', 'escalations']) {
    await db.schema.alterTable(table).addColumn('host_key', 'text', (c) => c.notNull().defaultTo('')).execute();
    await db.updateTable(table).set({ host_key: key }).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['escalations', 'executions']) await db.schema.alterTable(table).dropColumn('host_key').execute();
}
