import type { Role } from '../identity/roles.js';
import { Type } from 'typebox';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../store/pagination.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'PITCREW_ERR_* (docs/errors.md)' }),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' },
);

const problemReply = {
  description: 'problem details',
  content: { 'application/problem+json': { schema: Type.Unsafe({ $ref: 'Problem#' }) } },
};

/** OpenAPI entries for the error replies a route can give, under their real media type. */
export function problems(...statuses: number[]): Record<number, typeof problemReply> {
  return Object.fromEntries(statuses.map((status) => [status, problemReply]));
}

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
};

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export function pageOf<T extends ReturnType<typeof Type.Object>>(item: T) {
  return Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });
}

export const bearer: { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, { sessionCookie: [] }];

/** The role a route needs, declared with it; `public`: no sign-in (sign-in itself, SSO callbacks). */
export type RouteAccess = Role | 'public';
export const ROLE_KEY = 'x-pitcrew-role';

/**
 * Spread into a management route's schema: who may call it (a personal access token or the UI's
 * session) and the least role it needs. The auth hook reads it; the OpenAPI document shows it.
 */
export function access(role: RouteAccess): { security: typeof bearer; [ROLE_KEY]: RouteAccess } {
  return { security: role === 'public' ? [] : bearer, [ROLE_KEY]: role };
}
