import type { Kysely } from 'kysely';
import { issueLink, linkPath } from '../identity/invitations.js';
import { issueToken } from '../identity/tokens.js';
import { createUser, setMembership } from '../identity/users.js';
import type { Store } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { writeTransaction } from '../store/write-transaction.js';
import { createTenant, findTenantByName, issueApiKey } from './repository.js';
import { ALL_SCOPES, type ApiKeyScope } from './scopes.js';

export interface BootstrapResult {
  tenantId: string;
  apiKey: string;
  token: string;
  /** What apiKey may do: both, so the quick start's one key fires the webhook and enrols the agent. */
  apiKeyScopes: ApiKeyScope[];
  /** The first owner's one-time link (path of the UI) to set an e-mail and password; null once someone has. */
  signInPath: string | null;
}

/** The keys and tokens a tenant holds that nobody revoked: all still work. */
export interface StillValid {
  apiKeys: number;
  tokens: number;
}

/** What bootstrap did: the key and token it issued, and what the tenant held before (null: it made the tenant). */
export interface Bootstrapped extends BootstrapResult {
  earlier: StillValid | null;
}

/**
 * Bootstrap met a tenant of that name and was not asked for another key and token: issuing them
 * quietly would leave one more key with both scopes, and the earlier ones, valid (issue 36).
 */
export class TenantExistsError extends Error {
  constructor(readonly tenantName: string, readonly tenantId: string, readonly earlier: StillValid) {
    super(`tenant "${tenantName}" exists already`);
  }
}

/**
 * Creates the tenant, then issues an API key and a management token for it. For a tenant that
 * exists, it issues them only when asked `again` (else TenantExistsError): the earlier ones stay
 * valid. The key has both scopes (docs/tenants.md says to narrow it, or to issue single-purpose
 * keys, once the tenant is set up): the quick start uses the one key for the webhook and the agent.
 */
export async function bootstrapTenant(store: Pick<Store, 'db' | 'dialect'>, name: string, options: { again?: boolean } = {}): Promise<Bootstrapped> {
  // The quick start runs it beside the running server: a transaction that may wait for the server's writes.
  return writeTransaction(store, async (tx) => {
    const existing = await findTenantByName(tx, name);
    const earlier = existing ? await stillValid(tx, existing.id) : null;
    if (existing && earlier && !options.again) throw new TenantExistsError(name, existing.id, earlier);
    const tenant = existing ?? (await createTenant(tx, name));
    const { apiKey } = await issueApiKey(tx, tenant.id, 'bootstrap', ALL_SCOPES);
    const now = Date.now();
    const owner = await firstOwner(tx, tenant.id, now);
    const { token } = await issueToken(tx, { tenantId: tenant.id, userId: owner.id, name: 'bootstrap' }, now);
    const link = owner.claimed ? null : await issueLink(tx, { tenantId: tenant.id, userId: owner.id, purpose: 'invite', createdBy: null, now });
    return { tenantId: tenant.id, apiKey, token, apiKeyScopes: [...ALL_SCOPES], signInPath: link && linkPath(link.secret), earlier };
  });
}

async function stillValid(db: Kysely<Database>, tenantId: string): Promise<StillValid> {
  const count = async (table: 'api_keys' | 'tokens') => {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return { apiKeys: await count('api_keys'), tokens: await count('tokens') };
}

/** The tenant's earliest owner, made (without e-mail or password, for the sign-in link) if it has none. */
async function firstOwner(db: Kysely<Database>, tenantId: string, now: number): Promise<{ id: string; claimed: boolean }> {
  const owner = await db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email'])
    .where('memberships.tenant_id', '=', tenantId)
    .where('memberships.role', '=', 'owner')
    .orderBy('memberships.created_at')
    .executeTakeFirst();
  if (owner) return { id: owner.id, claimed: owner.email !== null };
  const user = await createUser(db, { email: null, now });
  await setMembership(db, { userId: user.id, tenantId, role: 'owner', now });
  return { id: user.id, claimed: false };
}
