import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sealedKeyId } from '../identity/secret-box.js';
import type { Store } from '../store/database.js';
import { LATER_MIGRATION_TABLE, MIGRATION_NAMES, MIGRATION_TABLE } from '../store/migrations.js';
import { SEALED_COLUMNS } from '../secrets/sealed-columns.js';

/** What a backup holds, read from the copy itself (docs/operations.md, "Backup and restore"). */
export interface BackupContents {
  file: string;
  bytes: number;
  /** The last migration the copy had: its schema version. */
  schemaVersion: string | null;
  migrations: string[];
  tenants: number;
  rules: number;
  events: number;
  executions: number;
  /** The fingerprints of the keys that sealed its secrets, with how many each: what opens them. */
  sealedWith: Array<{ keyId: string; secrets: number }>;
}

/** The whole database in one step: a backup by a process of its own is restarted by every write the service makes between two steps. */
export const WHOLE = 0x7fffffff;
/** A backup by the service itself: this many pages (4 KiB each) between turns of its event loop. */
export const IN_SERVICE_STEP = 256;

/**
 * A consistent copy of the live SQLite database in `target`, by SQLite's online backup (not a
 * file copy, which could catch the database half-written): written beside it as `.partial`,
 * then renamed, so a backup file that exists is a whole one.
 */
export async function backupTo(store: Store, target: string, pagesPerStep: number): Promise<BackupContents> {
  if (!store.backup) throw new Error('pitcrew backup copies the embedded SQLite database; on PostgreSQL use its own tools (pg_dump, pg_basebackup): docs/operations.md');
  if (fs.existsSync(target)) throw new Error(`${target} exists already: give a new file name (a backup never overwrites one)`);
  const partial = `${target}.partial`;
  fs.rmSync(partial, { force: true });
  try {
    await store.backup(partial, pagesPerStep);
    fs.renameSync(partial, target);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
  return describeBackup(target);
}

/** What a backup file holds; an error that says so when it is not a pitcrew database. */
export function describeBackup(file: string): BackupContents {
  const db = openBackup(file);
  try {
    const count = (query: string) => (db.prepare(query).pluck().get() as number | bigint | null) ?? 0;
    const migrations = migrationsOf(db);
    return {
      file,
      bytes: fs.statSync(file).size,
      schemaVersion: migrations.at(-1) ?? null,
      migrations,
      tenants: Number(count('select count(*) from tenants')),
      rules: Number(count('select count(*) from rules where deleted_at is null')),
      events: Number(count('select count(*) from events')),
      executions: Number(count('select count(*) from executions')),
      sealedWith: sealedKeys(db),
    };
  } finally {
    db.close();
  }
}

/** Migrations the backup has and this build does not know: it was made by a newer pitcrew. */
export function newerMigrations(contents: BackupContents): string[] {
  const known = new Set(MIGRATION_NAMES);
  return contents.migrations.filter((name) => !known.has(name));
}

/** The migrations the backup records, in both of their tables (store/migrations.ts). */
function migrationsOf(db: SqliteDatabase.Database): string[] {
  const present = tablesOf(db);
  const tables = [MIGRATION_TABLE, LATER_MIGRATION_TABLE].filter((table) => present.has(table));
  return tables.flatMap((table) => db.prepare(`select name from ${table}`).pluck().all() as string[]).sort();
}

function openBackup(file: string): SqliteDatabase.Database {
  let db: SqliteDatabase.Database | undefined;
  try {
    db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
    const ok = db.pragma('quick_check', { simple: true });
    if (ok !== 'ok') throw new Error(`its integrity check says: ${String(ok)}`);
    const tables = tablesOf(db);
    const missing = [MIGRATION_TABLE, 'tenants', 'rules', 'events', 'executions'].filter((name) => !tables.has(name));
    if (missing.length > 0) throw new Error(`it has no ${missing.join(', ')} table`);
    return db;
  } catch (error) {
    db?.close();
    throw new Error(`${file} is not a pitcrew backup: ${(error as Error).message}`, { cause: error });
  }
}

function sealedKeys(db: SqliteDatabase.Database): BackupContents['sealedWith'] {
  const tables = tablesOf(db);
  const counts = new Map<string, number>();
  for (const { table, column } of SEALED_COLUMNS) {
    if (!tables.has(table)) continue;
    const values = db.prepare(`select "${column}" from "${table}" where "${column}" is not null`).pluck().all() as string[];
    for (const value of values) {
      const keyId = sealedKeyId(value);
      if (keyId) counts.set(keyId, (counts.get(keyId) ?? 0) + 1);
    }
  }
  return [...counts].map(([keyId, secrets]) => ({ keyId, secrets })).sort((a, b) => b.secrets - a.secrets);
}

function tablesOf(db: SqliteDatabase.Database): Set<string> {
  return new Set(db.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[]);
}

/** The backups of a scheduled run in `dir`, newest first: pitcrew-<time>.db, as `scheduledName` makes them. */
export function scheduledBackups(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((name) => SCHEDULED.test(name)).sort().reverse().map((name) => path.join(dir, name));
}

const SCHEDULED = /^pitcrew-\d{8}T\d{6}Z\.db$/;

/** A scheduled backup's file name: its time, so that names sort as times do. */
export function scheduledName(at: number): string {
  return `pitcrew-${new Date(at).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.db`;
}
