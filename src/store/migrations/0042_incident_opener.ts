import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: a new alarm wrote, besides its incident, an idempotency key per rule (its alert's
 * fingerprint), a row and four b-tree entries that only a re-sent notification ever reads. The
 * incident the alert opens now keeps what that key kept (`opened_by`: the alert's fingerprint and
 * the event of each rule), read with the incident in the ingest's first trip, and the key is not
 * written (incidents/openers.ts). Null for an incident an import or a webhook call opened, and for
 * those opened before this migration (their alerts' keys were written).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('incidents').addColumn('opened_by', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('incidents').dropColumn('opened_by').execute();
}
