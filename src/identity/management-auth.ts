import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { PitcrewError } from '../errors/catalogue.js';
import type { Database } from '../store/schema.js';
import { ROLE_KEY, SIGNED_LINK_KEY, type RouteAccess } from './access.js';
import { authenticateSession } from './authenticate.js';
import type { Principal } from './principal.js';
import { roleAtLeast, type Role } from './roles.js';
import { CSRF_HEADER, sessionSecretOf } from './session-cookies.js';
import type { SessionPolicy } from './sessions.js';
import { authenticateToken } from './tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="pitcrew"' };

export interface AuthDeps {
  db: Kysely<Database>;
  sessions: SessionPolicy;
  clock: () => number;
}

/** The role a route declared with access() (identity/access.ts). */
export function declaredAccess(request: FastifyRequest): RouteAccess | undefined {
  return (request.routeOptions.schema as Record<string, unknown> | undefined)?.[ROLE_KEY] as RouteAccess | undefined;
}

/** A call by a signed link to a route that takes one: the route checks the signature (an unsigned call is authenticated as any other). */
function signedLink(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema as Record<string, unknown> | undefined;
  return schema?.[SIGNED_LINK_KEY] === true && typeof (request.query as Record<string, unknown> | undefined)?.sig === 'string';
}

/**
 * onRequest hook of the management API: a personal access token (Authorization: Bearer) or the
 * UI's session cookie (with its CSRF token on state-changing calls) names the user and tenant;
 * the route's declared role decides. A route that declared none is refused, not let through.
 */
export function managementAuth(deps: AuthDeps) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const needed = declaredAccess(request);
    if (needed === 'public' || signedLink(request)) return;
    if (needed === undefined) throw new PitcrewError('PITCREW_ERR_INTERNAL', `the route ${request.routeOptions.url ?? ''} declares no role; nothing was done`);
    request.principal = await authenticate(deps, request);
    if (!roleAtLeast(request.principal.role, needed)) throw forbidden(request.principal.role, needed);
  };
}

async function authenticate(deps: AuthDeps, request: FastifyRequest): Promise<Principal> {
  const bearer = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (bearer) {
    const principal = await authenticateToken(deps.db, bearer, deps.clock());
    if (!principal) throw unauthenticated('the bearer token is unknown, expired or revoked, or its user is no longer a member of the tenant; issue a new one on the UI\'s Tokens page or with POST /api/v1/tokens (the first owner: npx pitcrew bootstrap --json --new)');
    return principal;
  }
  const secret = sessionSecretOf(request);
  if (!secret) throw unauthenticated('sign in on the web UI, or send a personal access token as "Authorization: Bearer <token>" (npx pitcrew bootstrap --json prints the first owner\'s)');
  const csrf = request.headers[CSRF_HEADER];
  const session = await authenticateSession(deps.db, secret, typeof csrf === 'string' ? csrf : undefined, deps.clock(), deps.sessions);
  if (!session) throw unauthenticated('your session has ended (signed out, expired, or your membership changed); sign in again');
  if (!SAFE_METHODS.has(request.method) && !session.csrfOk) {
    throw new PitcrewError('PITCREW_ERR_CSRF', `a ${request.method} with the session cookie must carry the session's CSRF token in the ${CSRF_HEADER} header (GET /api/v1/me returns it); nothing was done`);
  }
  return session.principal;
}

function unauthenticated(detail: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_UNAUTHENTICATED', detail, { headers: CHALLENGE });
}

function forbidden(have: Role, needed: Role): PitcrewError {
  return new PitcrewError('PITCREW_ERR_FORBIDDEN', `this needs the ${needed} role in this tenant; you act as ${have}. Ask an owner or admin of the tenant for the role, or use a token issued with it`);
}
