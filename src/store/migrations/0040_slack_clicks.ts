import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Slack's clicks, kept from the 200 until they are decided (notify/slack/click-inbox.ts). Slack
 * wants its answer within 3 seconds and never sends a click again once answered, while deciding
 * one calls Slack's users.info: a node stopping in between lost the click. A click is written
 * before the 200, deleted once decided and its clicker told; a node that finds one whose claim
 * has lapsed (its node stopped) decides it. The channel is named, not copied: its bot token stays
 * sealed in notify_channels. A handful of rows at most, read whole: no index but the key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('slack_clicks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    // The Slack channel whose app's signing secret verified it: its bot token reads the clicker.
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('execution_id', 'text', (c) => c.notNull())
    // approve | reject
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('slack_user_id', 'text', (c) => c.notNull())
    .addColumn('response_url', 'text')
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    // Until when the node deciding it holds it (epoch ms); past it, any node may.
    .addColumn('claimed_until', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('slack_clicks').execute();
}
