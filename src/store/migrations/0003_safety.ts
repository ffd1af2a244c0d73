import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Rule safety (docs/safety.md): what decide() reads of an alarm's recent history, the fan-out
 * hold on executions, escalations when an action limit is reached, and idempotency keys.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  const addColumns = async (table: string, columns: Array<[string, 'text' | 'integer', ((c: any) => any)?]>) => {
    for (const [name, type, build] of columns) await db.schema.alterTable(table).addColumn(name, type, build ?? ((c) => c)).execute();
  };

  await addColumns('events', [
    // The payload's host, lowercase ('' when it names none): flapping is judged per (rule, host).
    ['host_key', 'text', (c) => c.notNull().defaultTo('')],
    // firing | resolved as known after this event (carried forward when the payload says nothing).
    ['alarm_state', 'text'],
    ['state_changed', 'integer', (c) => c.notNull().defaultTo(0)],
    ['idempotency_key', 'text'],
  ]);
  await db.schema.createIndex('events_rule_host').on('events').columns(['rule_id', 'host_key', 'received_at']).execute();
  // Flapping counts state changes within a window: only the events that changed state, in order.
  await db.schema.createIndex('events_rule_host_changes').on('events').columns(['rule_id', 'host_key', 'received_at']).where(sql.ref('state_changed'), '=', 1).execute();

  await addColumns('executions', [
    // 1 while a fan-out's maxConcurrency holds it back: queued, but not to be dispatched yet.
    ['held', 'integer', (c) => c.notNull().defaultTo(0)],
    ['fanout_max_concurrency', 'integer'],
    ['fanout_max_errors', 'integer'],
  ]);
  // Action limits count a rule's executions within a time window (per host, in the same rows).
  await db.schema.createIndex('executions_rule_queued').on('executions').columns(['rule_id', 'queued_at', 'host_id']).execute();

  await db.schema
    .createTable('escalations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('rule_id', 'text', (c) => c.notNull().references('rules.id'))
    .addColumn('host_id', 'text', (c) => c.notNull().references('hosts.id'))
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('window_end', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('limited_events', 'integer', (c) => c.notNull())
    .addColumn('first_event_id', 'text', (c) => c.notNull())
    .addColumn('last_event_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // One escalation per (rule, host, window), however many nodes see the limit reached at once.
  await db.schema.createIndex('escalations_rule_host_window').on('escalations').columns(['rule_id', 'host_id', 'window_start']).unique().execute();
  await db.schema.createIndex('escalations_tenant').on('escalations').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('escalations_state').on('escalations').columns(['state', 'id']).execute();
  await db.schema.createIndex('escalations_rule_open').on('escalations').columns(['rule_id', 'window_end']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('rule_id', 'text', (c) => c.notNull().references('rules.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['rule_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('escalations').execute();
  await db.schema.dropIndex('executions_rule_queued').execute();
  for (const column of ['fanout_max_errors', 'fanout_max_concurrency', 'held']) await db.schema.alterTable('executions').dropColumn(column).execute();
  await db.schema.dropIndex('events_rule_host_changes').execute();
  await db.schema.dropIndex('events_rule_host').execute();
  for (const column of ['idempotency_key', 'state_changed', 'alarm_state', 'host_key']) await db.schema.alterTable('events').dropColumn(column).execute();
}
