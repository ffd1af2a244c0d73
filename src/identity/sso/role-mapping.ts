import { Type, type Static } from 'typebox';
import { ROLES, type Role } from '../roles.js';

export type SsoRole = Role;

const RoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('admin'), Type.Literal('owner')]);

/** Public OpenID providers (Google-style): the verified e-mail's domain gives the role. */
export const DomainMappingSchema = Type.Object({
  domains: Type.Record(Type.String({ minLength: 1 }), RoleSchema, { description: 'e-mail domain (lower case) → role, e.g. {"example.com": "operator"}' }),
}, { additionalProperties: false });

/** Enterprise OpenID providers (Okta, Entra ID, Keycloak): a group claim gives the role. */
export const ClaimMappingSchema = Type.Object({
  claim: Type.String({ minLength: 1, description: 'the ID token or userinfo claim holding the groups, e.g. "groups"' }),
  groups: Type.Record(Type.String({ minLength: 1 }), RoleSchema, { description: 'group → role; the highest matching role wins' }),
  default: Type.Optional(RoleSchema),
}, { additionalProperties: false });

/** SAML identity providers: an assertion attribute gives the role. */
export const AttributeMappingSchema = Type.Object({
  attribute: Type.String({ minLength: 1, description: 'the assertion attribute holding the groups, e.g. "groups" or a URI' }),
  values: Type.Record(Type.String({ minLength: 1 }), RoleSchema, { description: 'attribute value → role; the highest matching role wins' }),
  default: Type.Optional(RoleSchema),
}, { additionalProperties: false });

export const RoleMappingSchema = Type.Union([DomainMappingSchema, ClaimMappingSchema, AttributeMappingSchema]);
export type RoleMapping = Static<typeof RoleMappingSchema>;

/** What a provider asserted about the person, as claims (OIDC) or attributes (SAML). */
export type Claims = Record<string, unknown>;

export type MappedIdentity =
  | { ok: true; email: string; role: SsoRole }
  | { ok: false; reason: string };

/**
 * Who a sign-in is and which role it gets, or why it is refused: a pure decision on what the
 * identity provider asserted (already verified: signature, audience, expiry) and the provider's
 * mapping. A person no mapping names is refused rather than given a least role, so an identity
 * provider open to the whole world (Google) lets in only the domains the tenant listed.
 */
export function mapIdentity(mapping: RoleMapping, claims: Claims): MappedIdentity {
  if ('domains' in mapping) return mapByDomain(mapping, claims);
  const email = assertedEmail(claims);
  if (!email) return { ok: false, reason: 'the identity provider sent no e-mail address (ask for the "email" scope, or map an e-mail attribute)' };
  if (claims.email_verified === false) return { ok: false, reason: `the identity provider says the e-mail ${email} is not verified` };
  const [name, table, fallback] = 'claim' in mapping
    ? [mapping.claim, mapping.groups, mapping.default]
    : [mapping.attribute, mapping.values, mapping.default];
  const values = valuesOf(claims[name]);
  const role = highest(values.map((value) => table[value]));
  if (role) return { ok: true, email, role };
  if (fallback) return { ok: true, email, role: fallback };
  const sent = values.length === 0 ? `no "${name}" values` : `"${name}" values ${values.map((value) => JSON.stringify(value)).join(', ')}`;
  return { ok: false, reason: `${email} has ${sent}, and none of them is mapped to a role (nor is there a default role)` };
}

function mapByDomain(mapping: Static<typeof DomainMappingSchema>, claims: Claims): MappedIdentity {
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  if (!email) return { ok: false, reason: 'the identity provider sent no e-mail address (ask for the "email" scope)' };
  // A public provider lets anyone name any address; only one it has verified says who this is.
  if (claims.email_verified !== true) return { ok: false, reason: `the identity provider has not verified the e-mail ${email}` };
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const role = Object.entries(mapping.domains).find(([mapped]) => mapped.toLowerCase() === domain)?.[1];
  return role ? { ok: true, email, role } : { ok: false, reason: `the e-mail domain ${domain} is not mapped to a role for this provider` };
}

const EMAIL_CLAIMS = ['email', 'mail', 'urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress', 'preferred_username', 'nameID'];

/** The first claim that holds an e-mail address, lower-cased: providers name it differently. */
export function assertedEmail(claims: Claims): string | undefined {
  for (const name of EMAIL_CLAIMS) {
    const value = valuesOf(claims[name])[0];
    if (value && /^[^@\s]+@[^@\s]+$/.test(value)) return value.toLowerCase();
  }
  return undefined;
}

function valuesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((one): one is string => typeof one === 'string') : [];
}

function highest(roles: readonly (SsoRole | undefined)[]): SsoRole | undefined {
  return roles.reduce<SsoRole | undefined>((best, role) => (role && (!best || ROLES.indexOf(role) > ROLES.indexOf(best)) ? role : best), undefined);
}
