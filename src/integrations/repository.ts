import type { Kysely } from 'kysely';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import type { SecretBox } from '../identity/secret-box.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, IntegrationRow } from '../store/schema.js';
import { nameTaken } from '../store/unique.js';
import type { IntegrationInput, IntegrationPatch, IntegrationType } from './schema.js';
import { graphSecretErrors, sealGraphSecret } from './graph-secret.js';
import { configErrors } from './tools.js';

type Db = Kysely<Database>;

export async function createIntegration(db: Db, box: SecretBox, tenantId: string, input: IntegrationInput, now = Date.now()): Promise<IntegrationRow> {
  assertConfig(input.type, input.config ?? {});
  if (input.graphSecret !== undefined) assertGraphSecret(input.type, input.graphSecret);
  const id = newId(now);
  const row: IntegrationRow = {
    id,
    tenant_id: tenantId,
    name: input.name.trim(),
    type: input.type,
    config: JSON.stringify(input.config ?? {}),
    secret: input.secret === undefined ? null : box.seal(input.secret, id),
    graph_secret: input.graphSecret === undefined ? null : sealGraphSecret(box, id, input.graphSecret),
    created_at: now,
    updated_at: now,
    deleted_at: null,
    last_alert_at: null,
    last_error: null,
    last_error_at: null,
  };
  await uniqueName(db, tenantId, row.name);
  await db.insertInto('integrations').values(row).execute();
  return row;
}

export async function getIntegration(db: Db, tenantId: string, id: string): Promise<IntegrationRow> {
  const row = await db.selectFrom('integrations').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).executeTakeFirst();
  if (!row) throw notFound('integration', id);
  return row;
}

export async function listIntegrations(db: Db, tenantId: string, page: PageRequest): Promise<IntegrationRow[]> {
  let query = db.selectFrom('integrations').selectAll().where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  if (page.after) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/** Given fields replace stored ones; config is replaced whole; a secret (or graph secret) left out is kept, null removes it. */
export async function updateIntegration(db: Db, box: SecretBox, current: IntegrationRow, patch: IntegrationPatch, now = Date.now()): Promise<IntegrationRow> {
  const changes: Partial<IntegrationRow> = { updated_at: now };
  if (patch.name !== undefined) {
    changes.name = patch.name.trim();
    if (changes.name !== current.name) await uniqueName(db, current.tenant_id, changes.name);
  }
  if (patch.config !== undefined) {
    assertConfig(current.type as IntegrationType, patch.config);
    changes.config = JSON.stringify(patch.config);
  }
  if (patch.secret !== undefined) changes.secret = patch.secret === null ? null : box.seal(patch.secret, current.id);
  if (patch.graphSecret !== undefined && patch.graphSecret !== null) assertGraphSecret(current.type as IntegrationType, patch.graphSecret);
  if (patch.graphSecret !== undefined) changes.graph_secret = patch.graphSecret === null ? null : sealGraphSecret(box, current.id, patch.graphSecret);
  await db.updateTable('integrations').set(changes).where('id', '=', current.id).execute();
  return { ...current, ...changes };
}

/** Soft delete: the URL stops taking alerts; its rules no longer fire; recorded events stay readable. */
export async function deleteIntegration(db: Db, tenantId: string, id: string, now = Date.now()): Promise<void> {
  const deleted = await db.updateTable('integrations').set({ deleted_at: now }).where('id', '=', id).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).executeTakeFirst();
  if (Number(deleted.numUpdatedRows) === 0) throw notFound('integration', id);
}

/** The integration's secret, opened (a signing secret or a token). */
export function openSecret(box: SecretBox, row: IntegrationRow): string | undefined {
  return row.secret === null ? undefined : box.open(row.secret, row.id);
}

/** Why the last delivery was refused, as people see it on the integration (the last alert taken: delivery-stamps.ts). */
export async function recordRefusal(db: Db, id: string, error: string, now = Date.now()): Promise<void> {
  await db.updateTable('integrations').set({ last_error: error.slice(0, 2000), last_error_at: now }).where('id', '=', id).execute();
}

function assertConfig(type: IntegrationType, config: Record<string, unknown>): void {
  const errors = configErrors(type, config);
  if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}`, { fieldErrors: errors });
}

function assertGraphSecret(type: IntegrationType, secret: unknown): void {
  const errors = graphSecretErrors(type, secret, '/body/graphSecret');
  if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', errors[0]!.message, { fieldErrors: errors });
}

/** Names are unique among live integrations; a deleted one frees its name. */
async function uniqueName(db: Db, tenantId: string, name: string): Promise<void> {
  const taken = await db.selectFrom('integrations').select('id').where('tenant_id', '=', tenantId).where('name', '=', name).where('deleted_at', 'is', null).executeTakeFirst();
  if (taken) throw nameTaken('integration', name);
}
