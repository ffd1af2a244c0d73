import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Cron } from 'croner';

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
  /** PITCREW_AWS_ENDPOINT_URL: where EC2 calls go instead of AWS's regional endpoints. */
  awsEndpoint: string | undefined;
  /** PITCREW_AWS_STS_ENDPOINT_URL: where a credential's role is assumed instead of STS's regional endpoints. */
  awsStsEndpoint: string | undefined;
  /** PITCREW_AZURE_*: where Azure cloud actions get their tokens and call Resource Manager (docs/configuration.md). */
  azure: AzureEndpoints;
  /** PITCREW_GCP_*: where GCP cloud actions get their tokens and call Compute Engine (docs/configuration.md). */
  gcp: GcpEndpoints;
  /** PITCREW_TEAMS_*: where Teams bots' tokens are checked and got (docs/notifications.md, "Approve from Teams"). */
  teamsBot: TeamsBotEndpoints;
  logLevel: string;
  /** PITCREW_LOG_FORMAT: JSON lines, or laid out for people; unset, pretty when stdout is a terminal. */
  logFormat: LogFormat;
  webhookBodyLimitBytes: number;
  sqliteBusyTimeoutMs: number;
  throttleDefaults: { ratePerSecond: number; burst: number };
  /** How long a throttled call's 429 is held, to slow a flooding client down. */
  throttleDelayMs: number;
  shutdownGraceMs: number;
  ingest: { maxBatch: number; maxQueued: number };
  executionExpirySeconds: number;
  agentHeartbeatSeconds: number;
  tls: { certFile?: string; keyFile?: string };
  /**
   * Which peers may set the client address with X-Forwarded-For (Fastify's trustProxy): the
   * proxies' addresses/CIDRs, or a hop count. False (the default): the TCP peer is the client.
   */
  trustProxy: TrustProxy;
  /** PITCREW_SECRET_KEY: seals channel secrets; absent means $PITCREW_DATA_DIR/secret.key. */
  secretKey: Buffer | undefined;
  /** PITCREW_SECRET_KEY_PREVIOUS: during a key rotation, the key being replaced: it opens secrets, never seals them. */
  secretKeyPrevious: Buffer | undefined;
  notify: NotifySettings;
  egress: EgressSettings;
  /** What the service logs as warnings once it starts: settings it read under an old name. */
  warnings: string[];
  /** PITCREW_SCHEDULE_GRACE_SECONDS: how late a cron tick may still run after the service was down. */
  scheduleGraceSeconds: number;
  /** PITCREW_RETENTION_DAYS: history older than this is deleted; undefined keeps everything. */
  retentionDays: number | undefined;
  /** PITCREW_DISK_WARN_FREE, PITCREW_DISK_RESERVE: the data directory's free space that warns, and that stops writes. */
  disk: { warnFree: FreeSpace; reserve: FreeSpace };
  /** PITCREW_BACKUP_SCHEDULE, _KEEP, _DIR: the single node's backups on a schedule; undefined: none. */
  backup: { schedule: string; keep: number; dir: string } | undefined;
  metrics: MetricsSettings;
  cli: CliMachineSettings;
  git: GitSettings;
  render: RenderSettings;
  /** PITCREW_SESSION_IDLE_MINUTES, PITCREW_SESSION_MAX_HOURS: when a UI session ends by itself. */
  sessions: { idleMs: number; maxMs: number };
}

/** How graph snapshots are drawn: worker threads of the chart renderer (snapshots/render-pool.ts, docs/graph-snapshots.md#rendering). */
export interface RenderSettings {
  /** PITCREW_SNAPSHOT_RENDER_WORKERS: threads drawing pictures at once on a node. */
  workers: number;
  /** PITCREW_SNAPSHOT_RENDER_QUEUE: pictures waiting for a thread at most; more captures wait queued as executions. */
  maxQueued: number;
  /** PITCREW_SNAPSHOT_RENDER_HEAP_MB: each thread's heap; a picture needing more fails, and the thread is replaced. */
  maxHeapMb: number;
}

export const RENDER_DEFAULTS: RenderSettings = { workers: 1, maxQueued: 16, maxHeapMb: 256 };

/** How runbooks are read from tenants' git repositories (docs/runbooks.md#git-repositories). */
export interface GitSettings {
  /** PITCREW_GIT_CACHE_DIR: the bare caches, one per repository (`$PITCREW_DATA_DIR/git`); undefined: a private temp directory. */
  cacheDir: string | undefined;
  /** PITCREW_GIT_CA_FILE, read at start: CA certificates HTTPS repositories are trusted with beside the public ones. */
  caPem: string | undefined;
  /** PITCREW_GIT_TIMEOUT_SECONDS: the longest one read of a repository may take; past it git's process group is killed. */
  timeoutSeconds: number;
  /** The PATH git and ssh are found on: the service's own. */
  path: string;
}

/** The settings of a service built without configuration (tests, embedding): a temp cache. */
export const GIT_DEFAULTS: GitSettings = { cacheDir: undefined, caPem: undefined, timeoutSeconds: 30, path: '/usr/local/bin:/usr/bin:/bin' };

/** How the CLI Machine runs CLI runbooks (docs/cli-machine.md). */
export interface CliMachineSettings {
  /** PITCREW_CLI_MACHINE: off on nodes that must not run CLI runbooks (a cluster with a worker for them). */
  enabled: boolean;
  /** PITCREW_CLI_PATH: the PATH runbooks get, where the CLIs the operator allows are. */
  path: string;
  /** PITCREW_CLI_SCRATCH_DIR: where each run's throwaway HOME is made (the system's temp directory). */
  scratchDir: string;
  /** PITCREW_CLI_MAX_PER_TENANT: runs of one tenant at once on a node. */
  maxPerTenant: number;
  /** PITCREW_CLI_MAX_OUTPUT_BYTES: kept of each of stdout and stderr. */
  maxOutputBytes: number;
  /** PITCREW_CLI_USER: the user runs switch to; `nobody` when the service runs as root and it is unset. */
  runAs: { name: string; uid: number; gid: number } | undefined;
}

/** Where Azure cloud actions go: another cloud than public Azure (a sovereign cloud, Azure Stack Hub). */
export interface AzureEndpoints {
  /** PITCREW_AZURE_AUTHORITY_HOST: Microsoft Entra ID (or the cloud's own), which issues the tokens. */
  authorityHost: string;
  /** PITCREW_AZURE_RESOURCE_MANAGER_URL: Azure Resource Manager; tokens are asked for `{url}/.default`. */
  resourceManagerUrl: string;
  /** PITCREW_AZURE_CA_FILE, read at start: certificates these calls trust beside Node's (Azure Stack Hub's own CA). */
  caPem: string | undefined;
}

/** Public Azure's. */
export const AZURE_DEFAULTS: AzureEndpoints = {
  authorityHost: 'https://login.microsoftonline.com',
  resourceManagerUrl: 'https://management.azure.com',
  caPem: undefined,
};

/**
 * Where Microsoft's Bot Framework lives for Teams channels' bots (docs/notifications.md, "Approve
 * from Teams"). The operator's settings, never a channel's: whoever sets them decides which tokens
 * pitcrew believes. Tests point them at an emulator.
 */
export interface TeamsBotEndpoints {
  /**
   * PITCREW_TEAMS_OPENID_METADATA_URL: the OpenID metadata of the Bot Connector's tokens, whose
   * jwks_uri lists the keys they are signed with (https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-authentication,
   * "Connector to bot", step 2).
   */
  openIdMetadataUrl: string;
  /**
   * PITCREW_TEAMS_LOGIN_URL: Microsoft Entra's login service: the bot's token comes from
   * `{loginUrl}/{tenant}/oauth2/v2.0/token`, the tenant being botframework.com for a multi-tenant
   * bot (same page, "Bot to connector").
   */
  loginUrl: string;
}

/** Microsoft's own. */
export const TEAMS_BOT_DEFAULTS: TeamsBotEndpoints = {
  openIdMetadataUrl: 'https://login.botframework.com/v1/.well-known/openidconfiguration',
  loginUrl: 'https://login.microsoftonline.com',
};

/**
 * Where GCP cloud actions go: the operator's, never a tenant's (a key file's own token_uri is not
 * used): a Private Service Connect endpoint, a proxy, or an emulator.
 */
export interface GcpEndpoints {
  /** PITCREW_GCP_TOKEN_URL: where the service account's signed assertion is exchanged for an access token. */
  tokenUrl: string;
  /** PITCREW_GCP_COMPUTE_URL: the Compute Engine API's origin; the SDK adds /compute/v1/…. */
  computeUrl: string;
}

/** Google's own. */
export const GCP_DEFAULTS: GcpEndpoints = {
  tokenUrl: 'https://oauth2.googleapis.com/token',
  computeUrl: 'https://compute.googleapis.com',
};

/** Where Prometheus reads /metrics (docs/configuration.md#metrics). */
export interface MetricsSettings {
  /** PITCREW_METRICS_ADDR: the metrics listener (127.0.0.1:9464 unless set); undefined when `off`. */
  listen: { host: string; port: number } | undefined;
  /** PITCREW_METRICS_TOKEN: a scraper's bearer token; with it the API ports serve /metrics too. */
  token: string | undefined;
}

/** How notifications are delivered (docs/notifications.md). */
export interface NotifySettings {
  /** Tries of one delivery before it is given up (the first try included). */
  maxAttempts: number;
  /** Wait before the second try; doubles each time, up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How long one fan-out run's message waits for all its hosts before a partial summary goes out. */
  groupWaitSeconds: number;
  /** Longest a single send (an HTTP POST, an SMTP session) may take. */
  sendTimeoutMs: number;
  /** How often the notifier looks for due work that no wake-up announced (other nodes, retries). */
  pollMs: number;
  /** Least time between two passes of the notifier's loop: wake-ups in between share the next pass. */
  passSpacingMs: number;
  /** How long a graph snapshot's signed link in a notification opens the image (docs/graph-snapshots.md). */
  snapshotLinkDays: number;
  /** PITCREW_SLACK_API_URL: Slack's Web API, for channels with a Slack app (https://slack.com/api; a proxy, or a test's emulator). */
  slackApiUrl: string;
}

/** Where pitcrew may connect on a tenant's behalf (egress/policy.ts; docs/configuration.md#outbound-calls). */
export interface EgressSettings {
  /**
   * PITCREW_EGRESS_ALLOW_NETWORKS: networks outside the public internet that every outbound call a
   * tenant aims (notifications, git repositories, Keystone and Monasca, OpenStack) may reach.
   */
  allowNetworks: string[];
}

/** The one egress setting, and the name it had when only notifications used it (still read, with a warning). */
export const EGRESS_SETTING = 'PITCREW_EGRESS_ALLOW_NETWORKS';
const OLD_EGRESS_SETTING = 'PITCREW_NOTIFY_ALLOW_NETWORKS';

/** What `pitcrew channels …` needs to reach a running service. */
export interface ClientConfig {
  server: string;
  token: string | undefined;
}


export type TrustProxy = false | string[] | number;

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export type LogFormat = 'json' | 'pretty';

/** JSON lines for a log collector (a service's stdout); lines for people when a person is reading (a terminal). */
export function logFormat(raw: string | undefined, stdoutIsTerminal: boolean): LogFormat {
  const value = raw?.trim();
  if (!value) return stdoutIsTerminal ? 'pretty' : 'json';
  if (value === 'json' || value === 'pretty') return value;
  throw new ConfigError(`PITCREW_LOG_FORMAT must be json or pretty (unset: pretty when stdout is a terminal, json otherwise), got "${value}"`);
}

export function loadConfig(env: Env = process.env, cwd = process.cwd(), stdoutIsTerminal = process.stdout.isTTY === true): Config {
  const logLevel = env.PITCREW_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`PITCREW_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql:// (leave it unset for the embedded SQLite database)');
  }
  const publicUrl = env.PITCREW_PUBLIC_URL ? httpUrl('PITCREW_PUBLIC_URL', env.PITCREW_PUBLIC_URL, 'https://pitcrew.example.com') : undefined;
  // An AWS-compatible endpoint (a VPC endpoint, a private cloud): the operator's choice, never a tenant's.
  const awsEndpoint = env.PITCREW_AWS_ENDPOINT_URL ? httpUrl('PITCREW_AWS_ENDPOINT_URL', env.PITCREW_AWS_ENDPOINT_URL, 'https://ec2.eu-west-1.amazonaws.com') : undefined;
  const awsStsEndpoint = env.PITCREW_AWS_STS_ENDPOINT_URL ? httpUrl('PITCREW_AWS_STS_ENDPOINT_URL', env.PITCREW_AWS_STS_ENDPOINT_URL, 'https://sts.eu-west-1.amazonaws.com') : undefined;
  const warnings: string[] = [];
  return {
    host: env.HOST ?? '0.0.0.0',
    port: integer(env, 'PORT', 8080, 0, 65535),
    tlsPort: integer(env, 'PITCREW_TLS_PORT', 8443, 0, 65535),
    dataDir: path.resolve(cwd, env.PITCREW_DATA_DIR ?? 'data'),
    databaseUrl,
    publicUrl,
    awsEndpoint,
    awsStsEndpoint,
    azure: azureEndpoints(env, cwd),
    gcp: gcpEndpoints(env),
    teamsBot: teamsBotEndpoints(env),
    logLevel,
    logFormat: logFormat(env.PITCREW_LOG_FORMAT, stdoutIsTerminal),
    webhookBodyLimitBytes: integer(env, 'PITCREW_WEBHOOK_BODY_LIMIT', 256 * 1024, 1024, 64 * 1024 * 1024),
    sqliteBusyTimeoutMs: integer(env, 'PITCREW_SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 600_000),
    throttleDefaults: {
      ratePerSecond: integer(env, 'PITCREW_THROTTLE_RATE', 500, 1, 10_000_000),
      burst: integer(env, 'PITCREW_THROTTLE_BURST', 1000, 1, 10_000_000),
    },
    throttleDelayMs: integer(env, 'PITCREW_THROTTLE_DELAY_MS', 1000, 0, 60_000),
    shutdownGraceMs: integer(env, 'PITCREW_SHUTDOWN_GRACE_MS', 5000, 0, 600_000),
    ingest: {
      maxBatch: integer(env, 'PITCREW_INGEST_MAX_BATCH', 256, 1, 1000),
      maxQueued: integer(env, 'PITCREW_INGEST_MAX_QUEUED', 20_000, 1, 1_000_000),
    },
    executionExpirySeconds: integer(env, 'PITCREW_EXECUTION_EXPIRY_SECONDS', 3600, 1, 30 * 86_400),
    agentHeartbeatSeconds: integer(env, 'PITCREW_AGENT_HEARTBEAT_SECONDS', 15, 1, 3600),
    tls: tlsFiles(env),
    trustProxy: trustProxy(env.PITCREW_TRUST_PROXY),
    secretKey: secretKey(env.PITCREW_SECRET_KEY),
    secretKeyPrevious: secretKey(env.PITCREW_SECRET_KEY_PREVIOUS, 'PITCREW_SECRET_KEY_PREVIOUS'),
    notify: {
      maxAttempts: integer(env, 'PITCREW_NOTIFY_MAX_ATTEMPTS', 8, 1, 100),
      backoffBaseMs: integer(env, 'PITCREW_NOTIFY_BACKOFF_BASE_MS', 5000, 1, 3_600_000),
      backoffMaxMs: integer(env, 'PITCREW_NOTIFY_BACKOFF_MAX_MS', 15 * 60_000, 1, 86_400_000),
      groupWaitSeconds: integer(env, 'PITCREW_NOTIFY_GROUP_WAIT_SECONDS', 300, 0, 86_400),
      sendTimeoutMs: integer(env, 'PITCREW_NOTIFY_SEND_TIMEOUT_MS', 10_000, 100, 300_000),
      pollMs: integer(env, 'PITCREW_NOTIFY_POLL_MS', 1000, 10, 60_000),
      passSpacingMs: integer(env, 'PITCREW_NOTIFY_PASS_SPACING_MS', 50, 0, 10_000),
      snapshotLinkDays: integer(env, 'PITCREW_SNAPSHOT_LINK_DAYS', 7, 1, 365),
      // The operator's choice, never a tenant's: a tenant's bot token goes only where the service is told Slack is.
      slackApiUrl: env.PITCREW_SLACK_API_URL ? httpUrl('PITCREW_SLACK_API_URL', env.PITCREW_SLACK_API_URL, 'https://slack.com/api') : 'https://slack.com/api',
    },
    egress: egressSettings(env, warnings),
    warnings,
    scheduleGraceSeconds: integer(env, 'PITCREW_SCHEDULE_GRACE_SECONDS', 300, 0, 7 * 86_400),
    retentionDays: retentionDays(env),
    backup: backupSchedule(env, cwd, databaseUrl),
    disk: { warnFree: freeSpace(env, 'PITCREW_DISK_WARN_FREE', '10%'), reserve: freeSpace(env, 'PITCREW_DISK_RESERVE', '32MiB') },
    metrics: { listen: metricsAddress(env.PITCREW_METRICS_ADDR), token: metricsToken(env.PITCREW_METRICS_TOKEN) },
    cli: cliMachine(env, cwd),
    git: gitSettings(env, cwd),
    render: {
      workers: integer(env, 'PITCREW_SNAPSHOT_RENDER_WORKERS', RENDER_DEFAULTS.workers, 1, 64),
      maxQueued: integer(env, 'PITCREW_SNAPSHOT_RENDER_QUEUE', RENDER_DEFAULTS.maxQueued, 0, 10_000),
      maxHeapMb: integer(env, 'PITCREW_SNAPSHOT_RENDER_HEAP_MB', RENDER_DEFAULTS.maxHeapMb, 64, 16_384),
    },
    sessions: {
      idleMs: integer(env, 'PITCREW_SESSION_IDLE_MINUTES', 120, 1, 7 * 1440) * 60_000,
      maxMs: integer(env, 'PITCREW_SESSION_MAX_HOURS', 12, 1, 30 * 24) * 3600_000,
    },
  };
}

function gitSettings(env: Env, cwd: string): GitSettings {
  const caFile = env.PITCREW_GIT_CA_FILE ? path.resolve(cwd, env.PITCREW_GIT_CA_FILE) : undefined;
  return {
    cacheDir: path.resolve(cwd, env.PITCREW_GIT_CACHE_DIR || path.join(env.PITCREW_DATA_DIR ?? 'data', 'git')),
    caPem: caFile ? certificates('PITCREW_GIT_CA_FILE', caFile) : undefined,
    timeoutSeconds: integer(env, 'PITCREW_GIT_TIMEOUT_SECONDS', GIT_DEFAULTS.timeoutSeconds, 1, 3600),
    path: env.PATH || GIT_DEFAULTS.path,
  };
}

/** The CLI Machine's settings when nothing is set, as a service not run as root has them. */
export const CLI_MACHINE_DEFAULTS: CliMachineSettings = {
  enabled: true,
  path: '/usr/local/bin:/usr/bin:/bin',
  scratchDir: os.tmpdir(),
  maxPerTenant: 4,
  maxOutputBytes: 1024 * 1024,
  runAs: undefined,
};

function cliMachine(env: Env, cwd: string): CliMachineSettings {
  const defaults = CLI_MACHINE_DEFAULTS;
  const scratchDir = path.resolve(cwd, env.PITCREW_CLI_SCRATCH_DIR || defaults.scratchDir);
  const dataDir = path.resolve(cwd, env.PITCREW_DATA_DIR ?? 'data');
  if (scratchDir === dataDir || scratchDir.startsWith(`${dataDir}${path.sep}`)) {
    throw new ConfigError(`PITCREW_CLI_SCRATCH_DIR must be outside the data directory (${dataDir}): CLI runbooks must not reach the database or the secret key`);
  }
  const machine = (env.PITCREW_CLI_MACHINE ?? 'on').trim();
  if (machine !== 'on' && machine !== 'off') throw new ConfigError(`PITCREW_CLI_MACHINE must be on or off, got "${machine}"`);
  return {
    enabled: machine === 'on',
    path: env.PITCREW_CLI_PATH || defaults.path,
    scratchDir,
    maxPerTenant: integer(env, 'PITCREW_CLI_MAX_PER_TENANT', defaults.maxPerTenant, 1, 1000),
    maxOutputBytes: integer(env, 'PITCREW_CLI_MAX_OUTPUT_BYTES', defaults.maxOutputBytes, 1024, 64 * 1024 * 1024),
    runAs: cliUser(env.PITCREW_CLI_USER),
  };
}

/**
 * A service running as root runs CLI runbooks as another user (nobody unless told), so they cannot
 * read the data directory; any other service user can only run them as itself.
 */
export function cliUser(raw: string | undefined, isRoot = process.getuid?.() === 0): CliMachineSettings['runAs'] {
  const name = raw?.trim() || (isRoot ? 'nobody' : '');
  if (name === '') return undefined;
  if (!isRoot) throw new ConfigError(`PITCREW_CLI_USER=${name}: switching user needs the service to run as root; unset it to run CLI runbooks as the service's own user, or see docs/cli-machine.md for a sandboxed worker`);
  const entry = readPasswd().find((user) => user.name === name || String(user.uid) === name);
  if (!entry) throw new ConfigError(`PITCREW_CLI_USER=${name}: no such user on this machine (getent passwd ${name}); create it or name another`);
  if (entry.uid === 0) throw new ConfigError(`PITCREW_CLI_USER=${name} is root: CLI runbooks would reach the data directory and the secret key; name an unprivileged user`);
  return entry;
}

function readPasswd(): Array<{ name: string; uid: number; gid: number }> {
  try {
    return fs.readFileSync('/etc/passwd', 'utf8').split('\n').filter((line) => line && !line.startsWith('#')).map((line) => {
      const [name, , uid, gid] = line.split(':');
      return { name: name!, uid: Number(uid), gid: Number(gid) };
    });
  } catch {
    return [];
  }
}

/** The CLI's view of the environment: where the service is and the management token. */
export function loadClientConfig(env: Env = process.env): ClientConfig {
  return { server: (env.PITCREW_SERVER || 'http://localhost:8080').replace(/\/$/, ''), token: env.PITCREW_TOKEN || undefined };
}


function trustProxy(raw: string | undefined): TrustProxy {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 10) throw new ConfigError(`PITCREW_TRUST_PROXY as a hop count must be from 1 to 10, got "${raw}"`);
    return hops;
  }
  const proxies = value.split(',').map((part) => part.trim()).filter(Boolean);
  const wrong = proxies.filter((proxy) => !isAddressOrCidr(proxy));
  if (wrong.length > 0) {
    // "true" would let any caller pick its own address and walk past every tenant's IP allowlist.
    throw new ConfigError(`PITCREW_TRUST_PROXY must list the proxies' addresses or CIDRs (e.g. 10.0.0.5,10.1.0.0/16) or a hop count, got "${wrong.join(', ')}"`);
  }
  return proxies;
}

/**
 * The shortest history an operator may keep: longer than anything the service still looks back
 * over, the longest action-limit window (30 days, rules/schema.ts) and the longest a queued
 * execution may wait for its agent (PITCREW_EXECUTION_EXPIRY_SECONDS, at most 30 days).
 */
export const MIN_RETENTION_DAYS = 31;
const MAX_RETENTION_DAYS = 36_500;

/** 0 or unset keeps history for ever (the default: nothing is deleted unless an operator says so). */
function retentionDays(env: Env): number | undefined {
  const raw = env.PITCREW_RETENTION_DAYS;
  if (raw === undefined || raw.trim() === '' || raw.trim() === '0') return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < MIN_RETENTION_DAYS || Number(raw) > MAX_RETENTION_DAYS) {
    throw new ConfigError(`PITCREW_RETENTION_DAYS must be 0 (keep everything) or a whole number of days from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}, got "${raw}": `
      + `history younger than ${MIN_RETENTION_DAYS} days is still read by action limits (windows up to 30 days) and queued executions (up to 30 days)`);
  }
  return Number(raw);
}

/** A free-space threshold as the operator sets it: bytes, or a share of the file system. */
export type FreeSpace = { bytes: number } | { percent: number };

const SPACE_UNITS: Record<string, number> = { '': 1, B: 1, K: 1024, KB: 1024, KIB: 1024, M: 1024 ** 2, MB: 1024 ** 2, MIB: 1024 ** 2, G: 1024 ** 3, GB: 1024 ** 3, GIB: 1024 ** 3 };

/** Free space as a share (`10%`) or a size (`32MiB`, `2GiB`, bytes without a unit). */
function freeSpace(env: Env, name: string, fallback: string): FreeSpace {
  const raw = (env[name] ?? '').trim() || fallback;
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(raw);
  if (percent && Number(percent[1]) <= 100) return { percent: Number(percent[1]) };
  const size = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw);
  const unit = size ? SPACE_UNITS[size[2]!.toUpperCase()] : undefined;
  if (!size || unit === undefined) throw new ConfigError(`${name} must be a share of the data directory's file system such as 10% or a size such as 32MiB or 2GiB, got "${raw}"`);
  return { bytes: Math.round(Number(size[1]) * unit) };
}

function backupSchedule(env: Env, cwd: string, databaseUrl: string | undefined): Config['backup'] {
  const schedule = env.PITCREW_BACKUP_SCHEDULE?.trim();
  if (!schedule) return undefined;
  if (databaseUrl) {
    throw new ConfigError('PITCREW_BACKUP_SCHEDULE backs up the embedded SQLite database, and DATABASE_URL selects PostgreSQL: back it up with its own tools (pg_dump, pg_basebackup; docs/operations.md#postgresql) and unset PITCREW_BACKUP_SCHEDULE');
  }
  try {
    new Cron(schedule, { paused: true }).stop();
  } catch (error) {
    throw new ConfigError(`PITCREW_BACKUP_SCHEDULE must be a cron schedule such as "0 3 * * *" (03:00 every day), got "${schedule}": ${(error as Error).message}`);
  }
  const dataDir = path.resolve(cwd, env.PITCREW_DATA_DIR ?? 'data');
  return {
    schedule,
    keep: integer(env, 'PITCREW_BACKUP_KEEP', 7, 1, 10_000),
    dir: path.resolve(cwd, env.PITCREW_BACKUP_DIR || path.join(dataDir, 'backups')),
  };
}

/** `host:port`, `[v6]:port`, or `off`. Loopback by default: metrics name every tenant. */
function metricsAddress(raw: string | undefined): { host: string; port: number } | undefined {
  const value = raw?.trim() || '127.0.0.1:9464';
  if (value === 'off') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!match || (match[1] !== undefined && isIP(match[1]) !== 6) || port > 65535) {
    throw new ConfigError(`PITCREW_METRICS_ADDR must be host:port (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464) or off, got "${raw}"`);
  }
  return { host: host!, port };
}

function metricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) {
    throw new ConfigError('PITCREW_METRICS_TOKEN must be at least 16 printable characters without spaces (make one with: openssl rand -hex 32)');
  }
  return raw;
}

/**
 * PITCREW_EGRESS_ALLOW_NETWORKS, or the name it had when only notifications read it: an operator who
 * set the old one keeps the networks they opened, and is told (once, at start) to rename it.
 */
function egressSettings(env: Env, warnings: string[]): EgressSettings {
  const current = env[EGRESS_SETTING] || undefined;
  const old = env[OLD_EGRESS_SETTING] || undefined;
  if (old !== undefined && current !== undefined) {
    warnings.push(`${OLD_EGRESS_SETTING} is ignored: ${EGRESS_SETTING} is set too and wins; remove ${OLD_EGRESS_SETTING}`);
  } else if (old !== undefined) {
    warnings.push(`${OLD_EGRESS_SETTING} is read as ${EGRESS_SETTING}, its new name: one setting for every outbound call pitcrew makes on a tenant's behalf (notifications, git repositories, Keystone and Monasca, OpenStack); rename it`);
  }
  const name = current !== undefined || old === undefined ? EGRESS_SETTING : OLD_EGRESS_SETTING;
  return { allowNetworks: networks(name, current ?? old) };
}

function networks(name: string, raw: string | undefined): string[] {
  const list = (raw ?? '').split(',').map((part) => part.trim()).filter(Boolean);
  const wrong = list.filter((cidr) => !isAddressOrCidr(cidr));
  if (wrong.length > 0) {
    throw new ConfigError(`${name} must list addresses or CIDRs (e.g. 10.20.0.0/16,fd00:1::/64), got "${wrong.join(', ')}"`);
  }
  return list;
}

function isAddressOrCidr(text: string): boolean {
  const [address = '', prefix, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** 32 bytes, written as 64 hexadecimal characters or as base64 (openssl rand -base64 32). */
function secretKey(raw: string | undefined, name = 'PITCREW_SECRET_KEY'): Buffer | undefined {
  if (!raw) return undefined;
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : /^[A-Za-z0-9+/]{43}=$/.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (!key || key.length !== 32) {
    throw new ConfigError(`${name} must be 32 bytes as 64 hexadecimal characters or base64 (make one with: openssl rand -base64 32)`);
  }
  return key;
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

function httpUrl(name: string, raw: string, example: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL such as ${example}, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must use http or https, got "${raw}"`);
  }
  return url.toString().replace(/\/$/, '');
}

function azureEndpoints(env: Env, cwd: string): AzureEndpoints {
  const caFile = env.PITCREW_AZURE_CA_FILE ? path.resolve(cwd, env.PITCREW_AZURE_CA_FILE) : undefined;
  return {
    authorityHost: env.PITCREW_AZURE_AUTHORITY_HOST ? httpsUrl('PITCREW_AZURE_AUTHORITY_HOST', env.PITCREW_AZURE_AUTHORITY_HOST, 'https://login.microsoftonline.us') : AZURE_DEFAULTS.authorityHost,
    resourceManagerUrl: env.PITCREW_AZURE_RESOURCE_MANAGER_URL ? httpsUrl('PITCREW_AZURE_RESOURCE_MANAGER_URL', env.PITCREW_AZURE_RESOURCE_MANAGER_URL, 'https://management.usgovcloudapi.net') : AZURE_DEFAULTS.resourceManagerUrl,
    caPem: caFile ? certificates('PITCREW_AZURE_CA_FILE', caFile) : undefined,
  };
}

/** Entra ID and Resource Manager only over TLS: MSAL refuses another authority, and the Azure SDK to send a token over http. */
function httpsUrl(name: string, raw: string, example: string): string {
  const url = httpUrl(name, raw, example);
  if (!url.startsWith('https://')) throw new ConfigError(`${name} must use https (Azure tokens are only sent over TLS), got "${raw}"`);
  return url;
}

/** A PEM file of one or more certificates, checked readable and parsed now rather than at the first call. */
function certificates(name: string, file: string): string {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${name}=${file} cannot be read: ${(error as Error).message}`);
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new ConfigError(`${name}=${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new ConfigError(`${name}=${file} holds a certificate Node cannot read: ${(error as Error).message}`);
    }
  }
  return blocks.join('\n');
}

function gcpEndpoints(env: Env): GcpEndpoints {
  const tokenUrl = env.PITCREW_GCP_TOKEN_URL ? httpUrl('PITCREW_GCP_TOKEN_URL', env.PITCREW_GCP_TOKEN_URL, 'https://oauth2-myendpoint.p.googleapis.com/token') : GCP_DEFAULTS.tokenUrl;
  if (new URL(tokenUrl).search) throw new ConfigError(`PITCREW_GCP_TOKEN_URL must be a URL without a query (the token endpoint is POSTed to), got "${env.PITCREW_GCP_TOKEN_URL}"`);
  const computeUrl = env.PITCREW_GCP_COMPUTE_URL ? httpUrl('PITCREW_GCP_COMPUTE_URL', env.PITCREW_GCP_COMPUTE_URL, 'https://compute-myendpoint.p.googleapis.com') : GCP_DEFAULTS.computeUrl;
  // The SDK takes a host and a port and builds the path itself (/compute/v1/projects/…): a path here would be dropped silently.
  if (new URL(computeUrl).origin !== computeUrl) throw new ConfigError(`PITCREW_GCP_COMPUTE_URL must be an origin (scheme, host and port only), such as https://compute-myendpoint.p.googleapis.com, got "${env.PITCREW_GCP_COMPUTE_URL}"`);
  return { tokenUrl, computeUrl };
}

function teamsBotEndpoints(env: Env): TeamsBotEndpoints {
  const openIdMetadataUrl = env.PITCREW_TEAMS_OPENID_METADATA_URL ? httpUrl('PITCREW_TEAMS_OPENID_METADATA_URL', env.PITCREW_TEAMS_OPENID_METADATA_URL, TEAMS_BOT_DEFAULTS.openIdMetadataUrl) : TEAMS_BOT_DEFAULTS.openIdMetadataUrl;
  const loginUrl = env.PITCREW_TEAMS_LOGIN_URL ? httpUrl('PITCREW_TEAMS_LOGIN_URL', env.PITCREW_TEAMS_LOGIN_URL, TEAMS_BOT_DEFAULTS.loginUrl) : TEAMS_BOT_DEFAULTS.loginUrl;
  return { openIdMetadataUrl, loginUrl };
}

function tlsFiles(env: Env): { certFile?: string; keyFile?: string } {
  const certFile = env.PITCREW_TLS_CERT || undefined;
  const keyFile = env.PITCREW_TLS_KEY || undefined;
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new ConfigError('PITCREW_TLS_CERT and PITCREW_TLS_KEY go together: set both (PEM files) or neither (a self-signed certificate is made)');
  }
  return certFile && keyFile ? { certFile, keyFile } : {};
}
