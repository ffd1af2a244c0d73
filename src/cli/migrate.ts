import type { Config } from '../config/config.js';
import { openStore } from '../store/database.js';
import { migrateToLatest, NEWER_SCHEMA } from '../store/migrations.js';

export async function runMigrate(config: Config): Promise<number> {
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
  try {
    const { applied, newer } = await migrateToLatest(store);
    if (newer.length > 0) console.log(`${store.location}: ${NEWER_SCHEMA} (${newer.join(', ')})`);
    else console.log(applied.length ? `applied ${applied.join(', ')} to ${store.location}` : `${store.location} is up to date`);
    return 0;
  } finally {
    await store.close();
  }
}
