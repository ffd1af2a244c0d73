import type { Kysely } from 'kysely';
import { notFound, PitcrewError, type FieldError } from '../../errors/catalogue.js';
import { newId } from '../../store/ids.js';
import type { Database, SsoProvidersTable } from '../../store/schema.js';
import { withUniqueName } from '../../store/unique.js';
import type { SecretBox } from '../secret-box.js';
import type { OidcSettings } from './oidc.js';
import type { RoleMapping } from './role-mapping.js';
import { parseIdpMetadata, type IdpMetadata } from './saml-metadata.js';
import type { SsoProviderInput, SsoProviderPatch } from './schema.js';
import { isLoopbackUrl } from './urls.js';

type Db = Kysely<Database>;
export type SsoProviderRow = SsoProvidersTable;

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

interface OidcConfig { issuer: string; clientId: string; scopes: string[] }
interface SamlConfig { metadataXml: string }

export async function createProvider(db: Db, box: SecretBox, tenantId: string, input: SsoProviderInput, now = Date.now()): Promise<SsoProviderRow> {
  const id = newId(now);
  const config = input.type === 'oidc'
    ? { issuer: input.issuer, clientId: input.clientId, scopes: input.scopes ?? DEFAULT_SCOPES }
    : { metadataXml: input.metadataXml };
  const row: SsoProviderRow = {
    id,
    tenant_id: tenantId,
    type: input.type,
    name: input.name.trim(),
    config: JSON.stringify(config),
    client_secret: input.type === 'oidc' && input.clientSecret ? box.seal(input.clientSecret, id) : null,
    role_mapping: JSON.stringify(input.roleMapping),
    jit: input.jit === false ? 0 : 1,
    required: input.required ? 1 : 0,
    created_at: now,
    updated_at: now,
  };
  await assertUsable(row);
  await withUniqueName('sign-in provider', row.name, () => db.insertInto('sso_providers').values(row).execute());
  return row;
}

/** A provider by id, whichever tenant it is of: the sign-in routes are reached before anyone is known. */
export async function findProvider(db: Db, id: string): Promise<SsoProviderRow | undefined> {
  return db.selectFrom('sso_providers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function getProvider(db: Db, tenantId: string, id: string): Promise<SsoProviderRow> {
  const row = await db.selectFrom('sso_providers').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('sign-in provider', id);
  return row;
}

export async function listProviders(db: Db, tenantId: string): Promise<SsoProviderRow[]> {
  return db.selectFrom('sso_providers').selectAll().where('tenant_id', '=', tenantId).orderBy('name').execute();
}

export async function updateProvider(db: Db, box: SecretBox, current: SsoProviderRow, patch: SsoProviderPatch, now = Date.now()): Promise<SsoProviderRow> {
  const next: SsoProviderRow = { ...current, updated_at: now };
  if (patch.name !== undefined) next.name = patch.name.trim();
  if (patch.roleMapping !== undefined) next.role_mapping = JSON.stringify(patch.roleMapping);
  if (patch.jit !== undefined) next.jit = patch.jit ? 1 : 0;
  if (patch.required !== undefined) next.required = patch.required ? 1 : 0;
  next.config = JSON.stringify(patchedConfig(current, patch));
  if (patch.clientSecret !== undefined) next.client_secret = patch.clientSecret === null ? null : box.seal(patch.clientSecret, current.id);
  await assertUsable(next);
  await withUniqueName('sign-in provider', next.name, () => db.updateTable('sso_providers').set(next).where('id', '=', current.id).execute());
  return next;
}

export async function deleteProvider(db: Db, tenantId: string, id: string): Promise<void> {
  const result = await db.deleteFrom('sso_providers').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw notFound('sign-in provider', id);
}

/** Whether the tenant turned password sign-in off: one of its providers says SSO is required. */
export async function ssoRequired(db: Db, tenantId: string): Promise<boolean> {
  const row = await db.selectFrom('sso_providers').select('id').where('tenant_id', '=', tenantId).where('required', '=', 1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Why password sign-in is refused to a member of these tenants, naming the button to use, when
 * each of them requires single sign-on; undefined when one of them still allows passwords.
 */
export async function ssoRequiredReason(db: Db, tenantIds: readonly string[]): Promise<string | undefined> {
  if (tenantIds.length === 0) return undefined;
  const rows = await db.selectFrom('sso_providers').innerJoin('tenants', 'tenants.id', 'sso_providers.tenant_id')
    .select(['sso_providers.tenant_id as tenantId', 'sso_providers.name as name', 'tenants.name as tenant'])
    .where('sso_providers.tenant_id', 'in', [...tenantIds]).where('sso_providers.required', '=', 1).execute();
  if (new Set(rows.map((row) => row.tenantId)).size < tenantIds.length) return undefined;
  const buttons = [...new Set(rows.map((row) => `"Sign in with ${row.name}"`))].join(' or ');
  return `tenant ${rows[0]?.tenant ?? ''} requires single sign-on, so password sign-in is off: use the ${buttons} button on the sign-in page`;
}

export function roleMappingOf(row: SsoProviderRow): RoleMapping {
  return JSON.parse(row.role_mapping) as RoleMapping;
}

export function oidcConfigOf(row: SsoProviderRow): OidcConfig {
  return JSON.parse(row.config) as OidcConfig;
}

export function samlConfigOf(row: SsoProviderRow): SamlConfig {
  return JSON.parse(row.config) as SamlConfig;
}

/** The OIDC settings with the client secret opened: only for talking to the provider. */
export function oidcSettingsOf(row: SsoProviderRow, box: SecretBox): OidcSettings {
  const config = oidcConfigOf(row);
  return { ...config, clientSecret: row.client_secret ? box.open(row.client_secret, row.id) : undefined };
}

export async function idpOf(row: SsoProviderRow): Promise<IdpMetadata> {
  const idp = await parseIdpMetadata(samlConfigOf(row).metadataXml);
  if ('problem' in idp) throw new PitcrewError('PITCREW_ERR_VALIDATION', `the stored SAML metadata is not usable: ${idp.problem}`);
  return idp;
}

function patchedConfig(current: SsoProviderRow, patch: SsoProviderPatch): OidcConfig | SamlConfig {
  if (current.type === 'saml') return { metadataXml: patch.metadataXml ?? samlConfigOf(current).metadataXml };
  const config = oidcConfigOf(current);
  return { issuer: patch.issuer ?? config.issuer, clientId: patch.clientId ?? config.clientId, scopes: patch.scopes ?? config.scopes };
}

/** What makes a provider unusable, told before it is saved rather than at someone's sign-in. */
async function assertUsable(row: SsoProviderRow): Promise<void> {
  const problems: FieldError[] = [];
  const mapping = roleMappingOf(row);
  if (row.type === 'oidc') {
    const config = oidcConfigOf(row);
    if (!config.issuer.startsWith('https://') && !isLoopbackUrl(config.issuer)) problems.push({ path: '/body/issuer', message: 'must be https (plain http only to localhost)' });
    if (!config.scopes.includes('openid')) problems.push({ path: '/body/scopes', message: 'must include "openid"' });
    if ('attribute' in mapping) problems.push({ path: '/body/roleMapping', message: 'an OpenID provider maps {domains} (public providers) or {claim, groups} (enterprise ones), not a SAML {attribute}' });
  } else {
    const idp = await parseIdpMetadata(samlConfigOf(row).metadataXml);
    if ('problem' in idp) problems.push({ path: '/body/metadataXml', message: idp.problem });
    if (!('attribute' in mapping)) problems.push({ path: '/body/roleMapping', message: 'a SAML provider maps {attribute, values, default?}' });
  }
  if (problems.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', problems.map((problem) => `${problem.path.replace('/body/', '')} ${problem.message}`).join('; '), { fieldErrors: problems });
}
