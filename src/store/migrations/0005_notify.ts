import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Notification channels and their durable outbox (docs/notifications.md).
 *
 * notify_pending   executions that reached a terminal state, written in the ledger's transaction;
 *                  the collector groups them by event into one message per fan-out run
 * notify_messages  one row per thing to tell people (a run, an escalation, a runbook), unique by
 *                  dedupe_key so a repeat (two nodes, a retry) never makes a second message
 * notify_deliveries one row per (message, channel, audience): the unit that is sent, retried with
 *                  backoff and leased by one node at a time
 * notify_attempts  every try of a delivery or a test message, for "last delivered" / "last error"
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('notify_channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    // JSON of the settings that are not secret; secrets are in `secrets`, encrypted (AES-256-GCM).
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text')
    // JSON array of rule ids this channel hears about; null: every rule.
    .addColumn('rule_ids', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('last_delivered_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .execute();
  await db.schema.createIndex('notify_channels_tenant_name').on('notify_channels').columns(['tenant_id', 'name']).unique().execute();

  await db.schema
    .createTable('notify_contacts')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('emails', 'text', (c) => c.notNull())
    .addColumn('channel_ids', 'text', (c) => c.notNull())
    .addColumn('email_channel_id', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('notify_pending')
    .addColumn('execution_id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_pending_event').on('notify_pending').columns(['event_id']).execute();

  await db.schema
    .createTable('notify_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('rule_id', 'text')
    // Set for a runbook email: the email_runbook execution whose result is this message's delivery.
    .addColumn('execution_id', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_messages_execution').on('notify_messages').columns(['execution_id']).execute();

  await db.schema
    .createTable('notify_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().references('notify_messages.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    // 'channel': to the channel's own recipients; 'contacts': by its SMTP server to `recipients`.
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('recipients', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_deliveries_once').on('notify_deliveries').columns(['message_id', 'channel_id', 'audience']).unique().execute();
  await db.schema.createIndex('notify_deliveries_due').on('notify_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('notify_deliveries_channel').on('notify_deliveries').columns(['channel_id']).execute();

  await db.schema
    .createTable('notify_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text')
    .addColumn('message_kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_attempts_channel').on('notify_attempts').columns(['channel_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['notify_attempts', 'notify_deliveries', 'notify_messages', 'notify_pending', 'notify_contacts', 'notify_channels']) {
    await db.schema.dropTable(table).execute();
  }
}
