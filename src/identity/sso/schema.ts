import { Type, type Static } from 'typebox';
import { RoleMappingSchema } from './role-mapping.js';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Jit = Type.Boolean({ description: 'create a user at their first sign-in (just in time); when false only existing members of the tenant may sign in. Default true' });
const Required = Type.Boolean({ description: 'single sign-on required: password sign-in is off for this tenant. Default false' });

const oidcFields = {
  issuer: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'the issuer URL, e.g. https://accounts.google.com, https://YOUR.okta.com, https://login.microsoftonline.com/TENANT/v2.0, https://KEYCLOAK/realms/REALM (https, or http to localhost only)' }),
  clientId: Type.String({ minLength: 1, maxLength: 512 }),
  clientSecret: Type.String({ minLength: 1, maxLength: 4096, description: 'write-only: stored sealed, never returned; omit for a public client (PKCE only)' }),
  scopes: Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S+$' }), { maxItems: 20, description: 'default ["openid","email","profile"]; add e.g. "groups" where the provider gives groups only for that scope (Okta, Keycloak)' }),
};

export const OidcProviderInputSchema = Type.Object({
  type: Type.Literal('oidc'),
  name: Name,
  issuer: oidcFields.issuer,
  clientId: oidcFields.clientId,
  clientSecret: Type.Optional(oidcFields.clientSecret),
  scopes: Type.Optional(oidcFields.scopes),
  roleMapping: RoleMappingSchema,
  jit: Type.Optional(Jit),
  required: Type.Optional(Required),
}, { additionalProperties: false });

export const SamlProviderInputSchema = Type.Object({
  type: Type.Literal('saml'),
  name: Name,
  metadataXml: Type.String({ minLength: 1, maxLength: 262_144, description: "the identity provider's SAML metadata XML (entityID, SSO URL, signing certificate)" }),
  roleMapping: RoleMappingSchema,
  jit: Type.Optional(Jit),
  required: Type.Optional(Required),
}, { additionalProperties: false });

export const SsoProviderInputSchema = Type.Union([OidcProviderInputSchema, SamlProviderInputSchema]);
export type SsoProviderInput = Static<typeof SsoProviderInputSchema>;

export const SsoProviderPatchSchema = Type.Object({
  name: Type.Optional(Name),
  issuer: Type.Optional(oidcFields.issuer),
  clientId: Type.Optional(oidcFields.clientId),
  clientSecret: Type.Optional(Type.Union([oidcFields.clientSecret, Type.Null()], { description: 'a new secret, or null to remove it' })),
  scopes: Type.Optional(oidcFields.scopes),
  metadataXml: Type.Optional(SamlProviderInputSchema.properties.metadataXml),
  roleMapping: Type.Optional(RoleMappingSchema),
  jit: Type.Optional(Jit),
  required: Type.Optional(Required),
}, { additionalProperties: false });
export type SsoProviderPatch = Static<typeof SsoProviderPatchSchema>;

export const SsoProviderSchema = Type.Object({
  id: Type.String(),
  type: Type.Union([Type.Literal('oidc'), Type.Literal('saml')]),
  name: Type.String(),
  issuer: Type.Optional(Type.String()),
  clientId: Type.Optional(Type.String()),
  clientSecretSet: Type.Optional(Type.Boolean({ description: 'whether a client secret is stored (it is never returned)' })),
  scopes: Type.Optional(Type.Array(Type.String())),
  metadataXml: Type.Optional(Type.String()),
  idp: Type.Optional(Type.Object({ entityId: Type.String(), ssoUrl: Type.String() })),
  roleMapping: RoleMappingSchema,
  jit: Type.Boolean(),
  required: Type.Boolean(),
  startUrl: Type.String({ description: 'where the sign-in button sends the browser' }),
  testUrl: Type.String({ description: 'the "test sign-in": runs the flow and shows the claims and role, creating no session' }),
  callbackUrl: Type.String({ description: 'OIDC: the redirect URI to register at the provider; SAML: the ACS URL' }),
  metadataUrl: Type.Optional(Type.String({ description: 'SAML: the service provider metadata to load at the IdP (also its entity id)' })),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type SsoProviderView = Static<typeof SsoProviderSchema>;

/** What the sign-in page needs for one button. */
export const SignInProviderSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.Union([Type.Literal('oidc'), Type.Literal('saml')]),
  startUrl: Type.String(),
});
