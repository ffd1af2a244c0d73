import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Issue 38: the incident bookkeeping may cost the alert ingest at most 10 % of its throughput
 * (bench/alerts.js `fire+resolve`). A resolution took the incident's entry out of
 * `incidents_open_key` and put one into `incidents_key_resolved`: two b-trees keyed by the alarm's
 * key, each entry at a random place in a real fleet (one page written into the WAL each).
 *
 * `incidents_key` holds both: every incident by its alarm (key, tenant, integration), then when it
 * resolved, an open one after all of its alarm's resolved ones. A resolution moves the
 * entry within its alarm, on the page it was on. Unique: an open incident's last column is '', a
 * resolved one's its id, so an alarm still has at most one open incident. The ingest reads its
 * batch's open incidents and those resolved within the repeat window in one range per alarm
 * (incidents/reads.ts `knownIncidents`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unique index incidents_key on incidents (incident_key, tenant_id, coalesce(integration_id, ''),
    (case when state = 'open' then 9007199254740991 else resolved_at end), (case when state = 'open' then '' else id end))`.execute(db);
  await sql`drop index incidents_open_key`.execute(db);
  await sql`drop index incidents_key_resolved`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create unique index incidents_open_key on incidents (incident_key, tenant_id, coalesce(integration_id, '')) where state = 'open'`.execute(db);
  await sql`create index incidents_key_resolved on incidents (incident_key, resolved_at) where state = 'resolved'`.execute(db);
  await sql`drop index incidents_key`.execute(db);
}
