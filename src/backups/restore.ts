import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { keyFingerprint, readSecretKeyFile, SECRET_KEY_FILE } from '../identity/secret-box.js';
import { MIGRATION_NAMES } from '../store/migrations.js';
import { describeBackup, newerMigrations, WHOLE, type BackupContents } from './backup.js';

export interface RestoreRequest {
  /** The backup file (`pitcrew backup FILE`). */
  file: string;
  /** PITCREW_DATA_DIR: empty or absent. */
  dataDir: string;
  /** PITCREW_SECRET_KEY, when set: the key the restored service will open its secrets with. */
  configuredKey: Buffer | undefined;
  /** A secret.key file to put in the data directory (the one the backed-up service used). */
  secretKeyFile: string | undefined;
}

export interface Restored {
  contents: BackupContents;
  /** Where the restored service's key comes from, or undefined when the backup holds no secret. */
  key: { fingerprint: string; source: string } | undefined;
  /** Migrations the next start applies to the copy, which an older pitcrew made. */
  pending: string[];
}

/**
 * Puts a backup into an empty data directory (docs/operations.md, "Backup and restore"). Refused,
 * before anything is written: a data directory that holds anything (a restore never mixes two
 * services' data nor overwrites one), a file that is not a whole pitcrew backup, a backup of a
 * newer pitcrew (its schema has migrations this build does not know), and a backup whose secrets
 * the key given would not open (or no key given when it has secrets).
 */
export async function restoreInto(request: RestoreRequest): Promise<Restored> {
  assertEmpty(request.dataDir);
  const contents = describeBackup(request.file);
  const newer = newerMigrations(contents);
  if (newer.length > 0) {
    throw new Error(`${request.file} was made by a newer pitcrew (schema ${contents.schemaVersion}; this one knows up to ${MIGRATION_NAMES.at(-1)}): restore it with that version or a later one`);
  }
  const key = restoredKey(request, contents);
  fs.mkdirSync(request.dataDir, { recursive: true });
  const target = path.join(request.dataDir, 'pitcrew.db');
  const source = new SqliteDatabase(request.file, { readonly: true, fileMustExist: true });
  try {
    await source.backup(`${target}.partial`, { progress: () => WHOLE });
  } finally {
    source.close();
  }
  fs.renameSync(`${target}.partial`, target);
  if (request.secretKeyFile && !request.configuredKey) {
    fs.writeFileSync(path.join(request.dataDir, SECRET_KEY_FILE), `${readSecretKeyFile(request.secretKeyFile).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  }
  const pending = MIGRATION_NAMES.filter((name) => !contents.migrations.includes(name));
  return { contents, key, pending };
}

function assertEmpty(dataDir: string): void {
  if (!fs.existsSync(dataDir)) return;
  const entries = fs.readdirSync(dataDir);
  if (entries.length === 0) return;
  const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, and ${entries.length - 5} more` : '');
  throw new Error(`the data directory ${dataDir} is not empty (it holds ${shown}): restore only into an empty one, so that nothing is overwritten nor mixed with another service's data (set PITCREW_DATA_DIR to a new directory)`);
}

/** The key the restored service will use, checked against the fingerprints the backup's secrets carry. */
function restoredKey(request: RestoreRequest, contents: BackupContents): Restored['key'] {
  if (request.configuredKey && request.secretKeyFile) throw new Error('PITCREW_SECRET_KEY is set and --secret-key-file given: give the key one way (the service would use PITCREW_SECRET_KEY)');
  const given = request.configuredKey
    ? { key: request.configuredKey, source: 'PITCREW_SECRET_KEY' }
    : request.secretKeyFile ? { key: readSecretKeyFile(request.secretKeyFile), source: request.secretKeyFile } : undefined;
  const needed = contents.sealedWith.map((entry) => entry.keyId);
  if (needed.length === 0) return given && { fingerprint: keyFingerprint(given.key), source: given.source };
  const sealed = contents.sealedWith.map((entry) => `${entry.secrets} with key ${entry.keyId}`).join(', ');
  if (!given) {
    throw new Error(`the backup's secrets are sealed (${sealed}): set PITCREW_SECRET_KEY to that key, or give --secret-key-file with the secret.key file of the service it came from`);
  }
  const fingerprint = keyFingerprint(given.key);
  const unopened = needed.filter((keyId) => keyId !== fingerprint);
  if (unopened.length > 0) {
    throw new Error(`the backup's secrets are sealed (${sealed}), and the key of ${given.source} is ${fingerprint}: give the key ${unopened.join(', ')}, or the restored service could not open them`);
  }
  return { fingerprint, source: given.source };
}
