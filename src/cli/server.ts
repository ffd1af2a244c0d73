import pino from 'pino';
import type { Config } from '../config/config.js';
import { buildApp } from '../http/app.js';
import { loggerOptions } from '../http/logging.js';
import { openStore } from '../store/database.js';
import { migrateToLatest } from '../store/migrations.js';

export async function runServer(config: Config): Promise<number> {
  const logger = pino(loggerOptions(config.logLevel));
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
  const { applied } = await migrateToLatest(store);
  logger.info({ storage: store.dialect, location: store.location, applied }, 'storage ready');

  const app = await buildApp({
    store,
    logger,
    publicUrl: config.publicUrl,
    webhookBodyLimitBytes: config.webhookBodyLimitBytes,
    throttleDefaults: config.throttleDefaults,
    ingest: config.ingest,
  });
  await app.server.listen({ host: config.host, port: config.port });

  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing requests in flight');
      app
        .close()
        .then(() => store.close())
        .then(() => resolve(0), (error: unknown) => {
          logger.error({ err: error }, 'unclean stop');
          resolve(1);
        });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
