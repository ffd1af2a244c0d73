import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 17: every alert an integration takes is recorded once, whether or not a rule matched it,
 * with what it did (the events it raised): the integration's page lists them, and the rule wizard
 * previews a new trigger against them. Written in the ingest transaction with the events.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('alerts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    // The integration's type, or `test` for a test alert sent from pitcrew.
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('alarm_name', 'text')
    .addColumn('host_name', 'text')
    .addColumn('severity', 'text')
    // JSON objects of text: the labels (or dimensions, tags) and the annotations as the tool sent them.
    .addColumn('labels', 'text', (c) => c.notNull())
    .addColumn('annotations', 'text', (c) => c.notNull())
    // JSON array of {ruleId, eventId, outcome}: the events the alert raised, one per matching rule.
    .addColumn('events', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_integration').on('alerts').columns(['integration_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('alerts').execute();
}
