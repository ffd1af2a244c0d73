import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/database.js';
import { recordedMigrations, migrateToLatest, MIGRATION_NAMES } from '../src/store/migrations.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { runCli } from './support/process.js';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/store/migrations');

// Every index of these tables is paid for on the ingest path: each group commit updates its b-tree
// and rewrites its pages into the WAL. Each one here is read by a query (see the comments).
describe.each(testDialects())('the ingest\'s tables on %s', (dialect) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    store = database.open();
  });

  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  /** The table's indexes but its primary key's. */
  async function indexesOf(table: string, primaryKey: string): Promise<string[]> {
    const names = dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(store.db)
      : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = ${table} and indexname <> ${primaryKey}`.execute(store.db);
    return names.rows.map((r) => r.name).sort();
  }

  // Every webhook call and alert writes an event.
  it('events carry only the indexes their queries use', async () => {
    expect(await indexesOf('events', 'events_pkey')).toEqual([
      'events_rule', // a rule's events, newest first (GET /rules/{id}/events)
      'events_rule_host', // flapping and action-limit history (ingest/safety-reads.ts)
      'events_rule_host_changes', // state changes of an alarm, for flapping
    ]);
  });

  // Every alert an integration delivers writes an idempotency key (its fingerprint, per rule).
  it('idempotency keys carry only the indexes their queries use', async () => {
    expect(await indexesOf('idempotency_keys', 'idempotency_keys_pk')).toEqual([
      'idempotency_keys_event', // retention's deletes by event, and the sweeper's purge of keys past 24 h by their event's time (migration 0046)
    ]);
  });

  // Each new alarm adds an entry to each, each resolution moves it between the open and the resolved
  // ones (issue 38: the bookkeeping may cost the ingest at most 10 % of its throughput, bench/alerts.js).
  it('incidents carry only the indexes their queries use', async () => {
    expect(await indexesOf('incidents', 'incidents_pkey')).toEqual([
      'incidents_integration_resolved', // ?integrationId= of resolved incidents; partial: an open incident's filters read incidents_tenant_open (migration 0042)
      'incidents_key_resolved', // the ingest's and imports' repeats of a resolution (incidents/reads.ts); partial: resolved only
      'incidents_open_key', // one open incident per alarm, and the ingest's read of the batch's open ones (incidents/reads.ts)
      'incidents_open_webhook', // the quiet-period closer (incidents/closer.ts); partial: open webhook incidents only
      'incidents_resolved_alarm', // analytics by alarm (incidents/analytics-reads.ts); partial: resolved only
      'incidents_resolved_day_host', // the daily rollup by host, analytics for one host (a probe per day); partial: resolved incidents that name a host
      'incidents_resolved_host', // (tenant, host, id): ?hostname= of resolved incidents, a host's name in the analytics; named as 0.1.0 names its own (migration 0043)
      'incidents_resolved_time', // by day: the daily rollups by day and alarm (incidents/rollup.ts), the hosts of a short period; named as 0.1.0 names its own (migration 0043)
      'incidents_tenant', // the list, newest first, unfiltered or ?state=resolved (incidents/repository.ts)
      'incidents_tenant_alarm', // ?alarmName=, the incidents a new rule for the alarm links (incidents/links.ts)
      'incidents_tenant_open', // ?state=open: the dashboard's open incidents, and the open ones by host or integration (an import's); partial: a resolution only deletes its entry
    ]);
  });
});

describe.each(testDialects())('migrating a new database on %s', (dialect) => {
  const FIRST_RELEASE = MIGRATION_NAMES.slice(0, MIGRATION_NAMES.indexOf('0031_graph_snapshots') + 1);

  it('starts on the schema of a newer release, as it is; refuses one of another lineage', async () => {
    const database = await createTestDatabase(dialect);
    const store = database.open();
    try {
      await sql`insert into pitcrew_migrations_after_0_1 (name, timestamp) values ('9999_from_the_future', ${new Date().toISOString()})`.execute(store.db);
      expect(await migrateToLatest(store)).toEqual({ applied: [], newer: ['9999_from_the_future'] });
      const cli = await runCli(['migrate'], database.env);
      expect(cli, cli.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining('was migrated by a newer pitcrew release; this one runs on its schema unchanged') });
      expect(cli.stdout).toContain('(9999_from_the_future)');

      const last = MIGRATION_NAMES.at(-1)!;
      await sql`delete from pitcrew_migrations_after_0_1 where name = ${last}`.execute(store.db);
      await expect(migrateToLatest(store)).rejects.toThrow(`does not know (9999_from_the_future) but lacks some it does (${last})`);
    } finally {
      await store.close();
      await database.drop();
    }
  });

  it("moves the records of a database this release migrated into one table to 0.1.0's and the later one", async () => {
    const database = await createTestDatabase(dialect);
    const store = database.open();
    try {
      await sql`insert into pitcrew_migrations (name, timestamp) select name, timestamp from pitcrew_migrations_after_0_1`.execute(store.db);
      await sql`drop table pitcrew_migrations_after_0_1`.execute(store.db);
      expect(await migrateToLatest(store)).toEqual({ applied: [], newer: [] });
      expect(await recordedMigrations(store.db)).toEqual([...MIGRATION_NAMES].sort());
      const first = await sql<{ name: string }>`select name from pitcrew_migrations order by name`.execute(store.db);
      expect(first.rows.map((r) => r.name)).toEqual(FIRST_RELEASE);
    } finally {
      await store.close();
      await database.drop();
    }
  });

  const tables = async (store: Store) => (dialect === 'sqlite'
    ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(store.db)
    : await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public'`.execute(store.db)).rows.map((r) => r.name).sort();

  // Three processes that each load pitcrew, and every migration on a new database: 7-24 s at load 15-20.
  it('three pitcrew migrate processes at once: all succeed, each migration applied once', { timeout: 90_000 }, async () => {
    const empty = await createTestDatabase(dialect, { empty: true });
    const reference = await createTestDatabase(dialect);
    const migrated = empty.open();
    const expected = reference.open();
    try {
      const runs = await Promise.all([1, 2, 3].map(() => runCli(['migrate'], empty.env)));
      for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
      const names = fs.readdirSync(MIGRATIONS_DIR).filter((file) => /^\d{4}_.*\.ts$/.test(file)).map((file) => file.replace(/\.ts$/, '')).sort();
      // One process applied every migration; the others found the schema up to date.
      expect(runs.filter((run) => /applied /.test(run.stdout)).map((run) => run.stdout)).toEqual([expect.stringContaining(`applied ${names.join(', ')} to `)]);
      expect(runs.filter((run) => /is up to date/.test(run.stdout))).toHaveLength(2);

      expect(await recordedMigrations(migrated.db)).toEqual(names);
      // Release 0.1.0's own table holds its migrations only: it refuses to start on one that names any other.
      const first = await sql<{ name: string }>`select name from pitcrew_migrations order by name`.execute(migrated.db);
      expect(first.rows.map((r) => r.name)).toEqual(FIRST_RELEASE);
      expect(await tables(migrated)).toEqual(await tables(expected));
      expect(await tables(migrated)).toEqual(expect.arrayContaining(['events', 'executions', 'tenants']));
    } finally {
      await migrated.close();
      await expected.close();
      await empty.drop();
      await reference.drop();
    }
  });
});
