import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from './database.js';
import { migrateToLatest } from './migrations.js';

describe('the SQLite store', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-database-'));
    store = openStore({ dataDir: dir });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps statement journals in memory (temp_store = MEMORY, 2): a batch statement never spills one to a temporary file', async () => {
    const { rows } = await sql<{ temp_store: number }>`pragma temp_store`.execute(store.db);
    expect(rows[0]!.temp_store).toBe(2);
  });

  it('keeps them in memory after migrating (the migration run itself keeps its journals in files)', async () => {
    await migrateToLatest(store);
    const { rows } = await sql<{ temp_store: number }>`pragma temp_store`.execute(store.db);
    expect(rows[0]!.temp_store).toBe(2);
  });
});
