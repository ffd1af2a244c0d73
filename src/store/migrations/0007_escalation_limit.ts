import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * What an escalation was raised under: the action limit's `max` (the window is window_end -
 * window_start) and what the limit kept pitcrew from doing. The notifier read both from the rule
 * when it sent the message, a second or more later: a limit or action changed meanwhile was
 * misreported, and a limit removed meanwhile meant no message at all. Null on older rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('escalations').addColumn('limit_max', 'integer').execute();
  await db.schema.alterTable('escalations').addColumn('not_done', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('escalations').dropColumn('not_done').execute();
  await db.schema.alterTable('escalations').dropColumn('limit_max').execute();
}
