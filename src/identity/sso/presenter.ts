import type { SsoProviderRow } from './providers.js';
import { oidcConfigOf, roleMappingOf, samlConfigOf } from './providers.js';
import { serviceProviderFor } from './saml.js';
import { parseIdpMetadata } from './saml-metadata.js';
import type { SsoProviderView } from './schema.js';
import { oidcCallbackUrl } from './sign-in.js';

export function startUrlOf(providerId: string): string {
  return `/api/v1/auth/sso/${encodeURIComponent(providerId)}/start`;
}

/** A provider as the API shows it: settings and the URLs to register at the IdP; never the client secret. */
export async function presentProvider(row: SsoProviderRow, base: string): Promise<SsoProviderView> {
  const common = {
    id: row.id, type: row.type, name: row.name, roleMapping: roleMappingOf(row), jit: row.jit === 1, required: row.required === 1,
    startUrl: startUrlOf(row.id), testUrl: `${startUrlOf(row.id)}?test=1`,
    createdAt: new Date(row.created_at).toISOString(), updatedAt: new Date(row.updated_at).toISOString(),
  };
  if (row.type === 'oidc') {
    const config = oidcConfigOf(row);
    return { ...common, issuer: config.issuer, clientId: config.clientId, scopes: config.scopes, clientSecretSet: row.client_secret !== null, callbackUrl: oidcCallbackUrl(base, row.id) };
  }
  const sp = serviceProviderFor(base, row.id);
  const { metadataXml } = samlConfigOf(row);
  const idp = await parseIdpMetadata(metadataXml);
  return { ...common, metadataXml, ...('problem' in idp ? {} : { idp: { entityId: idp.entityId, ssoUrl: idp.ssoUrl } }), callbackUrl: sp.acsUrl, metadataUrl: sp.entityId };
}
