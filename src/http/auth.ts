import type { FastifyReply, FastifyRequest } from 'fastify';
import { PitcrewError } from '../errors/catalogue.js';
import { authenticateToken, type Principal } from '../identity/tokens.js';
import type { Store } from '../store/database.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;

/** onRequest hook for the management API: a bearer token names the tenant every call acts in. */
export function bearerAuth(store: Store) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const match = BEARER.exec(request.headers.authorization ?? '');
    const challenge = { 'WWW-Authenticate': 'Bearer realm="pitcrew"' };
    if (!match?.[1]) {
      throw new PitcrewError('PITCREW_ERR_UNAUTHENTICATED', 'send a management token as "Authorization: Bearer <token>" (npx pitcrew bootstrap --json prints one)', { headers: challenge });
    }
    const principal = await authenticateToken(store.db, match[1]);
    if (!principal) {
      throw new PitcrewError('PITCREW_ERR_UNAUTHENTICATED', 'the bearer token is unknown or revoked; issue a new one with npx pitcrew bootstrap --json --new (add --tenant NAME for a tenant other than "default")', { headers: challenge });
    }
    request.principal = principal;
  };
}
