import type { Config } from '../config/config.js';
import { openStore } from '../store/database.js';
import { migrateToLatest } from '../store/migrations.js';
import { bootstrapTenant, TenantExistsError, type StillValid } from '../tenants/bootstrap.js';
import { CliError } from './client.js';

export interface BootstrapOptions {
  json: boolean;
  tenant: string;
  /** Issue another key and token for a tenant that exists (the earlier ones stay valid). */
  again: boolean;
}

/** Where a person sees, and revokes, what a tenant was issued. */
const SEE_AND_REVOKE = [
  'See its API keys with npx pitcrew api-keys list; revoke one on the UI\'s API keys page (Revoke and regenerate)',
  'or with POST /api/v1/api-keys/{id}/revoke; a management token: docs/security.md#rotating-credentials.',
].join('\n');

export async function runBootstrap(config: Config, options: BootstrapOptions): Promise<number> {
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
  try {
    await migrateToLatest(store);
    const { earlier, signInPath, ...issued } = await bootstrapTenant(store, options.tenant, { again: options.again }).catch((error: unknown) => {
      if (error instanceof TenantExistsError) throw new CliError(refusal(error));
      throw error;
    });
    const base = (config.publicUrl ?? `http://localhost:${config.port}`).replace(/\/+$/, '');
    const result = { ...issued, signInUrl: signInPath && `${base}${signInPath}` };
    if (earlier) console.error(`pitcrew: tenant "${options.tenant}" exists: issued another API key and management token for it. ${valid(earlier)}\n${SEE_AND_REVOKE}`);
    if (options.json) {
      console.log(JSON.stringify(result));
    } else {
      console.log([
        `tenant   ${options.tenant} (${result.tenantId})`,
        `api key  ${result.apiKey}  (scopes: ${result.apiKeyScopes.join(', ')})`,
        `token    ${result.token}`,
        ...(result.signInUrl ? [`sign in  ${result.signInUrl}`, '         (one-time link for the first owner: set your e-mail and password; valid 7 days)'] : []),
        '',
        'The key and token are shown once: store them now.',
        'The API key both fires webhooks and enrols agents. Once set up, give monitoring tools a webhook key and',
        'agents an enrol key, and narrow or revoke this one (docs/tenants.md).',
      ].join('\n'));
    }
    return 0;
  } finally {
    await store.close();
  }
}

function refusal({ tenantName, tenantId, earlier }: TenantExistsError): string {
  const quoted = /^[\w.@-]+$/.test(tenantName) ? tenantName : `'${tenantName.replaceAll("'", "'\\''")}'`;
  const tenantFlag = tenantName === 'default' ? '' : ` --tenant ${quoted}`;
  return [
    `tenant "${tenantName}" (${tenantId}) exists already: nothing was issued. ${valid(earlier)}`,
    SEE_AND_REVOKE,
    `To issue another API key (webhook and enrol) and management token for it: npx pitcrew bootstrap --json${tenantFlag} --new`,
  ].join('\n');
}

/** The keys and tokens issued before, which bootstrap leaves valid: said so, so nobody believes they were replaced. */
function valid({ apiKeys, tokens }: StillValid): string {
  const counted = (n: number, word: string) => (n === 0 ? `no ${word}` : `${n} ${word}${n === 1 ? '' : 's'}`);
  return `Still valid from before: ${counted(apiKeys, 'API key')} and ${counted(tokens, 'management token')}.`;
}
