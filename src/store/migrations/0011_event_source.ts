import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 15: events come from more than the webhook (integrations' alerts, schedules). Each event
 * says which source raised it; the events before this migration all came from webhooks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('source', 'text', (c) => c.notNull().defaultTo('webhook')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('source').execute();
}
