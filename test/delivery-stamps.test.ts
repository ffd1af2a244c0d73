import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryStamps } from '../src/integrations/delivery-stamps.js';
import type { Store } from '../src/store/database.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';

// The integration's "last alert" is written once a second for every integration together, not
// once per notification (each was a synced commit of its own on SQLite).
describe('delivery stamps', () => {
  let database: TestDatabase;
  let store: Store;
  const ids = ['0190a000-0000-7000-8000-000000000001', '0190a000-0000-7000-8000-000000000002'];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    store = database.open();
    await store.db.insertInto('tenants').values({ id: 't1', name: 't1', created_at: 0 } as never).execute();
    for (const id of ids) {
      await store.db.insertInto('integrations').values({ id, tenant_id: 't1', name: id, type: 'alertmanager', config: '{}', created_at: 0, updated_at: 0 } as never).execute();
    }
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  const stamps = async () => (await store.db.selectFrom('integrations').select(['id', 'last_alert_at']).orderBy('id').execute()).map((r) => r.last_alert_at);

  it('keeps the latest time of each integration and writes them in one go, when flushed or after its interval', async () => {
    const writes: string[] = [];
    const counting = store.db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === 'UpdateQueryNode') writes.push(args.queryId.queryId);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const taken = new DeliveryStamps(counting, 50);
    taken.took(ids[0]!, 1_000);
    taken.took(ids[0]!, 3_000);
    taken.took(ids[0]!, 2_000);
    taken.took(ids[1]!, 5_000);
    expect(await stamps()).toEqual([null, null]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await stamps()).toEqual([3_000, 5_000]);
    expect(writes).toHaveLength(2);

    taken.took(ids[1]!, 6_000);
    await taken.flush();
    expect(await stamps()).toEqual([3_000, 6_000]);
    expect(writes).toHaveLength(3);
  });
});
