import type { Kysely } from 'kysely';
import { preparedQuery } from '../store/prepared.js';
import type { Database } from '../store/schema.js';
import type { Principal, SignInVia } from './principal.js';
import { isRole } from './roles.js';
import { csrfMatches, liveSession, SESSION_DEFAULTS, type SessionPolicy } from './sessions.js';

export interface SessionPrincipal {
  principal: Principal;
  /** Whether the request carried the session's CSRF token. */
  csrfOk: boolean;
}

/** Every request of the UI asks it: built once (store/prepared.ts). */
const membership = preparedQuery((db, userId: string, tenantId: string) => db
  .selectFrom('memberships')
  .innerJoin('users', 'users.id', 'memberships.user_id')
  .select(['memberships.role', 'users.email', 'users.disabled_at'])
  .where('memberships.user_id', '=', userId)
  .where('memberships.tenant_id', '=', tenantId));

/** The principal of a live session whose user is still a member of the session's tenant. */
export async function authenticateSession(
  db: Kysely<Database>, secret: string, csrfToken: string | undefined, now: number, policy: SessionPolicy = SESSION_DEFAULTS,
): Promise<SessionPrincipal | undefined> {
  const session = await liveSession(db, secret, now, policy);
  if (!session) return undefined;
  const [member] = await membership(db, session.user_id, session.tenant_id);
  if (!member || member.disabled_at !== null || !isRole(member.role)) return undefined;
  return {
    principal: {
      tenantId: session.tenant_id, role: member.role, userId: session.user_id, email: member.email, via: session.via as SignInVia,
      tokenId: null, tokenName: null, sessionId: session.id,
    },
    csrfOk: csrfMatches(secret, csrfToken),
  };
}
