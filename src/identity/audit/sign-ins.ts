import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { tenantsOf } from '../users.js';
import { appendAudit } from './repository.js';

/**
 * A sign-in refused for an account that exists (`session.refused`), in the log of each tenant the
 * person belongs to: their admins see attempts on their members. A refusal for an e-mail nobody
 * has names no tenant; the service log has it ("sign-in refused").
 */
export async function recordSignInRefused(db: Kysely<Database>, refused: { userId: string; email: string | null; ip: string; reason: string; now: number }): Promise<void> {
  for (const tenant of await tenantsOf(db, refused.userId)) {
    await appendAudit(db, {
      tenantId: tenant.id, at: refused.now, actor: { type: 'user', id: refused.userId, email: refused.email }, via: 'password', ip: refused.ip,
      action: 'session.refused', targetType: 'session', targetId: null, before: null, after: { reason: refused.reason },
    });
  }
}
