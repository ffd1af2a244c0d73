import fs from 'node:fs';
import path from 'node:path';
import { backupTo, WHOLE, type BackupContents } from '../backups/backup.js';
import { restoreInto } from '../backups/restore.js';
import type { Config } from '../config/config.js';
import { existingSecretKey, keyFingerprint } from '../identity/secret-box.js';
import { openStore } from '../store/database.js';
import { sized } from '../store/disk.js';
import { CliError } from './client.js';

/** `pitcrew backup FILE`: a consistent copy of the running service's SQLite database, and what it holds. */
export async function runBackup(config: Config, file: string, options: { json: boolean }): Promise<number> {
  if (config.databaseUrl) throw new CliError('pitcrew backup copies the embedded SQLite database; DATABASE_URL selects PostgreSQL: back it up with pg_dump or pg_basebackup (docs/operations.md#postgresql)');
  const database = path.join(config.dataDir, 'pitcrew.db');
  if (!fs.existsSync(database)) throw new CliError(`no database at ${database}: set PITCREW_DATA_DIR to the service's data directory`);
  const target = path.resolve(file);
  const started = Date.now();
  const store = openStore({ dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
  let contents: BackupContents;
  try {
    contents = await backupTo(store, target, WHOLE).catch((error: unknown) => {
      throw new CliError((error as Error).message);
    });
  } finally {
    await store.close();
  }
  const key = serviceKey(config);
  if (options.json) {
    console.log(JSON.stringify({ ...contents, seconds: (Date.now() - started) / 1000, serviceKey: key }));
    return 0;
  }
  console.log([
    `backup written to ${target} (${sized(contents.bytes)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ...describe(contents),
    ...keyAdvice(contents, key),
  ].join('\n'));
  return 0;
}

/** `pitcrew restore FILE [--secret-key-file PATH]`: the backup into an empty PITCREW_DATA_DIR. */
export async function runRestore(config: Config, file: string, options: { secretKeyFile: string | undefined }): Promise<number> {
  if (config.databaseUrl) throw new CliError('pitcrew restore writes the embedded SQLite database; DATABASE_URL selects PostgreSQL: restore it with pg_restore or psql (docs/operations.md#postgresql)');
  const restored = await restoreInto({ file: path.resolve(file), dataDir: config.dataDir, configuredKey: config.secretKey, secretKeyFile: options.secretKeyFile }).catch((error: unknown) => {
    throw new CliError((error as Error).message);
  });
  console.log([
    `restored ${restored.contents.file} into ${config.dataDir}`,
    ...describe(restored.contents),
    restored.key ? `  key        ${restored.key.fingerprint} (${restored.key.source}) opens its secrets` : '  key        the backup holds no secret',
    restored.pending.length > 0 ? `The next start applies ${restored.pending.length} migration(s) to it (${restored.pending.join(', ')}).` : 'Its schema is this version\'s.',
    'Start the service on it: npx pitcrew server',
  ].join('\n'));
  return 0;
}

function describe(contents: BackupContents): string[] {
  const number = (n: number) => n.toLocaleString('en-US');
  return [
    `  schema     ${contents.schemaVersion ?? 'none'} (${contents.migrations.length} migrations)`,
    `  tenants    ${number(contents.tenants)}`,
    `  rules      ${number(contents.rules)}`,
    `  events     ${number(contents.events)}`,
    `  executions ${number(contents.executions)}`,
    contents.sealedWith.length === 0
      ? '  secrets    none'
      : `  secrets    ${contents.sealedWith.map((entry) => `${number(entry.secrets)} sealed with key ${entry.keyId}`).join(', ')}`,
  ];
}

/** The key the service opens its secrets with, as a fingerprint and where it lives (never the key itself). */
function serviceKey(config: Config): { fingerprint: string; source: string } | undefined {
  const found = existingSecretKey(config.dataDir, config.secretKey);
  return found && { fingerprint: keyFingerprint(found.key), source: found.source };
}

function keyAdvice(contents: BackupContents, key: { fingerprint: string; source: string } | undefined): string[] {
  if (contents.sealedWith.length === 0) return [];
  const where = key && contents.sealedWith.every((entry) => entry.keyId === key.fingerprint) ? ` (${key.source})` : '';
  return [
    `The secrets stay sealed: restoring needs the key ${contents.sealedWith.map((entry) => entry.keyId).join(', ')}${where}.`,
    'Keep that key apart from this file: PITCREW_SECRET_KEY, or the secret.key file given to pitcrew restore --secret-key-file.',
  ];
}
