import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { newId } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import { hashSecret } from './secrets.js';

/** invite: a new member sets their password (also the first owner's bootstrap link); reset: a member sets a new one. */
export type LinkPurpose = 'invite' | 'reset';

export const LINK_LIFETIME_MS: Record<LinkPurpose, number> = { invite: 7 * 86_400_000, reset: 3600_000 };

export interface IssuedLink {
  id: string;
  /** The link's last segment (`/accept/<secret>`); only its hash is stored. */
  secret: string;
  expiresAt: number;
}

export async function issueLink(
  db: Kysely<Database>,
  { tenantId, userId, purpose, createdBy, now }: { tenantId: string; userId: string; purpose: LinkPurpose; createdBy: string | null; now: number },
): Promise<IssuedLink> {
  const secret = randomBytes(32).toString('base64url');
  const link = { id: newId(now), secret, expiresAt: now + LINK_LIFETIME_MS[purpose] };
  await db
    .insertInto('invitations')
    .values({ id: link.id, tenant_id: tenantId, user_id: userId, purpose, hash: hashSecret(secret), created_by: createdBy, created_at: now, expires_at: link.expiresAt, used_at: null })
    .execute();
  return link;
}

export interface RedeemedLink {
  id: string;
  tenantId: string;
  userId: string;
  purpose: LinkPurpose;
}

/** Marks the link used and returns it, once; undefined when unknown, used or expired. */
export async function redeemLink(db: Kysely<Database>, secret: string, now: number): Promise<RedeemedLink | undefined> {
  const row = await db.selectFrom('invitations').selectAll().where('hash', '=', hashSecret(secret)).executeTakeFirst();
  if (!row || row.used_at !== null || now >= row.expires_at) return undefined;
  const used = await db.updateTable('invitations').set({ used_at: now }).where('id', '=', row.id).where('used_at', 'is', null).executeTakeFirst();
  if (Number(used.numUpdatedRows) !== 1) return undefined;
  return { id: row.id, tenantId: row.tenant_id, userId: row.user_id, purpose: row.purpose as LinkPurpose };
}

/** The link, while it can still be used (unknown, used or expired: undefined); nothing changes. */
export async function peekLink(db: Kysely<Database>, secret: string, now: number): Promise<Omit<RedeemedLink, 'id'> | undefined> {
  const row = await db.selectFrom('invitations').select(['tenant_id', 'user_id', 'purpose', 'used_at', 'expires_at']).where('hash', '=', hashSecret(secret)).executeTakeFirst();
  if (!row || row.used_at !== null || now >= row.expires_at) return undefined;
  return { tenantId: row.tenant_id, userId: row.user_id, purpose: row.purpose as LinkPurpose };
}

/** The path a person opens in the UI to use the link. */
export function linkPath(secret: string): string {
  return `/accept/${secret}`;
}
