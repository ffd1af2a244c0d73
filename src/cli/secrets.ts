import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';
import { existingSecretKey, keyFingerprint, SECRET_KEY_FILE, SecretBox } from '../identity/secret-box.js';
import { rotateSecrets } from '../secrets/rotate.js';
import { openStore } from '../store/database.js';
import { CliError } from './client.js';

export const SECRETS_USAGE = `usage: pitcrew secrets rotate [--batch N] [--pause-ms MS]

Seals every stored secret again with the new key (PITCREW_SECRET_KEY, or the data directory's
secret.key), opening each with the key it replaces (PITCREW_SECRET_KEY_PREVIOUS). Run it with
the service's environment while the service runs; stopped anywhere, run it again: it goes on.
  --batch N       secrets sealed again per transaction (default 100)
  --pause-ms MS   a pause between transactions, to spare a busy database (default 0)
docs/operations.md#secret-key-rotation`;

export async function runSecrets(config: Config, args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  if (verb !== 'rotate') throw new CliError(SECRETS_USAGE, 2);
  const { values } = parseArgs({ args: rest, options: { batch: { type: 'string' }, 'pause-ms': { type: 'string' } }, strict: true });
  const batch = whole('--batch', values.batch ?? '100', 1, 10_000);
  const pauseMs = whole('--pause-ms', values['pause-ms'] ?? '0', 0, 60_000);
  const box = rotationBox(config);
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
  try {
    const report = await rotateSecrets(store.db, box, {
      batch,
      pauseMs,
      onProgress: ({ table, column, resealed, pending }) => console.log(`${table}.${column}: ${resealed} of ${pending} sealed with key ${box.keyId}`),
    });
    for (const { table, column, key, reason } of report.unopened) console.error(`pitcrew: ${table}.${column} of ${key} was left as it is: ${reason}`);
    if (report.unopened.length > 0) {
      console.error(`pitcrew: ${report.unopened.length} secret(s) open with neither key: set them again through the API (their owners above), then run this again`);
      return 1;
    }
    console.log(`every secret is sealed with key ${box.keyId} (${report.resealed} sealed again now). Remove PITCREW_SECRET_KEY_PREVIOUS from every node and restart them; key ${box.previousKeyId} opens nothing any more`);
    return 0;
  } finally {
    await store.close();
  }
}

/** The new key and the one it replaces, both required, and different. */
function rotationBox(config: Config): SecretBox {
  const key = existingSecretKey(config.dataDir, config.secretKey)?.key;
  if (!key) throw new CliError(`no new key: set PITCREW_SECRET_KEY (or put it in ${path.join(config.dataDir, SECRET_KEY_FILE)}) to the key the secrets are to be sealed with`);
  if (!config.secretKeyPrevious) throw new CliError('set PITCREW_SECRET_KEY_PREVIOUS to the key being replaced: the secrets are opened with it');
  if (keyFingerprint(key) === keyFingerprint(config.secretKeyPrevious)) throw new CliError('PITCREW_SECRET_KEY and PITCREW_SECRET_KEY_PREVIOUS are the same key: set PITCREW_SECRET_KEY to the new one');
  return new SecretBox(key, config.secretKeyPrevious);
}

function whole(flag: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new CliError(`${flag} must be a whole number from ${min} to ${max}, got "${raw}"`, 2);
  return Number(raw);
}
