import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { openStore, type Dialect, type Store } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrations.js';
import { admin, databaseUrl } from './postgres.js';

/** The databases every storage-touching suite runs against. */
export function testDialects(): Dialect[] {
  return inject('pgTemplate') ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestDatabase {
  dialect: Dialect;
  /** For child processes: DATABASE_URL (postgres) or PITCREW_DATA_DIR (sqlite). */
  env: Record<string, string>;
  dataDir: string;
  open(options?: { sqliteBusyTimeoutMs?: number }): Store;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** No schema at all (an empty data directory, or a new PostgreSQL database): for tests of migrating itself. */
  empty?: boolean;
}

/** A fresh, migrated database: a temp directory for SQLite, a clone of the template for PostgreSQL. */
export async function createTestDatabase(dialect: Dialect, options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-test-'));
  if (dialect === 'sqlite') {
    if (!options.empty) {
      const store = openStore({ dataDir });
      await migrateToLatest(store);
      await store.close();
    }
    return {
      dialect,
      dataDir,
      env: { PITCREW_DATA_DIR: dataDir },
      open: (options) => openStore({ dataDir, ...options }),
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const template = inject('pgTemplate');
  if (!template) throw new Error('PostgreSQL is not available for this run');
  // The runner's pid is in the name, so a later run can tell leftovers of a dead run from a live one's.
  const name = `pitcrew_t_${process.ppid}_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(options.empty ? `create database "${name}"` : `create database "${name}" template "${template}"`));
  const url = databaseUrl(name);
  return {
    dialect,
    dataDir,
    env: { DATABASE_URL: url, PITCREW_DATA_DIR: dataDir },
    open: () => openStore({ databaseUrl: url, dataDir }),
    drop: async () => {
      await admin((client) => client.query(`drop database if exists "${name}" with (force)`));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
