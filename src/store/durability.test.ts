import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { inBatchTransaction } from './batch.js';
import { openStore, type Store } from './database.js';
import { WalFlusher, type Durability } from './durability.js';

/** A sync whose completions the test releases one by one. */
function gatedSync() {
  const started: Array<() => void> = [];
  const sync = () => new Promise<void>((resolve) => started.push(resolve));
  return { sync, started };
}

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('WalFlusher', () => {
  it('starts a sync at once when none runs', async () => {
    const gate = gatedSync();
    const flusher = new WalFlusher('wal', gate.sync);
    const flushed = flusher.flush();
    expect(gate.started).toHaveLength(1);
    gate.started[0]!();
    await flushed;
  });

  it('answers a caller who arrives during a sync only after a sync that began later', async () => {
    const gate = gatedSync();
    const flusher = new WalFlusher('wal', gate.sync);
    const first = flusher.flush();
    const second = flusher.flush();
    const third = flusher.flush();
    expect(gate.started).toHaveLength(1);
    gate.started[0]!();
    await first;
    expect(await settled(second)).toBe(false);
    // The two late callers share one new sync.
    expect(gate.started).toHaveLength(2);
    gate.started[1]!();
    await Promise.all([second, third]);
    expect(gate.started).toHaveLength(2);
  });

  it('reports a failed sync to its callers and syncs afresh for the next', async () => {
    let calls = 0;
    const flusher = new WalFlusher('wal', async () => {
      calls += 1;
      if (calls === 1) throw new Error('EIO');
    });
    await expect(flusher.flush()).rejects.toThrow('EIO');
    await flusher.flush();
    expect(calls).toBe(2);
  });

  it('syncs a real WAL file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-wal-'));
    const file = path.join(dir, 'x-wal');
    fs.writeFileSync(file, 'frames');
    await new WalFlusher(file).flush();
    fs.rmSync(dir, { recursive: true, force: true });
    await expect(new WalFlusher(file).flush()).rejects.toThrow(/ENOENT/);
  });
});

describe('inBatchTransaction on SQLite', () => {
  let store: Store | undefined;
  let dir = '';
  afterEach(async () => {
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const open = async (gate: Promise<void>) => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-batch-'));
    store = openStore({ dataDir: dir });
    await sql`create table t (x integer)`.execute(store.db);
    const durability: Durability = { ...store.durability, flush: () => gate.then(() => store!.durability.flush()) };
    return { store, durability };
  };
  const synchronous = async (s: Store) => (await sql<{ synchronous: number }>`pragma synchronous`.execute(s.db)).rows[0]!.synchronous;

  it('is durable only once the commit is flushed, and leaves synchronous=FULL for other writes', async () => {
    let release = () => undefined as void;
    const { store, durability } = await open(new Promise<void>((resolve) => (release = resolve)));
    const committed = await inBatchTransaction(store.db, durability, async (tx) => {
      await tx.begin([]);
      await tx.commit([sql`insert into t values (1)`.compile(store.db)]);
      return 'ok';
    });
    expect(committed.value).toBe('ok');
    expect(await settled(committed.durable)).toBe(false);
    // The connection is free while the flush runs, and other writes are synchronous=FULL (2).
    expect(await synchronous(store)).toBe(2);
    release();
    await committed.durable;
    expect((await sql<{ n: number }>`select count(*) as n from t`.execute(store.db)).rows[0]!.n).toBe(1);
  });

  it('rolls back what a failed batch wrote and restores synchronous=FULL', async () => {
    const { store, durability } = await open(Promise.resolve());
    const failed = inBatchTransaction(store.db, durability, async (tx) => {
      await tx.begin([]);
      await tx.read([sql`insert into t values (1)`.compile(store.db)]);
      throw new Error('decided to fail');
    });
    await expect(failed).rejects.toThrow('decided to fail');
    expect((await sql<{ n: number }>`select count(*) as n from t`.execute(store.db)).rows[0]!.n).toBe(0);
    expect(await synchronous(store)).toBe(2);
  });
});
