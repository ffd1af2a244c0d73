import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointDone } from './checkpoint-worker.js';
import { BACKSTOP_PAGES, CHECKPOINT_PAGES, WalCheckpointer, type CheckpointWorkerEntry } from './checkpointer.js';

/** The thread run from the TypeScript sources, as the tests import them (test/support/render-worker.ts says how). */
const SOURCE_WORKER: CheckpointWorkerEntry = {
  url: new URL('./checkpoint-worker.ts', import.meta.url),
  execArgv: ['--import', new URL('../../test/support/ts-worker-register.mjs', import.meta.url).href],
};

describe('WalCheckpointer', () => {
  let dir = '';
  let writer: SqliteDatabase.Database | undefined;
  let checkpointer: WalCheckpointer | undefined;
  afterEach(async () => {
    await checkpointer?.close();
    writer?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const open = () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-checkpoint-'));
    const file = path.join(dir, 'pitcrew.db');
    writer = new SqliteDatabase(file);
    writer.pragma('journal_mode = WAL');
    writer.pragma('synchronous = NORMAL');
    writer.exec('create table t (x blob)');
    return { writer, file };
  };
  const autocheckpoint = (db: SqliteDatabase.Database) => db.pragma('wal_autocheckpoint', { simple: true });
  /** One commit of about a page, told to the checkpointer as the group commits tell it. */
  const commit = (db: SqliteDatabase.Database, c: WalCheckpointer) => {
    db.prepare('insert into t (x) values (?)').run(Buffer.alloc(3000, 7));
    c.committed();
  };

  it('copies the WAL into the database on its thread once it holds 1,000 frames, the writer checkpointing only at 4,000', async () => {
    const { writer, file } = open();
    const done: CheckpointDone[] = [];
    const c = (checkpointer = new WalCheckpointer(writer, file, SOURCE_WORKER, (d) => done.push(d)));
    expect(autocheckpoint(writer)).toBe(BACKSTOP_PAGES);
    // Commits go on until the thread has checkpointed (each ~2 frames: well under the writer's 4,000 for 1,000 commits).
    for (let i = 0; i < 1000 && done.length === 0; i++) {
      commit(writer, c);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect.poll(() => done.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(done[0]!.copied).toBeGreaterThanOrEqual(CHECKPOINT_PAGES);
    // The pages are in the database file itself (each commit added about one), before the writer checkpointed at all.
    expect(fs.statSync(file).size).toBeGreaterThan(500 * 4096);
  });

  it('leaves checkpoints to the writer as SQLite does by default when its thread fails', async () => {
    const { writer, file } = open();
    const missing: CheckpointWorkerEntry = { url: new URL('./no-such-checkpoint-worker.js', import.meta.url) };
    const c = (checkpointer = new WalCheckpointer(writer, file, missing));
    expect(autocheckpoint(writer)).toBe(BACKSTOP_PAGES);
    for (let i = 0; i < 16; i++) commit(writer, c);
    await expect.poll(() => autocheckpoint(writer), { timeout: 20_000 }).toBe(CHECKPOINT_PAGES);
  });
});
