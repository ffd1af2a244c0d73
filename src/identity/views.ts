import { Type } from 'typebox';
import { ROLES } from './roles.js';

export const RoleSchema = Type.Enum([...ROLES], { description: 'owner > admin > operator > viewer' });

export const MeView = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.Union([Type.String(), Type.Null()]), totp: Type.Boolean({ description: 'whether a second factor is set' }) }),
  tenants: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), role: RoleSchema })),
  tenantId: Type.String({ description: 'the tenant this session or token acts in' }),
  role: RoleSchema,
  via: Type.String({ description: 'how the caller proved who they are: token, password, oidc, saml or link' }),
  csrfToken: Type.Union([Type.String(), Type.Null()], { description: 'for a session: send it as x-pitcrew-csrf on every POST, PUT, PATCH and DELETE; null for a token' }),
});
