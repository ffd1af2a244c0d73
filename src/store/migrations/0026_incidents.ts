import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: incidents. One incident is one occurrence of an alarm on a host, made from what the
 * tools say (integrations/observation.ts): opened and resolved at the tool's times, counting its
 * re-firings, with who resolved it. Kept in the ingest transaction (ingest/) and by imports
 * (incidents/apply.ts); see docs/incidents.md.
 *
 * - The id is a UUIDv7 of the time the incident opened (store/ids.ts idAt), so the list's
 *   newest-first order and its from/to filters are ranges of the primary key and of the
 *   (tenant, …, id) indexes below.
 * - At most one open incident per (tenant, integration, key): a partial unique index, the same on
 *   SQLite and PostgreSQL. An incident born of a webhook call has no integration (null): the
 *   index reads it as '' so that two open ones of one webhook alarm collide too.
 * - Rule and execution ids are kept on the row (JSON: the distinct rules, the first 100
 *   executions, and their count), so a page of the list is one query; events and alerts name
 *   their incident (`incident_id`), which the incident's own page reads.
 * - `last_fix_at`: when a pitcrew fix (a succeeded execution that is not a diagnostics script)
 *   of one of its events last ended, written by the execution ledger's transaction; a resolution
 *   within the tenant's automation window of it is `automation`'s.
 * - Indexes for the analytics over resolved incidents (by resolved_at, opened_at, alarm, host)
 *   and for retention, which deletes resolved incidents as it deletes the alert log.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('incidents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    // Null for an incident a webhook call opened (no integration).
    .addColumn('integration_id', 'text')
    // integrations/observation.ts AlarmObservation.incidentKey (the API's `fingerprint`).
    .addColumn('incident_key', 'text', (c) => c.notNull())
    // open | resolved
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('alarm_name', 'text', (c) => c.notNull())
    .addColumn('severity', 'text')
    .addColumn('hostname', 'text')
    // hostKey(hostname): what `?hostname=` compares, without case; '' when there is no host.
    .addColumn('host_key', 'text', (c) => c.notNull())
    // The tool's times where it gives them, else when pitcrew received what said so (epoch ms).
    .addColumn('opened_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    // When pitcrew last heard of it (its received time): a webhook incident closes after a quiet period of it.
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    // The tool's time of the last firing counted, and the notification fingerprint it came with: what tells a repeat.
    .addColumn('last_fired_at', 'bigint', (c) => c.notNull())
    .addColumn('last_fingerprint', 'text')
    .addColumn('occurrences', 'integer', (c) => c.notNull())
    // tool | automation | manual, once resolved; the person's user id for manual.
    .addColumn('resolved_by', 'text')
    .addColumn('resolved_by_user', 'text')
    .addColumn('last_fix_at', 'bigint')
    // JSON arrays: the distinct rules its alerts raised; the first 100 executions of its events.
    .addColumn('rule_ids', 'text', (c) => c.notNull())
    .addColumn('execution_ids', 'text', (c) => c.notNull())
    .addColumn('execution_count', 'integer', (c) => c.notNull())
    .execute();

  // One open incident per alarm: the ingest's and the imports' bookkeeping read open ones by key through it.
  await sql`create unique index incidents_open_key on incidents (incident_key, tenant_id, coalesce(integration_id, '')) where state = 'open'`.execute(db);
  // Incidents of a key resolved lately: a repeat notification arriving after the resolution is recognised.
  await sql`create index incidents_key_resolved on incidents (incident_key, resolved_at) where state = 'resolved'`.execute(db);
  // The list, newest first, by state, alarm, host, integration; from/to are id ranges.
  await db.schema.createIndex('incidents_tenant').on('incidents').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('incidents_tenant_state').on('incidents').columns(['tenant_id', 'state', 'id']).execute();
  await db.schema.createIndex('incidents_tenant_alarm').on('incidents').columns(['tenant_id', 'alarm_name', 'id']).execute();
  await db.schema.createIndex('incidents_tenant_host').on('incidents').columns(['tenant_id', 'host_key', 'id']).execute();
  await db.schema.createIndex('incidents_integration').on('incidents').columns(['integration_id', 'state', 'id']).execute();
  // Analytics over resolved incidents by when they resolved.
  await sql`create index incidents_tenant_resolved on incidents (tenant_id, resolved_at) where state = 'resolved'`.execute(db);
  // The quiet-period closer: open incidents webhook calls opened.
  await sql`create index incidents_open_webhook on incidents (tenant_id) where state = 'open' and integration_id is null`.execute(db);

  await db.schema.alterTable('alerts').addColumn('incident_id', 'text').execute();
  await db.schema.alterTable('events').addColumn('incident_id', 'text').execute();
  // Partial: most events belong to no incident (cron ticks, webhook calls without an alarm name) and cost no index entry.
  await sql`create index alerts_incident on alerts (incident_id, id) where incident_id is not null`.execute(db);
  await sql`create index events_incident on events (incident_id, id) where incident_id is not null`.execute(db);

  // The tenant's settings (PATCH /api/v1/tenant): a resolution within this long of a pitcrew fix is
  // automation's; an incident a webhook call opened closes after this long without another call.
  await db.schema.alterTable('tenants').addColumn('incident_automation_seconds', 'integer', (c) => c.notNull().defaultTo(3600)).execute();
  await db.schema.alterTable('tenants').addColumn('incident_quiet_seconds', 'integer', (c) => c.notNull().defaultTo(1800)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tenants').dropColumn('incident_quiet_seconds').execute();
  await db.schema.alterTable('tenants').dropColumn('incident_automation_seconds').execute();
  await db.schema.dropIndex('events_incident').execute();
  await db.schema.dropIndex('alerts_incident').execute();
  await db.schema.alterTable('events').dropColumn('incident_id').execute();
  await db.schema.alterTable('alerts').dropColumn('incident_id').execute();
  await db.schema.dropTable('incidents').execute();
}
