import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import { buildApp } from '../server/app.js';
import { listen } from '../server/listen.js';
import { createLogger } from '../http/logging.js';
import { expiryNotice, loadTlsMaterial } from '../http/tls.js';
import { openStore } from '../store/database.js';
import { claimDataDir } from '../store/sqlite-owner.js';
import { keyFingerprint, loadSecretKey } from '../identity/secret-box.js';
import { ScheduledBackups } from '../backups/schedule.js';
import { migrateToLatest, NEWER_SCHEMA } from '../store/migrations.js';
import { STARTER_DIR } from '../runbooks/library/catalogue.js';
import { RunbookLibrary } from '../runbooks/library/library.js';

// This file runs as dist/src/cli/server.js; the UI and the agent bundle are built beside dist/src,
// and the starter runbooks are read from the source tree (runbooks/library/catalogue.ts says why).
const packageRoot = fileURLToPath(new URL('../../../', import.meta.url));

export async function runServer(config: Config): Promise<number> {
  const logger = await createLogger(config.logLevel, config.logFormat);
  for (const warning of config.warnings) logger.warn(warning);
  const owner = config.databaseUrl ? undefined : claimDataDir(config.dataDir);
  // A certificate that cannot serve is a configuration error: refused before anything starts.
  const tls = await loadTlsMaterial(config.dataDir, config.tls);
  const store = openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs,
    onConnectionLost: (error) => logger.warn({ err: error }, 'PostgreSQL ended a connection (a failover or restart?); work on it is answered 503 or retried, new connections are opened as needed'),
    backgroundCheckpoints: { onFailure: (reason) => logger.warn({ reason }, 'SQLite checkpoints no longer run on a thread of their own; commits run them again, as SQLite does by default') },
  });
  const { applied, newer } = await migrateToLatest(store);
  logger.info({ storage: store.dialect, location: store.location, applied }, 'storage ready');
  if (newer.length > 0) logger.warn({ newer }, NEWER_SCHEMA);
  const secret = loadSecretKey(config.dataDir, config.secretKey);
  logger.info({ source: secret.source }, 'channel secrets are sealed with the key from this source; back it up, secrets cannot be read without it');
  if (secret.warning) logger.warn(secret.warning);
  if (config.secretKeyPrevious) {
    logger.warn(`PITCREW_SECRET_KEY_PREVIOUS is set: secrets sealed with key ${keyFingerprint(config.secretKeyPrevious)} still open, and new ones are sealed with ${keyFingerprint(secret.key)}; run pitcrew secrets rotate, then remove PITCREW_SECRET_KEY_PREVIOUS (docs/operations.md#secret-key-rotation)`);
  }

  const app = await buildApp({
    store,
    logger,
    publicUrl: config.publicUrl,
    awsEndpoint: config.awsEndpoint,
    awsStsEndpoint: config.awsStsEndpoint,
    azure: config.azure,
    gcp: config.gcp,
    teamsBot: config.teamsBot,
    cli: config.cli,
    git: config.git,
    render: config.render,
    webhookBodyLimitBytes: config.webhookBodyLimitBytes,
    throttleDefaults: config.throttleDefaults,
    ingest: config.ingest,
    executionExpirySeconds: config.executionExpirySeconds,
    agentHeartbeatSeconds: config.agentHeartbeatSeconds,
    trustProxy: config.trustProxy,
    throttleDelayMs: config.throttleDelayMs,
    shutdownGraceMs: config.shutdownGraceMs,
    webRoot: path.join(packageRoot, 'web/dist'),
    agentBundle: path.join(packageRoot, 'dist/pitcrew-agent.mjs'),
    runbookLibrary: RunbookLibrary.load(path.join(packageRoot, STARTER_DIR)),
    secretKey: secret.key,
    secretKeyPrevious: config.secretKeyPrevious,
    notify: config.notify,
    egress: config.egress,
    retentionDays: config.retentionDays,
    disk: { dir: config.dataDir, ...config.disk },
    sessions: config.sessions,
    scheduleGraceSeconds: config.scheduleGraceSeconds,
    metricsToken: config.metrics.token,
  });
  logger.info(config.retentionDays ? `history older than ${config.retentionDays} days is deleted (PITCREW_RETENTION_DAYS)` : 'history is kept for ever (set PITCREW_RETENTION_DAYS to delete what is older)');
  await app.start();
  const backups = config.backup && new ScheduledBackups(config.backup, { store, logger, metrics: app.context.metrics });
  backups?.start();
  const listening = await listen(app, { host: config.host, port: config.port, tlsPort: config.tlsPort, tls, shutdownGraceMs: config.shutdownGraceMs, metrics: config.metrics.listen });
  logger.info(
    { metrics: listening.metricsUrl ?? null, onApiPorts: config.metrics.token !== undefined },
    `Prometheus metrics: ${listening.metricsUrl ? `${listening.metricsUrl}/metrics` : 'no listener of their own (PITCREW_METRICS_ADDR=off)'}; `
      + (config.metrics.token ? 'on the API ports too, with the bearer token PITCREW_METRICS_TOKEN' : 'not on the API ports (set PITCREW_METRICS_TOKEN to serve them there)'),
  );
  logger.info(
    { https: listening.httpsUrl, fingerprint: tls.fingerprint, selfSigned: tls.selfSigned },
    `agents connect to ${listening.httpsUrl}; TLS certificate SHA-256 fingerprint ${tls.fingerprint}`,
  );
  // A line of its own with the flag as an agent takes it, for the operator to copy (docs/agent.md).
  logger.info(`pin this certificate on agents with --server-fingerprint ${tls.fingerprint}`);
  const notice = expiryNotice(tls, config.dataDir);
  if (notice) logger[notice.level]({ validTo: tls.validTo }, notice.message);

  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing requests in flight');
      // Agent connections first: upgraded sockets would keep the HTTPS server from closing.
      app.context.gateway
        .close()
        .then(() => listening.close())
        .then(() => app.close())
        .then(() => backups?.stop())
        .then(() => store.close())
        .then(() => owner?.release())
        .then(() => {
          logger.info('stopped');
          resolve(0);
        }, (error: unknown) => {
          logger.error({ err: error }, 'unclean stop');
          resolve(1);
        });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
