import { bearer } from '../http/schemas.js';
import type { Role } from './roles.js';

/** The role a route needs, declared with it; `public`: no sign-in (sign-in itself, SSO callbacks). */
export type RouteAccess = Role | 'public';
export const ROLE_KEY = 'x-pitcrew-role';
/** Marks a route that also opens to a signed link (`?sig=&exp=`), checked by the route itself (snapshots/signed-link.ts). */
export const SIGNED_LINK_KEY = 'x-pitcrew-signed-link';

/**
 * Spread into a management route's schema: who may call it (a personal access token or the UI's
 * session) and the least role it needs. The auth hook (identity/management-auth.ts) reads it; the
 * OpenAPI document shows it.
 */
export function access(role: RouteAccess): { security: typeof bearer; [ROLE_KEY]: RouteAccess } {
  return { security: role === 'public' ? [] : bearer, [ROLE_KEY]: role };
}

/** A read that a signed link opens too: with `?sig=` the route checks the signature itself, without it the role decides. */
export function accessOrSignedLink(role: Role): ReturnType<typeof access> & { [SIGNED_LINK_KEY]: true } {
  return { ...access(role), [SIGNED_LINK_KEY]: true };
}
