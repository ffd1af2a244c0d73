import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { newId } from '../store/ids.js';
import { preparedQuery } from '../store/prepared.js';
import type { Database, SessionRow } from '../store/schema.js';
import type { SignInVia } from './principal.js';
import { hashSecret, secretMatches } from './secrets.js';

/** How long a session lives: idle (since its last call) and absolute (since sign-in). */
export interface SessionPolicy {
  idleMs: number;
  maxMs: number;
}

export const SESSION_DEFAULTS: SessionPolicy = { idleMs: 2 * 3600_000, maxMs: 12 * 3600_000 };

// last_seen_at decides the idle expiry; minute precision spares a write per call.
const SEEN_RESOLUTION_MS = 60_000;

export interface StartedSession {
  id: string;
  /** The cookie's value; only its hash is stored. */
  secret: string;
  /** Sent back by the UI in a header on every state-changing call (csrfTokenOf). */
  csrfToken: string;
  expiresAt: number;
}

export async function startSession(
  db: Kysely<Database>,
  { userId, tenantId, via, ip, now, policy = SESSION_DEFAULTS }: { userId: string; tenantId: string; via: Exclude<SignInVia, 'token'>; ip: string | null; now: number; policy?: SessionPolicy },
): Promise<StartedSession> {
  const secret = `pcs_${randomBytes(32).toString('hex')}`;
  const started = { id: newId(now), secret, csrfToken: csrfTokenOf(secret), expiresAt: now + policy.maxMs };
  await db
    .insertInto('sessions')
    .values({
      id: started.id, user_id: userId, tenant_id: tenantId, hash: hashSecret(secret), via, ip,
      created_at: now, last_seen_at: now, expires_at: started.expiresAt, revoked_at: null,
    })
    .execute();
  await db.updateTable('users').set({ last_sign_in_at: now, failed_logins: 0, locked_until: null }).where('id', '=', userId).execute();
  return started;
}

/** The live session the cookie's secret names, its idle time renewed; undefined when unknown, ended or expired. */
/** Every request of the UI asks it: built once (store/prepared.ts). */
const sessionByHash = preparedQuery((db, hash: string) => db.selectFrom('sessions').selectAll().where('hash', '=', hash));

export async function liveSession(db: Kysely<Database>, secret: string, now: number, policy: SessionPolicy = SESSION_DEFAULTS): Promise<SessionRow | undefined> {
  const [row] = await sessionByHash(db, hashSecret(secret));
  if (!row || !secretMatches(secret, row.hash) || row.revoked_at !== null) return undefined;
  if (now >= row.expires_at || now - row.last_seen_at >= policy.idleMs) return undefined;
  if (now - row.last_seen_at > SEEN_RESOLUTION_MS) {
    await db.updateTable('sessions').set({ last_seen_at: now }).where('id', '=', row.id).execute();
  }
  return row;
}

/**
 * The session's CSRF token, derived from the cookie's secret: the UI gets it from GET /me and sends
 * it in a header, which a page of another site can neither read nor make the browser send.
 */
export function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('pitcrew-csrf').digest('base64url');
}

export function csrfMatches(secret: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(csrfTokenOf(secret));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export async function endSession(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
}

/** Sign-out everywhere: every session of the user ends, in every tenant. */
export async function endSessionsOf(db: Kysely<Database>, userId: string, now: number, tenantId?: string): Promise<number> {
  let query = db.updateTable('sessions').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (tenantId) query = query.where('tenant_id', '=', tenantId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}
