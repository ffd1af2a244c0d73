import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { SecretBoxError, type SecretBox } from '../identity/secret-box.js';
import type { Database } from '../store/schema.js';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.js';

export interface RotationOptions {
  /** Rows sealed again per transaction. */
  batch: number;
  /** A pause between two transactions, to spare a busy database. */
  pauseMs: number;
  /** After each committed batch: how far this column is. */
  onProgress?(progress: { table: string; column: string; resealed: number; pending: number }): void;
}

export interface RotationReport {
  /** The fingerprint every secret is sealed with now, unless some could not be opened. */
  keyId: string;
  resealed: number;
  /** Values neither key opens (sealed with a third key, or altered): named, left as they are. */
  unopened: Array<{ table: string; column: string; key: string; reason: string }>;
}

/**
 * Seals every stored secret again with the box's key (docs/operations.md, "Secret-key rotation"),
 * opening each with the key that sealed it (the box's previous key). Online: batch by batch, each
 * a transaction whose updates are compare-and-set on the old value, so a secret the service
 * changed meanwhile (sealed with the new key already) is left alone. Resumable: a run stopped
 * anywhere is run again, and only values not yet sealed with the new key are read. Nothing is
 * written in clear: a plain text exists only in this process, between open and seal.
 */
export async function rotateSecrets(db: Kysely<Database>, box: SecretBox, options: RotationOptions): Promise<RotationReport> {
  const report: RotationReport = { keyId: box.keyId, resealed: 0, unopened: [] };
  for (const column of SEALED_COLUMNS) await rotateColumn(db, box, column, options, report);
  return report;
}

async function rotateColumn(db: Kysely<Database>, box: SecretBox, sealed: SealedColumn, options: RotationOptions, report: RotationReport): Promise<void> {
  const { table, column, key } = sealed;
  const current = `v1:${box.keyId}:%`;
  const notCurrent = sql`${sql.ref(column)} is not null and ${sql.ref(column)} not like ${current}`;
  const pending = Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${notCurrent}`.execute(db)).rows[0]?.n ?? 0);
  let resealed = 0;
  let after = '';
  for (;;) {
    const rows = (await sql<{ k: string; v: string }>`select ${sql.ref(key)} as k, ${sql.ref(column)} as v from ${sql.table(table)} where ${notCurrent} and ${sql.ref(key)} > ${after} order by ${sql.ref(key)} limit ${options.batch}`.execute(db)).rows;
    if (rows.length === 0) return;
    after = rows.at(-1)!.k;
    const changes: Array<{ k: string; from: string; to: string }> = [];
    for (const row of rows) {
      try {
        const to = box.reseal(row.v, sealed.owner(row.k));
        if (to) changes.push({ k: row.k, from: row.v, to });
      } catch (error) {
        if (!(error instanceof SecretBoxError)) throw error;
        report.unopened.push({ table, column, key: row.k, reason: error.message });
      }
    }
    const done = await db.transaction().execute(async (tx) => {
      let updated = 0;
      for (const change of changes) {
        const result = await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${change.to} where ${sql.ref(key)} = ${change.k} and ${sql.ref(column)} = ${change.from}`.execute(tx);
        updated += Number(result.numAffectedRows ?? 0);
      }
      return updated;
    });
    resealed += done;
    report.resealed += done;
    options.onProgress?.({ table, column, resealed, pending });
    if (options.pauseMs > 0) await sleep(options.pauseMs);
  }
}
