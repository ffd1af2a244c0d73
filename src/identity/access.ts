import { bearer } from '../http/schemas.js';
import type { Role } from './roles.js';

/** The role a route needs, declared with it; `public`: no sign-in (sign-in itself, SSO callbacks). */
export type RouteAccess = Role | 'public';
export const ROLE_KEY = 'x-pitcrew-role';

/**
 * Spread into a management route's schema: who may call it (a personal access token or the UI's
 * session) and the least role it needs. The auth hook (identity/management-auth.ts) reads it; the
 * OpenAPI document shows it.
 */
export function access(role: RouteAccess): { security: typeof bearer; [ROLE_KEY]: RouteAccess } {
  return { security: role === 'public' ? [] : bearer, [ROLE_KEY]: role };
}
