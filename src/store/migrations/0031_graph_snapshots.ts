import { PostgresAdapter, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 39: the pictures a graph_snapshot execution captured (snapshots/repository.ts), each with
 * its execution and event (an event's fix lists the snapshots taken beside it), deleted with the
 * execution by retention. The image is kept in the row (a blob; bytea on PostgreSQL), capped in
 * size by the writer (MAX_SNAPSHOT_BYTES): a few hundred KB for a chart, read whole when served.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('graph_snapshots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('execution_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('image', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('graph_snapshots_execution').on('graph_snapshots').columns(['execution_id', 'position']).execute();
  await db.schema.createIndex('graph_snapshots_event').on('graph_snapshots').columns(['event_id']).execute();
  // A fix's "capture graphs too" is a graph_snapshot execution of the same rule and event beside it
  // (actions/snapshot/companion.ts): 1 marks it, so the rule's action limit counts the fix alone.
  await db.schema.alterTable('executions').addColumn('companion', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('companion').execute();
  await db.schema.dropTable('graph_snapshots').execute();
}
