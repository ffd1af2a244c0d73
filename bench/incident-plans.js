// The plans of the incidents' readers (issue 38, migration 0042) on the schema a built tree migrates:
// EXPLAIN QUERY PLAN on SQLite (no statistics, as pitcrew runs), EXPLAIN on PostgreSQL over 60,000
// incidents, analyzed. The queries are the readers' own shapes, the previous release's marked (N-1).
//
//   node bench/incident-plans.js ROOT
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/incident-plans.js ROOT
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path'; import pg from 'pg'; import { sql } from 'kysely';
const root = path.resolve(process.argv[2]);
const dist = (f) => import(path.join(root, 'dist/src', f));
const [{ openStore }, { migrateToLatest }] = await Promise.all([dist('store/database.js'), dist('store/migrations.js')]);
let databaseUrl;
if (process.env.DATABASE_URL) {
  const name = `pitcrew_plans_${process.pid}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
  await admin.query(`drop database if exists ${name}`); await admin.query(`create database ${name}`); await admin.end();
  databaseUrl = process.env.DATABASE_URL.replace(/\/[^/]*$/, `/${name}`);
}
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'idx38-plans-'));
const store = openStore({ databaseUrl, dataDir }); await migrateToLatest(store);
const db = store.db; const pgsql = store.dialect === 'postgres';
if (pgsql) {
  // 60k incidents of 20 tenants, 1 in 100 open; 50 integrations, 200 alarms, 2000 hosts.
  await sql`insert into incidents (id, tenant_id, integration_id, incident_key, state, alarm_name, severity, hostname, host_key, opened_at, resolved_at, last_seen_at, last_fired_at, occurrences, resolved_by, rule_ids, execution_ids, execution_count)
    select lpad(to_hex(g), 32, '0'), 't' || (g % 20), 'i' || (g % 50), md5(g::text), case when g % 100 = 0 then 'open' else 'resolved' end, 'alarm' || (g % 200), 'critical', 'h' || (g % 2000), 'h' || (g % 2000),
      1700000000000 + g::bigint * 60000, case when g % 100 = 0 then null else 1700000000000 + g::bigint * 60000 + 300000 end, 1700000000000 + g::bigint * 60000, 1700000000000 + g::bigint * 60000, 1,
      case when g % 100 = 0 then null else 'tool' end, '[]', '[]', 0 from generate_series(1, 60000) g`.execute(db);
  await sql`analyze incidents`.execute(db);
}
const q = {
  'list open host': `select * from incidents where tenant_id = 't1' and state = 'open' and host_key = 'h1' order by id desc limit 51`,
  'list open integration': `select * from incidents where tenant_id = 't1' and state = 'open' and integration_id = 'i1' order by id desc limit 51`,
  'list resolved host': `select * from incidents where tenant_id = 't1' and state = 'resolved' and host_key = 'h1' order by id desc limit 51`,
  'list resolved integration': `select * from incidents where tenant_id = 't1' and state = 'resolved' and integration_id = 'i1' order by id desc limit 51`,
  'list host (N-1, no state)': `select * from incidents where tenant_id = 't1' and host_key = 'h1' order by id desc limit 51`,
  'list integration (N-1, no state)': `select * from incidents where tenant_id = 't1' and integration_id = 'i1' order by id desc limit 51`,
  'list alarm': `select * from incidents where tenant_id = 't1' and alarm_name = 'alarm1' order by id desc limit 51`,
  'list open alarm': `select * from incidents where tenant_id = 't1' and state = 'open' and alarm_name = 'alarm1' order by id desc limit 51`,
  'list open': `select * from incidents where tenant_id = 't1' and state = 'open' order by id desc limit 51`,
  'list resolved': `select * from incidents where tenant_id = 't1' and state = 'resolved' order by id desc limit 51`,
  'list open host+integration': `select * from incidents where tenant_id = 't1' and state = 'open' and integration_id = 'i1' and host_key = 'h1' order by id desc limit 51`,
  'list resolved host+integration+alarm': `select * from incidents where tenant_id = 't1' and state = 'resolved' and integration_id = 'i1' and host_key = 'h1' and alarm_name = 'alarm1' order by id desc limit 51`,
  'apply open of integration': `select * from incidents where integration_id = 'i1' and tenant_id = 't1' and state = 'open'`,
  'apply keys open': `select * from incidents where tenant_id = 't1' and integration_id = 'i1' and incident_key in ('a', 'b') and state = 'open'`,
  'apply keys resolved': `select * from incidents where tenant_id = 't1' and integration_id = 'i1' and incident_key in ('a', 'b') and state = 'resolved' and resolved_at >= 1`,
  'rule-links names (N-1)': `select distinct alarm_name from incidents where tenant_id = 't1' and integration_id = 'i1'`,
  'rule-links names open': `select distinct alarm_name from incidents where tenant_id = 't1' and integration_id = 'i1' and state = 'open'`,
  'rule-links names resolved': `select distinct alarm_name from incidents where tenant_id = 't1' and integration_id = 'i1' and state = 'resolved'`,
  'rule links update': `update incidents set rule_ids = rule_ids where tenant_id = 't1' and alarm_name in ('alarm1') and integration_id = 'i1'`,
  'hostnameOf (N-1)': `select hostname from incidents where tenant_id = 't1' and host_key = 'h1' and hostname is not null order by id desc limit 1`,
  'hostnameOf': `select hostname from incidents where tenant_id = 't1' and state = 'resolved' and host_key = 'h1' and hostname is not null order by id desc limit 1`,
  'newestLabelNames': `select id, last_alert_id from incidents ${pgsql ? '' : 'indexed by incidents_tenant_alarm'} where tenant_id = 't1' and alarm_name = 'alarm1' and integration_id = 'i1' order by id desc limit 20`,
  'closer': `select incidents.id from incidents join tenants on tenants.id = incidents.tenant_id where incidents.state = 'open' and incidents.integration_id is null and incidents.last_seen_at + tenants.incident_quiet_seconds * 1000 < 5 limit 500`,
  'closer indexed': `select incidents.id from incidents ${pgsql ? '' : 'indexed by incidents_open_webhook'} join tenants on tenants.id = incidents.tenant_id where incidents.state = 'open' and incidents.integration_id is null and incidents.last_seen_at + tenants.incident_quiet_seconds * 1000 < 5 limit 500`,
  'retention': `select id from incidents where id < 'x' and state = 'resolved' and resolved_at < 5`,
  'reads open key': `select * from incidents ${pgsql ? '' : 'indexed by incidents_open_key'} where state = 'open' and incident_key in ('a') and tenant_id in ('t1')`,
  'reads key resolved': `select * from incidents ${pgsql ? '' : 'indexed by incidents_key_resolved'} where state = 'resolved' and incident_key in ('a') and tenant_id in ('t1') and resolved_at > 5`,
  'resolve update': `update incidents set state = 'resolved', resolved_at = 5 where id = 'x' and state = 'open'`,
};
for (const [name, text] of Object.entries(q)) {
  const rows = (await sql.raw(`${pgsql ? 'explain' : 'explain query plan'} ${text}`).execute(db)).rows;
  const plan = rows.map((r) => pgsql ? r['QUERY PLAN'] : r.detail).join(' | ').replace(/\s+/g, ' ');
  console.log(`${name.padEnd(38)} ${plan}`);
}
await store.close(); fs.rmSync(dataDir, { recursive: true, force: true });
if (databaseUrl) { const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect(); await admin.query(`drop database ${databaseUrl.replace(/.*\//, '')}`); await admin.end(); }
