import type { Kysely } from 'kysely';
import { newId } from '../store/ids.js';
import { preparedQuery } from '../store/prepared.js';
import type { Database } from '../store/schema.js';
import type { Principal } from './principal.js';
import { isRole, lesserRole, type Role } from './roles.js';
import { generateToken, hashSecret, secretMatches } from './secrets.js';

// last_used_at is for people ("is this token still in use?"); minute precision spares a write per call.
const LAST_USED_RESOLUTION_MS = 60_000;

export interface TokenRequest {
  tenantId: string;
  userId: string;
  name: string;
  /** At most the user's role; absent: the user's role, whatever it becomes. */
  role?: Role | undefined;
  expiresAt?: number | undefined;
}

/** A personal access token of a member of the tenant; the token itself is returned once, stored hashed. */
export async function issueToken(db: Kysely<Database>, request: TokenRequest, now = Date.now()): Promise<{ id: string; token: string }> {
  const token = generateToken();
  const id = newId(now);
  await db
    .insertInto('tokens')
    .values({
      id, tenant_id: request.tenantId, user_id: request.userId, name: request.name, hash: hashSecret(token), role: request.role ?? null,
      expires_at: request.expiresAt ?? null, created_at: now, last_used_at: null, revoked_at: null,
    })
    .execute();
  return { id, token };
}

/** Every management request asks it: built once (store/prepared.ts). */
const liveTokenByHash = preparedQuery((db, hash: string) => db
  .selectFrom('tokens')
  .innerJoin('memberships', (join) => join.onRef('memberships.user_id', '=', 'tokens.user_id').onRef('memberships.tenant_id', '=', 'tokens.tenant_id'))
  .innerJoin('users', 'users.id', 'tokens.user_id')
  .select(['tokens.id', 'tokens.tenant_id', 'tokens.name', 'tokens.hash', 'tokens.last_used_at', 'tokens.role as token_role', 'tokens.expires_at', 'memberships.role as member_role', 'users.id as user_id', 'users.email', 'users.disabled_at'])
  .where('tokens.hash', '=', hash)
  .where('tokens.revoked_at', 'is', null));

/** The principal of a live token whose user is still a member of its tenant; undefined otherwise. */
export async function authenticateToken(db: Kysely<Database>, token: string, now = Date.now()): Promise<Principal | undefined> {
  const [row] = await liveTokenByHash(db, hashSecret(token));
  if (!row || !secretMatches(token, row.hash) || row.disabled_at !== null) return undefined;
  if (row.expires_at !== null && now >= row.expires_at) return undefined;
  if (!isRole(row.member_role)) return undefined;
  if (row.last_used_at === null || now - row.last_used_at > LAST_USED_RESOLUTION_MS) {
    await db.updateTable('tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
  }
  const role = isRole(row.token_role) ? lesserRole(row.token_role, row.member_role) : row.member_role;
  return { tenantId: row.tenant_id, role, userId: row.user_id, email: row.email, via: 'token', tokenId: row.id, tokenName: row.name, sessionId: null };
}
