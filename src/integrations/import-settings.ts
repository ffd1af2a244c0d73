import type { Kysely } from 'kysely';
import { getCredential } from '../credentials/repository.js';
import { PitcrewError, type FieldError } from '../errors/catalogue.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { Database, IntegrationImportRow, IntegrationRow } from '../store/schema.js';
import { importNeeds, IMPORTING_TOOLS } from './import-needs.js';
import { IMPORT_DEFAULTS, type ImportPatch, type ImportSettingsView, type ImportState } from './import-schema.js';
import type { IntegrationType } from './schema.js';
import { preparedQuery } from '../store/prepared.js';

/**
 * The storage of an integration's import settings (import-schema.ts) and of its last import's
 * status, shown on the integration. The runs themselves, their schedule and the cursor they
 * advance are src/imports/'s, which write here through the functions below.
 */

/** The sealed secret's owner: bound to the integration and to its import, so no other sealed value opens in its place. */
export function importSecretOwner(integrationId: string): string {
  return `${integrationId}:import`;
}

export async function importSettingsOf(db: Kysely<Database>, integrationIds: string[]): Promise<Map<string, IntegrationImportRow>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await db.selectFrom('integration_imports').selectAll().where('integration_id', 'in', integrationIds).execute();
  return new Map(rows.map((row) => [row.integration_id, row]));
}

export async function importSettings(db: Kysely<Database>, integrationId: string): Promise<IntegrationImportRow | undefined> {
  return db.selectFrom('integration_imports').selectAll().where('integration_id', '=', integrationId).executeTakeFirst();
}

/**
 * Sets an integration's import: given fields replace stored ones, absent ones stay; a secret and a
 * credential exclude each other. Turning the schedule on makes an import due at once. The cursor
 * and the status are the runs' and are left alone.
 */
export async function configureImport(db: Kysely<Database>, box: SecretBox, integration: IntegrationRow, patch: ImportPatch, now = Date.now()): Promise<IntegrationImportRow> {
  const type = integration.type as IntegrationType;
  const needs = importNeeds(type);
  if (!needs) {
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `pitcrew does not import alarms from ${type} integrations in this version; it does from: ${IMPORTING_TOOLS.join(', ')}`, {
      fieldErrors: [{ path: '/body/import', message: `no import for type ${type}` }],
    });
  }
  if (patch.credentialId && patch.secret) {
    throw invalidImport('/body/import', 'give either credentialId (a stored credential) or secret, not both');
  }
  const current = await importSettings(db, integration.id);
  let credentialProvider: string | undefined;
  if (patch.credentialId) {
    const credential = await getCredential(db, integration.tenant_id, patch.credentialId).catch(() => {
      throw invalidImport('/body/import/credentialId', `credential ${patch.credentialId} does not exist in this tenant`);
    });
    if (!needs.credentialProviders.includes(credential.provider)) {
      const wanted = needs.credentialProviders.length > 0 ? `a ${needs.credentialProviders.join(' or ')} credential` : 'a secret, not a stored credential';
      throw invalidImport('/body/import/credentialId', `credential "${credential.name}" is a ${credential.provider} credential; a ${type} import reads with ${wanted}`);
    }
    credentialProvider = credential.provider;
  }
  if (patch.secret !== undefined && patch.secret !== null) {
    const errors = needs.secretErrors(patch.secret, '/body/import/secret');
    if (errors.length > 0) throw invalidImport(errors[0]!.path, errors[0]!.message, errors);
  }

  const secret = patch.secret === undefined ? (patch.credentialId ? null : current?.secret ?? null) : patch.secret === null ? null : box.seal(JSON.stringify(patch.secret), importSecretOwner(integration.id));
  const credentialId = patch.credentialId === undefined ? (patch.secret ? null : current?.credential_id ?? null) : patch.credentialId;
  const interval = patch.intervalSeconds ?? current?.interval_seconds ?? IMPORT_DEFAULTS.intervalSeconds;
  if (patch.enabled) {
    const errors = needs.settingsErrors({
      config: JSON.parse(integration.config) as Record<string, unknown>,
      hasSecret: secret !== null,
      credentialProvider: credentialProvider ?? (credentialId !== null ? 'stored' : undefined),
      integrationHasSecret: integration.secret !== null,
    });
    if (errors.length > 0) throw invalidImport(errors[0]!.path, errors[0]!.message, errors);
  }
  const wasEnabled = current?.enabled === 1;
  const nextAt = !patch.enabled ? null : !wasEnabled || current?.next_at == null ? now : Math.min(Number(current.next_at), now + interval * 1000);
  const settings = {
    enabled: patch.enabled ? 1 : 0,
    interval_seconds: interval,
    lookback_days: patch.lookbackDays ?? current?.lookback_days ?? IMPORT_DEFAULTS.lookbackDays,
    requests_per_second: patch.requestsPerSecond ?? current?.requests_per_second ?? IMPORT_DEFAULTS.requestsPerSecond,
    credential_id: credentialId,
    secret,
    next_at: nextAt,
    updated_at: now,
  };
  await db.insertInto('integration_imports')
    .values({
      integration_id: integration.id, tenant_id: integration.tenant_id, ...settings, cursor: null,
      last_import_id: null, last_state: null, last_started_at: null, last_ended_at: null, last_imported: null, last_error: null, last_error_at: null,
      imported_total: 0, created_at: now,
    })
    .onConflict((conflict) => conflict.column('integration_id').doUpdateSet(settings))
    .execute();
  return (await importSettings(db, integration.id))!;
}

/** The import's secret, opened and parsed (a string or an object, as it was given). */
export function openImportSecret(box: SecretBox, row: IntegrationImportRow): unknown {
  return row.secret === null ? undefined : JSON.parse(box.open(row.secret, importSecretOwner(row.integration_id))) as unknown;
}

export function presentImportSettings(row: IntegrationImportRow | undefined): ImportSettingsView | null {
  if (!row) return null;
  const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return {
    enabled: row.enabled === 1,
    intervalSeconds: row.interval_seconds,
    lookbackDays: row.lookback_days,
    requestsPerSecond: Number(row.requests_per_second),
    credentialId: row.credential_id,
    hasSecret: row.secret !== null,
    nextAt: iso(row.next_at),
    status: {
      lastImportId: row.last_import_id,
      state: row.last_state as ImportState | null,
      startedAt: iso(row.last_started_at),
      endedAt: iso(row.last_ended_at),
      imported: row.last_imported,
      importedTotal: Number(row.imported_total),
      lastError: row.last_error,
      lastErrorAt: iso(row.last_error_at),
    },
  };
}

function invalidImport(path: string, message: string, fieldErrors: FieldError[] = [{ path, message }]): PitcrewError {
  return new PitcrewError('PITCREW_ERR_VALIDATION', `${path.replace('/body/', '').replaceAll('/', '.')}: ${message}`, { fieldErrors });
}

/** The status columns of an integration's last import, as src/imports/ records them. */
export interface ImportStatus {
  last_import_id?: string;
  last_state?: ImportState;
  last_started_at?: number | null;
  last_ended_at?: number | null;
  last_imported?: number;
  last_error?: string;
  last_error_at?: number;
}

export async function recordImportStatus(db: Kysely<Database>, integrationId: string, status: ImportStatus): Promise<void> {
  await db.updateTable('integration_imports').set(status).where('integration_id', '=', integrationId).execute();
}

/** A page applied: where the tool's reading stopped, and what it added (in the page's transaction). */
export async function advanceImport(db: Kysely<Database>, integrationId: string, page: { cursor: string; added: number; lastImported: number }): Promise<void> {
  await db.updateTable('integration_imports')
    .set((eb) => ({ cursor: page.cursor, imported_total: eb('imported_total', '+', page.added), last_imported: page.lastImported }))
    .where('integration_id', '=', integrationId)
    .execute();
}

/** Imports whose schedule is due, of integrations not deleted. */
export const dueImports: (db: Kysely<Database>, now: number, limit: number) => Promise<Array<Pick<IntegrationImportRow, 'integration_id' | 'tenant_id' | 'next_at' | 'interval_seconds'>>> = preparedQuery((db, now: number, limit: number) => db
  .selectFrom('integration_imports')
  .innerJoin('integrations', 'integrations.id', 'integration_imports.integration_id')
  .select(['integration_imports.integration_id', 'integration_imports.tenant_id', 'integration_imports.next_at', 'integration_imports.interval_seconds'])
  .where('integration_imports.enabled', '=', 1)
  .where('integration_imports.next_at', '<=', now)
  .where('integrations.deleted_at', 'is', null)
  .orderBy('integration_imports.next_at')
  .limit(limit));

/** Moves a due schedule on, compare-and-set on the time it was due: true for the one caller that moved it. */
export async function moveImportSchedule(db: Kysely<Database>, integrationId: string, dueAt: number, nextAt: number): Promise<boolean> {
  const moved = await db.updateTable('integration_imports').set({ next_at: nextAt }).where('integration_id', '=', integrationId).where('next_at', '=', dueAt).where('enabled', '=', 1).executeTakeFirst();
  return Number(moved.numUpdatedRows) > 0;
}
