import { sql, type Kysely } from 'kysely';
import type { ObservationSink } from '../../src/imports/sink.js';
import type { Store } from '../../src/store/database.js';
import type { Database } from '../../src/store/schema.js';

/**
 * A sink that writes what an import applies into a table of the test's database, inside the
 * import's page transaction (as incidents' applyObservations does): a row is there only if its
 * page committed. Until incidents are merged in, this is what the import tests read back.
 */
export async function createObservationTable(store: Store): Promise<void> {
  await sql`create table if not exists test_observations (
    tenant_id text not null, integration_id text not null, incident_key text not null, alarm_name text not null,
    hostname text, severity text, state text not null, at bigint, received_at bigint not null, open_keys text)`.execute(store.db);
}

export const tableSink: ObservationSink = async (db, tenantId, integrationId, observations, receivedAt, options) => {
  for (const o of observations) {
    await sql`insert into test_observations values (${tenantId}, ${integrationId}, ${o.incidentKey}, ${o.alarmName}, ${o.hostname}, ${o.severity}, ${o.state}, ${o.at}, ${receivedAt}, null)`.execute(db);
  }
  if (options.openKeys) {
    await sql`insert into test_observations values (${tenantId}, ${integrationId}, '', '', null, null, 'open_keys', null, ${receivedAt}, ${JSON.stringify([...options.openKeys].sort())})`.execute(db);
  }
};

export interface StoredObservation {
  key: string;
  alarmName: string;
  hostname: string | null;
  severity: string | null;
  state: string;
  at: number | null;
  openKeys: string[] | null;
}

export async function storedObservations(db: Kysely<Database>, integrationId: string): Promise<StoredObservation[]> {
  const { rows } = await sql<{ incident_key: string; alarm_name: string; hostname: string | null; severity: string | null; state: string; at: string | number | null; open_keys: string | null }>`
    select * from test_observations where integration_id = ${integrationId}`.execute(db);
  return rows.map((r) => ({
    key: r.incident_key, alarmName: r.alarm_name, hostname: r.hostname, severity: r.severity, state: r.state,
    at: r.at === null ? null : Number(r.at), openKeys: r.open_keys === null ? null : (JSON.parse(r.open_keys) as string[]),
  }));
}
