import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inBatchTransaction } from './batch.js';
import { openStore, type Store } from './database.js';
import { durableTransaction } from './durable-transaction.js';
import { WalFlusher, type Durability } from './durability.js';

/** A WAL-like file in a fresh directory. */
function walFile(): { file: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-wal-'));
  const file = path.join(dir, 'x-wal');
  fs.writeFileSync(file, 'frames');
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

describe('WalFlusher', () => {
  let wal: ReturnType<typeof walFile>;
  let flusher: WalFlusher | undefined;
  beforeEach(() => {
    wal = walFile();
  });
  afterEach(() => {
    flusher?.close();
    wal.remove();
  });

  it('starts a sync for every flush at once, even while another runs: a sync in progress may predate the commit', async () => {
    const started: Array<() => void> = [];
    flusher = new WalFlusher(wal.file, () => new Promise<void>((resolve) => started.push(resolve)));
    const first = flusher.flush();
    const second = flusher.flush();
    expect(started).toHaveLength(2);
    started[1]!();
    await second;
    started[0]!();
    await first;
  });

  it('keeps one descriptor of the WAL across flushes', async () => {
    const fds: number[] = [];
    flusher = new WalFlusher(wal.file, async (fd) => void fds.push(fd));
    await flusher.flush();
    await flusher.flush();
    expect(fds).toHaveLength(2);
    expect(fds[1]).toBe(fds[0]);
    expect(fs.fstatSync(fds[0]!).ino).toBe(fs.statSync(wal.file).ino);
  });

  it('reports a failed sync to its caller, then opens the WAL afresh', async () => {
    const synced: number[] = [];
    let calls = 0;
    flusher = new WalFlusher(wal.file, async (fd) => {
      calls += 1;
      if (calls === 1) throw new Error('EIO');
      synced.push(fs.fstatSync(fd).ino);
    });
    await expect(flusher.flush()).rejects.toThrow('EIO');
    fs.rmSync(wal.file);
    fs.writeFileSync(wal.file, 'new frames');
    await flusher.flush();
    expect(synced).toEqual([fs.statSync(wal.file).ino]);
  });

  it('syncs a real WAL file, and says when there is none', async () => {
    flusher = new WalFlusher(wal.file);
    await flusher.flush();
    await expect(new WalFlusher(`${wal.file}-missing`).flush()).rejects.toThrow(/ENOENT/);
  });
});

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

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

describe('durableTransaction on SQLite', () => {
  let store: Store | undefined;
  let dir = '';
  afterEach(async () => {
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const open = async (flush: () => Promise<void>) => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-durable-tx-'));
    store = openStore({ dataDir: dir });
    await sql`create table t (x integer)`.execute(store.db);
    const durability: Durability = { ...store.durability, flush: () => flush().then(() => store!.durability.flush()) };
    return { store, durability };
  };
  const synchronous = async (s: Store) => (await sql<{ synchronous: number }>`pragma synchronous`.execute(s.db)).rows[0]!.synchronous;

  it('commits without syncing (synchronous=NORMAL inside), then resolves only once the WAL is flushed', async () => {
    let release = () => undefined as void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { store, durability } = await open(() => gate);
    let inside = -1;
    const done = durableTransaction(store.db, durability, async (tx) => {
      inside = (await sql<{ synchronous: number }>`pragma synchronous`.execute(tx)).rows[0]!.synchronous;
      await sql`insert into t values (1)`.execute(tx);
      return 'ok';
    });
    // Committed (another reader sees it) and synchronous back to FULL for other writes, but not yet resolved: the flush holds it.
    await expect.poll(async () => (await sql<{ n: number }>`select count(*) as n from t`.execute(store.db)).rows[0]!.n).toBe(1);
    expect(await synchronous(store)).toBe(2);
    expect(await settled(done)).toBe(false);
    release();
    expect(await done).toBe('ok');
    expect(inside).toBe(1);
  });

  it('rolls back what a failed transaction wrote, restores synchronous=FULL, and flushes nothing', async () => {
    let flushes = 0;
    const { store, durability } = await open(async () => { flushes++; });
    const failed = durableTransaction(store.db, durability, async (tx) => {
      await sql`insert into t values (1)`.execute(tx);
      throw new Error('decided to fail');
    });
    await expect(failed).rejects.toThrow('decided to fail');
    expect((await sql<{ n: number }>`select count(*) as n from t`.execute(store.db)).rows[0]!.n).toBe(0);
    expect(await synchronous(store)).toBe(2);
    expect(flushes).toBe(0);
  });
});
