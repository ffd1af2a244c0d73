import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GUARD_CHECKPOINT_PAGES, INLINE_CHECKPOINT_PAGES, type CheckpointWorkerEntry } from './checkpointer.js';
import { waitFor } from '../../test/support/wait.js';
import { openStore, type Store } from './database.js';

/** The checkpointer's thread from the TypeScript sources (test/support/render-worker.ts says how). */
const SOURCE_CHECKPOINT_WORKER: CheckpointWorkerEntry = {
  url: new URL('./checkpoint-worker.ts', import.meta.url),
  execArgv: ['--import', new URL('../../test/support/ts-worker-register.mjs', import.meta.url).href],
};

const PAGE = 4096;

/** `pages` pages' worth of rows, in transactions of 50 rows of 1 KiB, through the store's own connection. */
async function write(store: Store, pages: number): Promise<void> {
  await sql`create table if not exists filler (id integer primary key, body blob not null)`.execute(store.db);
  for (let written = 0; written < pages; written += 12) {
    await store.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 50; i++) await sql`insert into filler (body) values (randomblob(1024))`.execute(tx);
    });
  }
}

const autocheckpoint = async (store: Store) => (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows[0]!.wal_autocheckpoint;

describe('SQLite checkpoints on a thread of their own', () => {
  let dataDir: string;
  let store: Store | undefined;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-checkpoints-'));
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies committed pages into the database file while the writing connection only appends to the WAL, and closes with the store', async () => {
    const failures: string[] = [];
    store = openStore({ dataDir, backgroundCheckpoints: { onFailure: (reason) => failures.push(reason), entry: SOURCE_CHECKPOINT_WORKER } });
    expect(await autocheckpoint(store)).toBe(GUARD_CHECKPOINT_PAGES);
    const file = path.join(dataDir, 'pitcrew.db');
    // Fewer pages than SQLite's own checkpoint needs: without the thread, none of them would reach the database file before close.
    await write(store, INLINE_CHECKPOINT_PAGES / 2);
    const before = fs.statSync(file).size;
    await waitFor(() => fs.statSync(file).size >= before + (INLINE_CHECKPOINT_PAGES / 4) * PAGE, 'the database file to hold the rows written');
    const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db);
    expect(rows.rows[0]!.n).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    // The thread's connection closes with the store: the last connection to close then removes the WAL.
    await store.close();
    store = undefined;
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('gives the checkpoints back to the commits, and says why, when its thread fails', async () => {
    const failures: string[] = [];
    const missing: CheckpointWorkerEntry = { url: new URL('./no-such-checkpoint-worker.ts', import.meta.url), execArgv: SOURCE_CHECKPOINT_WORKER.execArgv };
    store = openStore({ dataDir, backgroundCheckpoints: { onFailure: (reason) => failures.push(reason), entry: missing } });
    await waitFor(() => failures.length > 0, 'the failure to be reported');
    expect(failures).toHaveLength(1);
    expect(await autocheckpoint(store)).toBe(INLINE_CHECKPOINT_PAGES);
    await write(store, 20);
    expect(failures).toHaveLength(1);
  });

  it('leaves the store as it was without it: SQLite checkpoints in the commits', async () => {
    store = openStore({ dataDir });
    expect(await autocheckpoint(store)).toBe(INLINE_CHECKPOINT_PAGES);
  });
});
