import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRegistry, newNodeId } from '../src/cluster/nodes.js';
import type { Store } from '../src/store/database.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';

// Every agent's hello asks the registry for dead nodes. A previous run's node is dead on either
// database; on SQLite, once none is left, the registry stops asking: this process holds the data
// directory, so no other node can register. The row added below could not appear in production on
// SQLite; it shows that the registry no longer reads the table there, and still does on PostgreSQL.
describe.each(testDialects())('node registry on %s', (dialect) => {
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

  const addNode = (id: string, heartbeatAt: number) => store.db.insertInto('nodes').values({ id, started_at: heartbeatAt, heartbeat_at: heartbeatAt }).execute();

  it('finds a previous run as dead; on SQLite, once alone, it no longer reads the nodes', async () => {
    const now = Date.now();
    const previous = newNodeId();
    await addNode(previous, now - 60_000);
    const registry = new NodeRegistry(store, newNodeId());
    await registry.register(now);
    expect(await registry.deadNodes(now)).toEqual([previous]);
    await store.db.deleteFrom('nodes').where('id', '=', previous).execute();
    expect(await registry.deadNodes(now)).toEqual([]);

    const later = newNodeId();
    await addNode(later, now - 60_000);
    expect(await registry.deadNodes(now)).toEqual(dialect === 'sqlite' ? [] : [later]);
    await registry.unregister();
  });

  it('beats on PostgreSQL, where other nodes judge it by its beat, and writes nothing on SQLite, where none does', async () => {
    const now = Date.now();
    const id = newNodeId();
    const registry = new NodeRegistry(store, id);
    await registry.register(now);
    expect(await registry.beat(now + 5_000)).toBe(false);
    const row = await store.db.selectFrom('nodes').select('heartbeat_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(Number(row.heartbeat_at)).toBe(dialect === 'sqlite' ? now : now + 5_000);
    await registry.unregister();
  });
});
