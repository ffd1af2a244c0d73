import type { Kysely } from 'kysely';
/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * History retention (retention/retention.ts) deletes old events. idempotency_keys.event_id
 * references events, so each deleted event made the database look for keys naming it: without
 * this index, a scan of every key of the last 24 hours per event deleted (EXPLAIN QUERY PLAN:
 * "SCAN idempotency_keys"), on SQLite and PostgreSQL alike. Only calls that carry an
 * Idempotency-Key write to it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('idempotency_keys_event').on('idempotency_keys').columns(['event_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('idempotency_keys_event').execute();
}
