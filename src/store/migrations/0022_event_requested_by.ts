import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 36.8: a person can raise a rule with Run now (source `manual`). Such an event records who
 * asked, as JSON ({"type":"token","id","name"}: identity/requested-by.ts); null for every event a
 * trigger raised by itself, and for every event before this migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('requested_by', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('requested_by').execute();
}
