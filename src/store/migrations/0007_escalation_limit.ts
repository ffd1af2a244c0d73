import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The action limit an escalation was raised under (its `max`; the window is window_end -
 * window_start). The notifier read the rule's limit when it sent the message, a second or more
 * later: a limit changed meanwhile was misreported, and a limit removed meanwhile meant no
 * message at all. Null on rows written before this migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('escalations').addColumn('limit_max', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('escalations').dropColumn('limit_max').execute();
}
