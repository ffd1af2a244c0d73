import type { Config } from '../config/config.js';
import { openStore } from '../store/database.js';
import { migrateToLatest } from '../store/migrations.js';
import { bootstrapTenant } from '../tenants/bootstrap.js';

export async function runBootstrap(config: Config, options: { json: boolean; tenant: string }): Promise<number> {
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
  try {
    await migrateToLatest(store);
    const result = await bootstrapTenant(store, options.tenant);
    if (options.json) {
      console.log(JSON.stringify(result));
    } else {
      console.log([
        `tenant   ${options.tenant} (${result.tenantId})`,
        `api key  ${result.apiKey}  (scopes: ${result.apiKeyScopes.join(', ')})`,
        `token    ${result.token}`,
        '',
        'Both are shown once: store them now.',
        'The API key both fires webhooks and enrols agents. Once set up, give monitoring tools a webhook key and',
        'agents an enrol key, and narrow or revoke this one (docs/tenants.md).',
      ].join('\n'));
    }
    return 0;
  } finally {
    await store.close();
  }
}
