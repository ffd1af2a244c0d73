import type { Kysely } from 'kysely';
import { issueToken } from '../identity/tokens.js';
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
    const token = await issueToken(tx, tenant.id, 'bootstrap');
    return { tenantId: tenant.id, apiKey, token, apiKeyScopes: [...ALL_SCOPES], earlier };
  });
}

async function stillValid(db: Kysely<Database>, tenantId: string): Promise<StillValid> {
  const count = async (table: 'api_keys' | 'tokens') => {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return { apiKeys: await count('api_keys'), tokens: await count('tokens') };
}
