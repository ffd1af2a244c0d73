import path from 'node:path';

/** Everything the service reads from its environment, validated once at start. */
export interface Config {
  host: string;
  port: number;
  tlsPort: number;
  dataDir: string;
  /** PostgreSQL connection string; absent means the embedded SQLite database in dataDir. */
  databaseUrl: string | undefined;
  /** Base URL users reach the service at, used in webhook URLs; absent means taken from the request. */
  publicUrl: string | undefined;
  logLevel: string;
  webhookBodyLimitBytes: number;
  sqliteBusyTimeoutMs: number;
  throttleDefaults: { ratePerSecond: number; burst: number };
  ingest: { maxBatch: number; maxQueued: number };
  executionExpirySeconds: number;
  agentHeartbeatSeconds: number;
  tls: { certFile?: string; keyFile?: string };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const logLevel = env.PITCREW_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`PITCREW_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql:// (leave it unset for the embedded SQLite database)');
  }
  const publicUrl = env.PITCREW_PUBLIC_URL ? parsePublicUrl(env.PITCREW_PUBLIC_URL) : undefined;
  return {
    host: env.HOST ?? '0.0.0.0',
    port: integer(env, 'PORT', 8080, 0, 65535),
    tlsPort: integer(env, 'PITCREW_TLS_PORT', 8443, 0, 65535),
    dataDir: path.resolve(cwd, env.PITCREW_DATA_DIR ?? 'data'),
    databaseUrl,
    publicUrl,
    logLevel,
    webhookBodyLimitBytes: integer(env, 'PITCREW_WEBHOOK_BODY_LIMIT', 256 * 1024, 1024, 64 * 1024 * 1024),
    sqliteBusyTimeoutMs: integer(env, 'PITCREW_SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 600_000),
    throttleDefaults: {
      ratePerSecond: integer(env, 'PITCREW_THROTTLE_RATE', 500, 1, 10_000_000),
      burst: integer(env, 'PITCREW_THROTTLE_BURST', 1000, 1, 10_000_000),
    },
    ingest: {
      maxBatch: integer(env, 'PITCREW_INGEST_MAX_BATCH', 256, 1, 1000),
      maxQueued: integer(env, 'PITCREW_INGEST_MAX_QUEUED', 20_000, 1, 1_000_000),
    },
    executionExpirySeconds: integer(env, 'PITCREW_EXECUTION_EXPIRY_SECONDS', 3600, 1, 30 * 86_400),
    agentHeartbeatSeconds: integer(env, 'PITCREW_AGENT_HEARTBEAT_SECONDS', 15, 1, 3600),
    tls: tlsFiles(env),
  };
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  // Plain decimal digits only: Number() would also take "0x1F90" or "8e3", which nobody means.
  if (!/^-?\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function parsePublicUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PITCREW_PUBLIC_URL must be an absolute URL such as https://pitcrew.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PITCREW_PUBLIC_URL must use http or https, got "${raw}"`);
  }
  return url.toString().replace(/\/$/, '');
}

function tlsFiles(env: Env): { certFile?: string; keyFile?: string } {
  const certFile = env.PITCREW_TLS_CERT || undefined;
  const keyFile = env.PITCREW_TLS_KEY || undefined;
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new ConfigError('PITCREW_TLS_CERT and PITCREW_TLS_KEY go together: set both (PEM files) or neither (a self-signed certificate is made)');
  }
  return certFile && keyFile ? { certFile, keyFile } : {};
}
