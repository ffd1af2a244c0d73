import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/database.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';

// Every index on events is paid for by every webhook call: the group commit updates its b-tree
// and rewrites its pages into the WAL. Each one here is read by a query (see the comments).
describe.each(testDialects())('the events table on %s', (dialect) => {
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

  it('carries only the indexes its queries use', async () => {
    const names = dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'events' and sql is not null`.execute(store.db)
      : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'events' and indexname <> 'events_pkey'`.execute(store.db);
    expect(names.rows.map((r) => r.name).sort()).toEqual([
      'events_rule', // a rule's events, newest first (GET /rules/{id}/events)
      'events_rule_host', // flapping and action-limit history (events/safety-reads.ts)
      'events_rule_host_changes', // state changes of an alarm, for flapping
    ]);
  });
});
