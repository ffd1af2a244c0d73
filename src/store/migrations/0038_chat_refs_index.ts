import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 42: the notifier's pass looks, every PITCREW_NOTIFY_POLL_MS, for chat messages that asked
 * for an approval since decided (notify/slack/outcome-updates.ts), starting from the deliveries
 * that kept where their message landed. Those are few (approval requests through a Slack app)
 * among every delivery ever made: a partial index holds only them, so the pass reads them alone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index notify_deliveries_message_ref on notify_deliveries (message_id) where message_ref is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('notify_deliveries_message_ref').execute();
}
