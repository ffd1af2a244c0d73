import type { Kysely } from 'kysely';
import { newId } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import { generateToken, hashSecret, secretMatches } from './secrets.js';

/** Who a management call acts as: the tenant, and the token that proved it (users come later). */
export interface Principal {
  tenantId: string;
  tokenId: string;
  /** The token's name as issued, for the records that say who asked (identity/requested-by.ts). */
  tokenName: string;
}

// last_used_at is for people ("is this token still in use?"); minute precision spares a write per call.
const LAST_USED_RESOLUTION_MS = 60_000;

export async function issueToken(db: Kysely<Database>, tenantId: string, name: string, now = Date.now()): Promise<string> {
  const token = generateToken();
  await db
    .insertInto('tokens')
    .values({ id: newId(now), tenant_id: tenantId, name, hash: hashSecret(token), created_at: now, last_used_at: null, revoked_at: null })
    .execute();
  return token;
}

export async function authenticateToken(db: Kysely<Database>, token: string, now = Date.now()): Promise<Principal | undefined> {
  const row = await db
    .selectFrom('tokens')
    .select(['id', 'tenant_id', 'name', 'hash', 'last_used_at'])
    .where('hash', '=', hashSecret(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row || !secretMatches(token, row.hash)) return undefined;
  if (row.last_used_at === null || now - row.last_used_at > LAST_USED_RESOLUTION_MS) {
    await db.updateTable('tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
  }
  return { tenantId: row.tenant_id, tokenId: row.id, tokenName: row.name };
}
