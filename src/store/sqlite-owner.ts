import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { ConfigError } from '../config/config.js';

/**
 * With SQLite one server process owns the data directory: it takes every other node it finds
 * registered for a previous run and ends what ran through it (cluster/nodes.ts). A second
 * `pitcrew server` on the same directory, even one that then fails to bind its port, would end
 * the first one's running executions lost. So the server holds an exclusive lock for its life:
 * SQLite's own file lock on a database of its own (server.lock), which the OS frees the moment
 * the process dies, kill -9 included. Other commands (bootstrap, migrate) do not take it.
 */
export function claimDataDir(dataDir: string): { release(): void } {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'server.lock');
  const lock = new SqliteDatabase(file, { timeout: 0 });
  try {
    lock.pragma('journal_mode = OFF');
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    throw new ConfigError(`another pitcrew server is using ${dataDir} (it holds ${file}); stop it first. Several server processes need PostgreSQL (DATABASE_URL)`);
  }
  return { release: () => lock.close() };
}
