import type { Store } from '../../store/database.js';
import { writeTransaction } from '../../store/write-transaction.js';
import type { Role } from '../roles.js';
import { createUser, findUserByEmail, membershipOf, setMembership } from '../users.js';

export type AccountDecision = { ok: true; userId: string; role: Role } | { ok: false; reason: string };

/**
 * The pitcrew user a verified single sign-on becomes, in the provider's tenant. The identity
 * provider's groups decide the role at each sign-in (a person moved out of "sre-admins" loses
 * admin at their next sign-in), except that an owner stays owner: a mapping cannot take the
 * tenant from the people who own it. Without just-in-time creation only existing members pass.
 */
export async function accountFor(
  store: Pick<Store, 'db' | 'dialect'>,
  { tenantId, email, role, jit, now }: { tenantId: string; email: string; role: Role; jit: boolean; now: number },
): Promise<AccountDecision> {
  return writeTransaction(store, async (tx) => {
    const existing = await findUserByEmail(tx, email);
    if (existing?.disabled_at != null) return { ok: false, reason: `the account ${email} is disabled in pitcrew; ask an admin of the tenant` };
    const membership = existing ? await membershipOf(tx, existing.id, tenantId) : undefined;
    if (!membership && !jit) {
      return { ok: false, reason: `${email} is not a member of this tenant, and this provider creates no users (just-in-time creation is off): ask an admin to invite ${email}, or turn on jit for the provider` };
    }
    const user = existing ?? (await createUser(tx, { email, now }));
    const kept: Role = membership?.role === 'owner' ? 'owner' : role;
    if (membership?.role !== kept) await setMembership(tx, { userId: user.id, tenantId, role: kept, now });
    return { ok: true, userId: user.id, role: kept };
  });
}
