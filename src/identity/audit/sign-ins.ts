import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { tenantsOf } from '../users.js';
import { appendAudit } from './repository.js';

/**
 * A sign-in refused for an account that exists (`session.refused`), in the log of each tenant the
 * person belongs to: their admins see attempts on their members. `lockedUntil` when this refusal
 * locked the account. A refusal for an e-mail nobody has names no tenant; the service log has it
 * ("sign-in refused").
 */
export async function recordSignInRefused(
  db: Kysely<Database>,
  refused: { userId: string; email: string | null; ip: string; reason: string; now: number; lockedUntil?: number | null },
): Promise<void> {
  const after = { reason: refused.reason, ...(refused.lockedUntil ? { lockedUntil: new Date(refused.lockedUntil).toISOString() } : {}) };
  for (const tenant of await tenantsOf(db, refused.userId)) {
    await appendAudit(db, {
      tenantId: tenant.id, at: refused.now, actor: { type: 'user', id: refused.userId, email: refused.email }, via: 'password', ip: refused.ip,
      action: 'session.refused', targetType: 'session', targetId: null, before: null, after,
    });
  }
}

/**
 * A single sign-on refused (`session.refused`), in the log of the provider's tenant: a wrong
 * audience or nonce, a replayed or expired answer, an unverified e-mail, a domain or group no
 * mapping names, someone just-in-time creation would have had to create. Nobody is known yet, so
 * the actor is anonymous, with the e-mail the provider's answer claimed (if it was read). The
 * reason is the one the person sees; neither holds a token, a code or an assertion.
 */
export async function recordSsoRefused(
  db: Kysely<Database>,
  refused: { tenantId: string; provider: { id: string; name: string; type: 'oidc' | 'saml' }; email: string | undefined; ip: string; reason: string; now: number },
): Promise<void> {
  const email = refused.email?.toLowerCase() ?? null;
  await appendAudit(db, {
    tenantId: refused.tenantId, at: refused.now, actor: { type: 'anonymous', email }, via: refused.provider.type, ip: refused.ip,
    action: 'session.refused', targetType: 'session', targetId: null, before: null,
    after: { reason: refused.reason, provider: refused.provider, ...(email ? { email } : {}) },
  });
}
