import type { Kysely } from 'kysely';
import { issueToken } from '../identity/tokens.js';
import type { Database } from '../store/schema.js';
import { createTenant, findTenantByName, issueApiKey } from './repository.js';

export interface BootstrapResult {
  tenantId: string;
  apiKey: string;
  token: string;
}

/** Finds or creates the tenant, then issues a fresh API key and management token for it. */
export async function bootstrapTenant(db: Kysely<Database>, name: string): Promise<BootstrapResult> {
  return db.transaction().execute(async (tx) => {
    const tenant = (await findTenantByName(tx, name)) ?? (await createTenant(tx, name));
    const { apiKey } = await issueApiKey(tx, tenant.id, 'bootstrap');
    const token = await issueToken(tx, tenant.id, 'bootstrap');
    return { tenantId: tenant.id, apiKey, token };
  });
}
