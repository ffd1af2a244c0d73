import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrations.js';
import { bootstrapTenant } from '../src/tenants/bootstrap.js';
import { waitFor } from './support/wait.js';

/*
 * The README's quick start runs `pitcrew bootstrap` while the server runs on the same SQLite file,
 * and the server writes every second. A CI run on a busy machine failed it with "database is
 * locked": a deferred transaction that read before another process committed cannot write, and
 * SQLite says so at once, without the busy timeout. Here another process commits as fast as it
 * can while bootstrap runs again and again: every bootstrap must succeed.
 */
describe('bootstrap beside another process writing to the same SQLite file', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-bootstrap-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('issues keys every time, waiting for the other writer instead of failing', async () => {
    const store = openStore({ databaseUrl: undefined, dataDir, sqliteBusyTimeoutMs: 5000 });
    await migrateToLatest(store);
    const writer = spawn(process.execPath, ['--input-type=module', '-e', `
      import Database from 'better-sqlite3';
      const db = new Database(process.argv[1], { timeout: 5000 });
      db.pragma('journal_mode = WAL');
      db.exec('create table if not exists churn (n integer)');
      const insert = db.prepare('insert into churn values (1)');
      process.stdout.write('writing\\n');
      for (;;) insert.run();
    `, store.location], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let said = '';
      writer.stdout.on('data', (chunk: Buffer) => (said += String(chunk)));
      await waitFor(() => said.includes('writing'), 'the other writer');
      const failures: string[] = [];
      for (let i = 0; i < 40; i += 1) {
        try {
          await bootstrapTenant(store, i % 2 === 0 ? 'default' : `team-${i}`, { again: true });
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
      expect(failures).toEqual([]);
      const tokens = await store.db.selectFrom('tokens').select('id').execute();
      expect(tokens).toHaveLength(40);
    } finally {
      writer.kill('SIGKILL');
      await store.close();
    }
  });
});
