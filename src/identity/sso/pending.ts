import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';

/** How long a person has between the start of a sign-in and the identity provider's answer. */
export const PENDING_TTL_MS = 10 * 60 * 1000;

/** A started sign-in: what its answer is checked against, where the person goes after, and whether it is a test. */
export interface PendingSignIn {
  providerId: string;
  /** OIDC only: the nonce and PKCE verifier the answer must match (the state is the key). */
  nonce?: string;
  codeVerifier?: string;
  returnTo: string;
  test: boolean;
  /** The hash of the cookie the starting browser got: the answer must come back through the same browser. */
  browser?: string;
}

export async function savePending(db: Kysely<Database>, key: string, pending: PendingSignIn, now: number): Promise<void> {
  await db.deleteFrom('sso_pending').where('expires_at', '<', now).execute();
  const { providerId, ...data } = pending;
  await db.insertInto('sso_pending').values({ key, provider_id: providerId, data: JSON.stringify(data), expires_at: now + PENDING_TTL_MS }).execute();
}

/**
 * The sign-in started with `key`, removed in the same statement that reads it, so a state or
 * request id answers once even when two nodes receive the same answer at once (a replay).
 * Undefined when unknown, already used, expired, or started for another provider.
 */
export async function takePending(db: Kysely<Database>, key: string, providerId: string, now: number): Promise<PendingSignIn | undefined> {
  const row = await db.deleteFrom('sso_pending').where('key', '=', key).returning(['provider_id', 'data', 'expires_at']).executeTakeFirst();
  if (!row || row.provider_id !== providerId || row.expires_at < now) return undefined;
  return { providerId, ...(JSON.parse(row.data) as Omit<PendingSignIn, 'providerId'>) };
}

/** The sign-in waiting under `key` for this provider, left in place: to tell how to present a refused answer. */
export async function peekPending(db: Kysely<Database>, key: string, providerId: string, now: number): Promise<PendingSignIn | undefined> {
  const row = await db.selectFrom('sso_pending').select(['data']).where('key', '=', key).where('provider_id', '=', providerId).where('expires_at', '>=', now).executeTakeFirst();
  return row ? { providerId, ...(JSON.parse(row.data) as Omit<PendingSignIn, 'providerId'>) } : undefined;
}

/** Whether a sign-in is waiting under `key`, without using it (node-saml asks before it validates). */
export async function hasPending(db: Kysely<Database>, key: string, now: number): Promise<boolean> {
  const row = await db.selectFrom('sso_pending').select('key').where('key', '=', key).where('expires_at', '>=', now).executeTakeFirst();
  return row !== undefined;
}
