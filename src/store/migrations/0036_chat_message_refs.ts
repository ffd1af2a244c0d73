import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 42: where a chat delivery landed, so the message can be updated later (an approval decided,
 * expired or rejected): Slack's {channel, ts} from chat.postMessage, Teams' {serviceUrl,
 * conversationId, activityId} from the Bot Connector. JSON; null for channels that cannot update.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notify_deliveries').addColumn('message_ref', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notify_deliveries').dropColumn('message_ref').execute();
}
