import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Every alert an integration delivers writes an idempotency key (its fingerprint, per rule), so
 * each entered four b-trees: the table, its key (rule, key), `idempotency_keys_event` (migration
 * 0008) and `idempotency_keys_created`, which only the sweeper's purge of keys past their 24 h
 * read, once a minute. Event ids are UUIDv7 of the time the event was received, and a key is
 * written (or taken over) with its event in the same transaction: the purge finds old keys by
 * their event's id in `idempotency_keys_event` instead (executions/sweeper.ts), and this index goes.
 * The writer still reads a key only while its `created_at` is within 24 h (ingest/safety-reads.ts).
 * The previous release, run on this schema (docs/operations.md), still purges by `created_at`:
 * without the index, a scan of the last day's keys once a minute.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('idempotency_keys_created').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['created_at']).execute();
}
