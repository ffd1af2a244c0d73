import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from './database.js';
import { migrateToLatest } from './migrations.js';
import { preparedListQuery, preparedQuery } from './prepared.js';

describe('preparedQuery', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-prepared-'));
    store = openStore({ dataDir: dir });
    await migrateToLatest(store);
    const tenant = (id: string, name: string) => ({ id, name, ip_allowlist: '[]', throttle: null, agent_allowlist: '[]', created_at: 1 });
    await store.db.insertInto('tenants').values([tenant('t1', 'one'), tenant('t2', 'two'), tenant('t3', 'three')]).execute();
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("runs each call with its own values in the compiled order, keeping the query's constants", async () => {
    let built = 0;
    // Arguments used in another order than given, beside a constant the query holds.
    const named = preparedQuery((db, last: string, first: string) => {
      built++;
      return db.selectFrom('tenants').select('id').where((eb) => eb.or([eb('id', '=', first), eb('name', '=', 'three'), eb('id', '=', last)])).orderBy('id');
    });
    expect((await named(store.db, 't2', 't1')).map((row) => row.id)).toEqual(['t1', 't2', 't3']);
    expect((await named(store.db, 'none', 'none')).map((row) => row.id)).toEqual(['t3']);
    expect((await named(store.db, 't1', 'none')).map((row) => row.id)).toEqual(['t1', 't3']);
    expect(built).toBe(1);
  });

  it('builds the query again for another database', async () => {
    let built = 0;
    const byId = preparedQuery((db, id: string) => {
      built++;
      return db.selectFrom('tenants').select('name').where('id', '=', id);
    });
    expect(await byId(store.db, 't1')).toEqual([{ name: 'one' }]);
    const other = openStore({ dataDir: path.join(dir, 'other') });
    try {
      await migrateToLatest(other);
      expect(await byId(other.db, 't1')).toEqual([]);
      expect(built).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('builds a list query once per power of two of its length, answering each list its own rows', async () => {
    const sizes: number[] = [];
    const named = preparedListQuery((db, ids) => {
      sizes.push(ids.length);
      return db.selectFrom('tenants').select('name').where('id', 'in', ids).where('name', '!=', 'three').orderBy('name');
    });
    expect(await named(store.db, ['t1'])).toEqual([{ name: 'one' }]);
    expect(await named(store.db, ['t2', 'none', 't1'])).toEqual([{ name: 'one' }, { name: 'two' }]);
    expect(await named(store.db, ['t3', 't2', 'none', 'none'])).toEqual([{ name: 'two' }]);
    expect(await named(store.db, ['t2', 't1', 'none'])).toEqual([{ name: 'one' }, { name: 'two' }]);
    expect(await named(store.db, [])).toEqual([]);
    // Three lists of 3 or 4 keys shared one build; 1 and 4 are classes of their own.
    expect(sizes).toEqual([1, 4]);
  });
});
