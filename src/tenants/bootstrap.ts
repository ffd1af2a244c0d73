import { issueToken } from '../identity/tokens.js';
import type { Store } from '../store/database.js';
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

/**
 * Finds or creates the tenant, then issues a fresh API key and management token for it. The key
 * has both scopes (docs/tenants.md says to narrow it, or to issue single-purpose keys, once the
 * tenant is set up): the quick start uses the one key for the webhook and the agent.
 */
export async function bootstrapTenant(store: Pick<Store, 'db' | 'dialect'>, name: string): Promise<BootstrapResult> {
  // The quick start runs it beside the running server: a transaction that may wait for the server's writes.
  return writeTransaction(store, async (tx) => {
    const tenant = (await findTenantByName(tx, name)) ?? (await createTenant(tx, name));
    const { apiKey } = await issueApiKey(tx, tenant.id, 'bootstrap', ALL_SCOPES);
    const token = await issueToken(tx, tenant.id, 'bootstrap');
    return { tenantId: tenant.id, apiKey, token, apiKeyScopes: [...ALL_SCOPES] };
  });
}
