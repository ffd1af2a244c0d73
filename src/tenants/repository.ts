import type { Kysely } from 'kysely';
import { PitcrewError, notFound } from '../errors/catalogue.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { ApiKeyRow, Database, TenantRow } from '../store/schema.js';
import { formatScopes, parseScopes, widening, type ApiKeyScope } from './scopes.js';
import { generateApiKey, hashSecret } from '../identity/secrets.js';

export interface ThrottleSettings {
  ratePerSecond: number;
  burst: number;
}

export interface IssuedApiKey {
  row: ApiKeyRow;
  /** The key itself: returned once, never stored. */
  apiKey: string;
}

type Db = Kysely<Database>;

export async function findTenantByName(db: Db, name: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function getTenant(db: Db, id: string): Promise<TenantRow> {
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('tenant', id);
  return row;
}

export async function createTenant(db: Db, name: string, now = Date.now()): Promise<TenantRow> {
  const row = { id: newId(now), name, ip_allowlist: '[]', agent_allowlist: '[]', throttle: null, created_at: now };
  await db.insertInto('tenants').values(row).execute();
  return { ...row, ...DEFAULT_INCIDENT_SETTINGS };
}

export async function updateTenantSettings(
  db: Db,
  id: string,
  settings: { ipAllowlist?: string[] | undefined; agentAllowlist?: string[] | undefined; throttle?: ThrottleSettings | null | undefined; incidents?: Partial<IncidentSettings> | undefined },
): Promise<TenantRow> {
  const changes: Partial<TenantRow> = {};
  if (settings.incidents?.automationWindowSeconds !== undefined) changes.incident_automation_seconds = settings.incidents.automationWindowSeconds;
  if (settings.incidents?.quietSeconds !== undefined) changes.incident_quiet_seconds = settings.incidents.quietSeconds;
  if (settings.ipAllowlist !== undefined) changes.ip_allowlist = JSON.stringify(settings.ipAllowlist);
  if (settings.agentAllowlist !== undefined) changes.agent_allowlist = JSON.stringify(settings.agentAllowlist);
  if (settings.throttle !== undefined) changes.throttle = settings.throttle ? JSON.stringify(settings.throttle) : null;
  if (Object.keys(changes).length > 0) await db.updateTable('tenants').set(changes).where('id', '=', id).execute();
  return getTenant(db, id);
}

export async function issueApiKey(db: Db, tenantId: string, name: string, scopes: readonly ApiKeyScope[], now = Date.now()): Promise<IssuedApiKey> {
  const apiKey = generateApiKey();
  const row: ApiKeyRow = {
    id: newId(now),
    tenant_id: tenantId,
    name,
    hash: hashSecret(apiKey),
    hint: apiKey.slice(-4),
    created_at: now,
    last_used_at: null,
    revoked_at: null,
    replaced_by: null,
    scopes: formatScopes(scopes),
  };
  await db.insertInto('api_keys').values(row).execute();
  return { row, apiKey };
}

export async function listApiKeys(db: Db, tenantId: string, page: PageRequest): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId);
  if (page.after) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/**
 * Revokes a key and issues its replacement in one transaction: the old key fails from the next
 * request on (ingress re-checks revocation inside the transaction that stores each event).
 */
export async function revokeAndReplaceApiKey(db: Db, tenantId: string, keyId: string, now = Date.now()): Promise<IssuedApiKey> {
  return db.transaction().execute(async (tx) => {
    const old = await tx.selectFrom('api_keys').selectAll().where('id', '=', keyId).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!old) throw notFound('API key', keyId);
    if (old.revoked_at !== null) {
      throw new PitcrewError('PITCREW_ERR_CONFLICT', `API key ${keyId} is already revoked; its replacement is ${old.replaced_by ?? 'unknown'}`);
    }
    // The replacement does what the old key did: no wider, no narrower.
    const issued = await issueApiKey(tx, tenantId, old.name, parseScopes(old.scopes), now);
    const updated = await tx
      .updateTable('api_keys')
      .set({ revoked_at: now, replaced_by: issued.row.id })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) {
      throw new PitcrewError('PITCREW_ERR_CONFLICT', `API key ${keyId} was revoked by another request at the same time`);
    }
    return issued;
  });
}

/**
 * Narrows what a key may do. Scopes are only ever taken away: a key that travelled in webhook
 * URLs must not become able to enrol agents later; a key for another purpose is a new key.
 */
export async function narrowApiKeyScopes(db: Db, tenantId: string, keyId: string, scopes: readonly ApiKeyScope[]): Promise<ApiKeyRow> {
  return db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('api_keys').selectAll().where('id', '=', keyId).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!row) throw notFound('API key', keyId);
    if (row.revoked_at !== null) throw new PitcrewError('PITCREW_ERR_CONFLICT', `API key ${keyId} is revoked; change the scopes of its replacement ${row.replaced_by ?? ''}`.trim());
    const added = widening(parseScopes(row.scopes), scopes);
    if (added.length > 0) {
      throw new PitcrewError('PITCREW_ERR_CONFLICT', `API key "${row.name}" cannot gain the ${added.join(' and ')} scope: scopes are only narrowed. Issue a new key with POST /api/v1/api-keys {"name":…,"scopes":${JSON.stringify(added)}}`);
    }
    const updated = { ...row, scopes: formatScopes(scopes) };
    await tx.updateTable('api_keys').set({ scopes: updated.scopes }).where('id', '=', keyId).execute();
    return updated;
  });
}

export interface ActiveKey {
  keyId: string;
  keyName: string;
  scopes: ApiKeyScope[];
  tenant: TenantRow;
}

export async function findActiveApiKey(db: Db, apiKey: string): Promise<ActiveKey | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
    .select([
      'api_keys.id as key_id', 'api_keys.name as key_name', 'api_keys.scopes', 'tenants.id', 'tenants.name',
      'tenants.ip_allowlist', 'tenants.agent_allowlist', 'tenants.throttle', 'tenants.created_at', 'tenants.incident_automation_seconds', 'tenants.incident_quiet_seconds',
    ])
    .where('api_keys.hash', '=', hashSecret(apiKey))
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_id, key_name, scopes, ...tenant } = row;
  return { keyId: key_id, keyName: key_name, scopes: parseScopes(scopes), tenant };
}

/** A key still current, with its scopes, read again inside a transaction that acts on it. */
export async function currentKeyScopes(db: Db, keyId: string): Promise<ApiKeyScope[] | undefined> {
  const row = await db.selectFrom('api_keys').select('scopes').where('id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  return row && parseScopes(row.scopes);
}

export function parseAllowlist(row: TenantRow): string[] {
  return JSON.parse(row.ip_allowlist) as string[];
}

export function parseAgentAllowlist(row: TenantRow): string[] {
  return JSON.parse(row.agent_allowlist) as string[];
}

/** A tenant's incident settings (docs/incidents.md): how long after a pitcrew fix a resolution is automation's; how long a webhook incident stays open without another call. */
export interface IncidentSettings {
  automationWindowSeconds: number;
  quietSeconds: number;
}

/** Migration 0026's column defaults: an hour, half an hour. */
const DEFAULT_INCIDENT_SETTINGS = { incident_automation_seconds: 3600, incident_quiet_seconds: 1800 };

export function incidentSettingsOf(row: TenantRow): IncidentSettings {
  return { automationWindowSeconds: row.incident_automation_seconds, quietSeconds: row.incident_quiet_seconds };
}

export function parseThrottle(row: TenantRow): ThrottleSettings | null {
  return row.throttle ? (JSON.parse(row.throttle) as ThrottleSettings) : null;
}
