import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { describe, expect, it } from 'vitest';
import { cliUser, ConfigError, loadConfig, logFormat, type Config } from './config.js';

const cwd = '/srv/pitcrew';
/** A service run as root runs CLI runbooks as nobody by default. */
const asRoot = process.getuid?.() === 0;

function failure(env: Record<string, string>): unknown {
  try {
    loadConfig(env, cwd);
  } catch (error) {
    return error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has defaults for everything', () => {
    expect(loadConfig({}, cwd, false)).toEqual({
      host: '0.0.0.0',
      port: 8080,
      tlsPort: 8443,
      dataDir: path.join(cwd, 'data'),
      databaseUrl: undefined,
      publicUrl: undefined,
      azure: { authorityHost: 'https://login.microsoftonline.com', resourceManagerUrl: 'https://management.azure.com', caPem: undefined },
      gcp: { tokenUrl: 'https://oauth2.googleapis.com/token', computeUrl: 'https://compute.googleapis.com' },
      teamsBot: { openIdMetadataUrl: 'https://login.botframework.com/v1/.well-known/openidconfiguration', loginUrl: 'https://login.microsoftonline.com' },
      logLevel: 'info',
      logFormat: 'json',
      webhookBodyLimitBytes: 256 * 1024,
      sqliteBusyTimeoutMs: 5000,
      throttleDefaults: { ratePerSecond: 500, burst: 1000 },
      throttleDelayMs: 1000,
      shutdownGraceMs: 5000,
      ingest: { maxBatch: 256, maxQueued: 20_000 },
      executionExpirySeconds: 3600,
      agentHeartbeatSeconds: 15,
      tls: {},
      trustProxy: false,
      secretKey: undefined,
      notify: { maxAttempts: 8, backoffBaseMs: 5000, backoffMaxMs: 900_000, groupWaitSeconds: 300, sendTimeoutMs: 10_000, pollMs: 1000, passSpacingMs: 50, snapshotLinkDays: 7, slackApiUrl: 'https://slack.com/api' },
      egress: { allowNetworks: [] },
      warnings: [],
      scheduleGraceSeconds: 300,
      retentionDays: undefined,
      backup: undefined,
      disk: { warnFree: { percent: 10 }, reserve: { bytes: 32 * 1024 * 1024 } },
      metrics: { listen: { host: '127.0.0.1', port: 9464 }, token: undefined },
      cli: { enabled: true, path: '/usr/local/bin:/usr/bin:/bin', scratchDir: os.tmpdir(), maxPerTenant: 4, maxOutputBytes: 1024 * 1024, runAs: asRoot ? expect.objectContaining({ name: 'nobody' }) : undefined },
      git: { cacheDir: path.join(cwd, 'data/git'), caPem: undefined, timeoutSeconds: 30, path: '/usr/local/bin:/usr/bin:/bin' },
      render: { workers: 1, maxQueued: 16, maxHeapMb: 256 },
      sessions: { idleMs: 120 * 60_000, maxMs: 12 * 3600_000 },
    });
  });

  it('treats empty variables as unset', () => {
    const empty = ['PORT', 'PITCREW_TLS_PORT', 'DATABASE_URL', 'PITCREW_PUBLIC_URL', 'PITCREW_WEBHOOK_BODY_LIMIT', 'PITCREW_THROTTLE_RATE', 'PITCREW_INGEST_MAX_BATCH', 'PITCREW_TRUST_PROXY', 'PITCREW_LOG_FORMAT'];
    expect(loadConfig(Object.fromEntries(empty.map((name) => [name, ''])), cwd)).toEqual(loadConfig({}, cwd));
  });

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '9000',
      PITCREW_TLS_PORT: '9443',
      PITCREW_DATA_DIR: 'var/lib',
      DATABASE_URL: 'postgresql://pitcrew@db:5432/pitcrew',
      PITCREW_PUBLIC_URL: 'https://pitcrew.example.com/',
      PITCREW_AWS_ENDPOINT_URL: 'https://ec2.eu-west-1.amazonaws.com/',
      PITCREW_AWS_STS_ENDPOINT_URL: 'https://sts.eu-west-1.amazonaws.com',
      PITCREW_AZURE_AUTHORITY_HOST: 'https://login.microsoftonline.us/',
      PITCREW_AZURE_RESOURCE_MANAGER_URL: 'https://management.usgovcloudapi.net',
      PITCREW_GCP_TOKEN_URL: 'https://oauth2-pitcrew.p.googleapis.com/token',
      PITCREW_GCP_COMPUTE_URL: 'https://compute-pitcrew.p.googleapis.com/',
      PITCREW_LOG_LEVEL: 'debug',
      PITCREW_LOG_FORMAT: 'pretty',
      PITCREW_WEBHOOK_BODY_LIMIT: '1024',
      PITCREW_SQLITE_BUSY_TIMEOUT_MS: '0',
      PITCREW_THROTTLE_RATE: '5',
      PITCREW_THROTTLE_BURST: '7',
      PITCREW_THROTTLE_DELAY_MS: '0',
      PITCREW_INGEST_MAX_BATCH: '1000',
      PITCREW_INGEST_MAX_QUEUED: '1',
      PITCREW_EXECUTION_EXPIRY_SECONDS: '60',
      PITCREW_AGENT_HEARTBEAT_SECONDS: '2',
      PITCREW_TLS_CERT: '/etc/pitcrew/cert.pem',
      PITCREW_TLS_KEY: '/etc/pitcrew/key.pem',
      PITCREW_TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1',
      PITCREW_SECRET_KEY: 'ab'.repeat(32),
      PITCREW_NOTIFY_MAX_ATTEMPTS: '3',
      PITCREW_NOTIFY_BACKOFF_BASE_MS: '10',
      PITCREW_NOTIFY_BACKOFF_MAX_MS: '100',
      PITCREW_NOTIFY_GROUP_WAIT_SECONDS: '0',
      PITCREW_NOTIFY_SEND_TIMEOUT_MS: '2000',
      PITCREW_NOTIFY_POLL_MS: '50',
      PITCREW_NOTIFY_PASS_SPACING_MS: '7',
      PITCREW_EGRESS_ALLOW_NETWORKS: ' 10.20.0.0/16, fd00:1::/64 ',
      PITCREW_SHUTDOWN_GRACE_MS: '250',
      PITCREW_RETENTION_DAYS: '90',
      PITCREW_DISK_WARN_FREE: '5GiB',
      PITCREW_DISK_RESERVE: '2%',
      PITCREW_SECRET_KEY_PREVIOUS: 'cd'.repeat(32),
      PITCREW_SCHEDULE_GRACE_SECONDS: '60',
      PITCREW_METRICS_ADDR: '0.0.0.0:9100',
      PITCREW_METRICS_TOKEN: 'scrape-token-0123456789',
      PITCREW_CLI_MACHINE: 'off',
      PITCREW_CLI_PATH: '/opt/clis/bin',
      PITCREW_CLI_SCRATCH_DIR: '/var/tmp/pitcrew-cli',
      PITCREW_CLI_MAX_PER_TENANT: '2',
      PITCREW_CLI_MAX_OUTPUT_BYTES: '65536',
      PITCREW_GIT_CACHE_DIR: '/var/cache/pitcrew-git',
      PITCREW_GIT_TIMEOUT_SECONDS: '5',
      PITCREW_SNAPSHOT_RENDER_WORKERS: '2',
      PITCREW_SNAPSHOT_RENDER_QUEUE: '40',
      PITCREW_SNAPSHOT_RENDER_HEAP_MB: '512',
      PATH: '/opt/git/bin:/usr/bin:/bin',
      PITCREW_SESSION_IDLE_MINUTES: '30',
      PITCREW_SESSION_MAX_HOURS: '8',
    }, cwd, false);
    expect(config).toEqual({
      host: '127.0.0.1',
      port: 9000,
      tlsPort: 9443,
      dataDir: path.join(cwd, 'var/lib'),
      databaseUrl: 'postgresql://pitcrew@db:5432/pitcrew',
      publicUrl: 'https://pitcrew.example.com',
      awsEndpoint: 'https://ec2.eu-west-1.amazonaws.com',
      awsStsEndpoint: 'https://sts.eu-west-1.amazonaws.com',
      azure: { authorityHost: 'https://login.microsoftonline.us', resourceManagerUrl: 'https://management.usgovcloudapi.net', caPem: undefined },
      gcp: { tokenUrl: 'https://oauth2-pitcrew.p.googleapis.com/token', computeUrl: 'https://compute-pitcrew.p.googleapis.com' },
      teamsBot: { openIdMetadataUrl: 'https://login.botframework.com/v1/.well-known/openidconfiguration', loginUrl: 'https://login.microsoftonline.com' },
      logLevel: 'debug',
      logFormat: 'pretty',
      webhookBodyLimitBytes: 1024,
      sqliteBusyTimeoutMs: 0,
      throttleDefaults: { ratePerSecond: 5, burst: 7 },
      throttleDelayMs: 0,
      shutdownGraceMs: 250,
      ingest: { maxBatch: 1000, maxQueued: 1 },
      executionExpirySeconds: 60,
      agentHeartbeatSeconds: 2,
      tls: { certFile: '/etc/pitcrew/cert.pem', keyFile: '/etc/pitcrew/key.pem' },
      trustProxy: ['10.0.0.5', '10.1.0.0/16', '::1'],
      secretKey: Buffer.alloc(32, 0xab),
      notify: { maxAttempts: 3, backoffBaseMs: 10, backoffMaxMs: 100, groupWaitSeconds: 0, sendTimeoutMs: 2000, pollMs: 50, passSpacingMs: 7, snapshotLinkDays: 7, slackApiUrl: 'https://slack.com/api' },
      egress: { allowNetworks: ['10.20.0.0/16', 'fd00:1::/64'] },
      warnings: [],
      scheduleGraceSeconds: 60,
      retentionDays: 90,
      backup: undefined,
      disk: { warnFree: { bytes: 5 * 1024 ** 3 }, reserve: { percent: 2 } },
      secretKeyPrevious: Buffer.from('cd'.repeat(32), 'hex'),
      metrics: { listen: { host: '0.0.0.0', port: 9100 }, token: 'scrape-token-0123456789' },
      cli: { enabled: false, path: '/opt/clis/bin', scratchDir: '/var/tmp/pitcrew-cli', maxPerTenant: 2, maxOutputBytes: 65536, runAs: asRoot ? expect.objectContaining({ name: 'nobody' }) : undefined },
      git: { cacheDir: '/var/cache/pitcrew-git', caPem: undefined, timeoutSeconds: 5, path: '/opt/git/bin:/usr/bin:/bin' },
      render: { workers: 2, maxQueued: 40, maxHeapMb: 512 },
      sessions: { idleMs: 30 * 60_000, maxMs: 8 * 3600_000 },
    });
  });

  it('logs JSON lines unless a person reads them: pretty on a terminal, or when PITCREW_LOG_FORMAT says so', () => {
    const cases: [string | undefined, boolean, string][] = [
      [undefined, false, 'json'],
      [undefined, true, 'pretty'],
      [' ', true, 'pretty'],
      ['json', true, 'json'],
      ['pretty', false, 'pretty'],
      [' pretty ', false, 'pretty'],
    ];
    for (const [raw, terminal, format] of cases) expect(logFormat(raw, terminal), `${raw} on ${terminal ? 'a terminal' : 'a pipe'}`).toBe(format);
    expect(() => loadConfig({ PITCREW_LOG_FORMAT: 'text' }, cwd)).toThrow('PITCREW_LOG_FORMAT must be json or pretty (unset: pretty when stdout is a terminal, json otherwise), got "text"');
  });

  it('refuses a chart renderer without a thread, or with too little memory to draw', () => {
    expect(() => loadConfig({ PITCREW_SNAPSHOT_RENDER_WORKERS: '0' }, cwd)).toThrow(/PITCREW_SNAPSHOT_RENDER_WORKERS must be a whole number from 1 to 64/);
    expect(() => loadConfig({ PITCREW_SNAPSHOT_RENDER_HEAP_MB: '16' }, cwd)).toThrow(/PITCREW_SNAPSHOT_RENDER_HEAP_MB must be a whole number from 64 to 16384/);
  });

  it('keeps the git cache in the data directory unless told, and reads the git CA file at start', async () => {
    expect(loadConfig({ PITCREW_DATA_DIR: '/srv/data' }, cwd).git.cacheDir).toBe('/srv/data/git');
    expect(() => loadConfig({ PITCREW_GIT_TIMEOUT_SECONDS: '0' }, cwd)).toThrow(/PITCREW_GIT_TIMEOUT_SECONDS must be a whole number from 1 to 3600/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-git-ca-'));
    try {
      const { cert } = await selfsigned.generate([{ name: 'commonName', value: 'git.internal' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
      fs.writeFileSync(path.join(dir, 'ca.pem'), cert);
      expect(loadConfig({ PITCREW_GIT_CA_FILE: 'ca.pem' }, dir).git.caPem).toBe(cert.trim());
      expect(() => loadConfig({ PITCREW_GIT_CA_FILE: 'missing.pem' }, dir)).toThrow(/PITCREW_GIT_CA_FILE=.*missing\.pem cannot be read/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes Azure endpoints over https only, and a CA file of certificates Node can read', async () => {
    expect(() => loadConfig({ PITCREW_AZURE_AUTHORITY_HOST: 'http://login.example' }, cwd)).toThrow(/PITCREW_AZURE_AUTHORITY_HOST must use https/);
    expect(() => loadConfig({ PITCREW_AZURE_RESOURCE_MANAGER_URL: 'management.azure.com' }, cwd)).toThrow(/PITCREW_AZURE_RESOURCE_MANAGER_URL must be an absolute URL/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-config-'));
    try {
      const { cert } = await selfsigned.generate([{ name: 'commonName', value: 'azurestack.local' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
      fs.writeFileSync(path.join(dir, 'ca.pem'), `# Azure Stack Hub root\n${cert}`);
      fs.writeFileSync(path.join(dir, 'key.pem'), '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
      fs.writeFileSync(path.join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n');
      expect(loadConfig({ PITCREW_AZURE_CA_FILE: 'ca.pem' }, dir).azure.caPem).toBe(cert.trim());
      expect(() => loadConfig({ PITCREW_AZURE_CA_FILE: 'key.pem' }, dir)).toThrow(/PITCREW_AZURE_CA_FILE=.*key\.pem holds no PEM certificate/);
      expect(() => loadConfig({ PITCREW_AZURE_CA_FILE: 'broken.pem' }, dir)).toThrow(/holds a certificate Node cannot read/);
      expect(() => loadConfig({ PITCREW_AZURE_CA_FILE: 'missing.pem' }, dir)).toThrow(/PITCREW_AZURE_CA_FILE=.*missing\.pem cannot be read/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes the GCP token URL whole and the Compute endpoint as an origin, never a path the SDK would drop', () => {
    expect(loadConfig({ PITCREW_TEAMS_OPENID_METADATA_URL: 'http://127.0.0.1:8090/v1/.well-known/openidconfiguration', PITCREW_TEAMS_LOGIN_URL: 'http://127.0.0.1:8090' }, cwd).teamsBot)
      .toEqual({ openIdMetadataUrl: 'http://127.0.0.1:8090/v1/.well-known/openidconfiguration', loginUrl: 'http://127.0.0.1:8090' });
    expect(() => loadConfig({ PITCREW_TEAMS_LOGIN_URL: 'login.microsoftonline.com' }, cwd)).toThrow(/PITCREW_TEAMS_LOGIN_URL must be an absolute URL/);
    expect(loadConfig({ PITCREW_GCP_TOKEN_URL: 'http://127.0.0.1:8085/token', PITCREW_GCP_COMPUTE_URL: 'http://127.0.0.1:8086' }, cwd).gcp).toEqual({ tokenUrl: 'http://127.0.0.1:8085/token', computeUrl: 'http://127.0.0.1:8086' });
    expect(() => loadConfig({ PITCREW_GCP_COMPUTE_URL: 'https://proxy.example/compute' }, cwd)).toThrow(/PITCREW_GCP_COMPUTE_URL must be an origin \(scheme, host and port only\).*got "https:\/\/proxy\.example\/compute"/);
    expect(() => loadConfig({ PITCREW_GCP_TOKEN_URL: 'https://oauth2.example/token?x=1' }, cwd)).toThrow(/PITCREW_GCP_TOKEN_URL must be a URL without a query/);
    expect(() => loadConfig({ PITCREW_GCP_TOKEN_URL: 'oauth2.googleapis.com/token' }, cwd)).toThrow(/PITCREW_GCP_TOKEN_URL must be an absolute URL/);
  });

  it('keeps the CLI Machine away from the data directory and from root', () => {
    expect(() => loadConfig({ PITCREW_DATA_DIR: '/srv/pitcrew', PITCREW_CLI_SCRATCH_DIR: '/srv/pitcrew/tmp' }, cwd)).toThrow(/PITCREW_CLI_SCRATCH_DIR must be outside the data directory/);
    expect(() => loadConfig({ PITCREW_CLI_MACHINE: 'yes' }, cwd)).toThrow(/PITCREW_CLI_MACHINE must be on or off/);
    expect(cliUser(undefined, false)).toBeUndefined();
    expect(cliUser(undefined, true)).toEqual({ name: 'nobody', uid: 65534, gid: 65534 });
    expect(cliUser('65534', true)).toMatchObject({ name: 'nobody' });
    expect(() => cliUser('nobody', false)).toThrow(/switching user needs the service to run as root/);
    expect(() => cliUser('root', true)).toThrow(/is root: CLI runbooks would reach the data directory/);
    expect(() => cliUser('no-such-user-here', true)).toThrow(/no such user on this machine/);
  });

  it('trusts X-Forwarded-For only from named proxies or a hop count, never from anyone', () => {
    expect(loadConfig({ PITCREW_TRUST_PROXY: 'false' }, cwd).trustProxy).toBe(false);
    expect(loadConfig({ PITCREW_TRUST_PROXY: '2' }, cwd).trustProxy).toBe(2);
    expect(() => loadConfig({ PITCREW_TRUST_PROXY: 'true' }, cwd)).toThrow(/PITCREW_TRUST_PROXY must list the proxies' addresses or CIDRs.*got "true"/);
    expect(() => loadConfig({ PITCREW_TRUST_PROXY: '10.0.0.0/33' }, cwd)).toThrow(/got "10.0.0.0\/33"/);
    expect(() => loadConfig({ PITCREW_TRUST_PROXY: '0' }, cwd)).toThrow(/hop count must be from 1 to 10/);
  });

  it('keeps history for ever unless told a period no shorter than what rules look back over', () => {
    expect(loadConfig({ PITCREW_RETENTION_DAYS: '0' }, cwd).retentionDays).toBeUndefined();
    expect(loadConfig({ PITCREW_RETENTION_DAYS: '' }, cwd).retentionDays).toBeUndefined();
    expect(loadConfig({ PITCREW_RETENTION_DAYS: '31' }, cwd).retentionDays).toBe(31);
    expect(() => loadConfig({ PITCREW_RETENTION_DAYS: '30' }, cwd)).toThrow(/PITCREW_RETENTION_DAYS must be 0 \(keep everything\) or a whole number of days from 31 to 36500, got "30": history younger than 31 days is still read by action limits/);
    expect(() => loadConfig({ PITCREW_RETENTION_DAYS: '90d' }, cwd)).toThrow(/got "90d"/);
  });

  it('serves metrics on loopback unless told where, or nowhere but behind a token on the API ports', () => {
    expect(loadConfig({ PITCREW_METRICS_ADDR: '[::1]:9464' }, cwd).metrics.listen).toEqual({ host: '::1', port: 9464 });
    expect(loadConfig({ PITCREW_METRICS_ADDR: 'localhost:0' }, cwd).metrics.listen).toEqual({ host: 'localhost', port: 0 });
    expect(loadConfig({ PITCREW_METRICS_ADDR: 'off' }, cwd).metrics.listen).toBeUndefined();
    expect(loadConfig({ PITCREW_METRICS_ADDR: '' }, cwd).metrics.listen).toEqual({ host: '127.0.0.1', port: 9464 });
    for (const wrong of ['9464', '127.0.0.1', '127.0.0.1:99999', '[nope]:9464', 'a:b:9464']) {
      expect(() => loadConfig({ PITCREW_METRICS_ADDR: wrong }, cwd)).toThrow(`PITCREW_METRICS_ADDR must be host:port (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464) or off, got "${wrong}"`);
    }
    expect(() => loadConfig({ PITCREW_METRICS_TOKEN: 'short' }, cwd)).toThrow(/PITCREW_METRICS_TOKEN must be at least 16 printable characters without spaces/);
    expect(() => loadConfig({ PITCREW_METRICS_TOKEN: 'has a space in it, sixteen+' }, cwd)).toThrow(/PITCREW_METRICS_TOKEN/);
  });

  it('opens no private network to outbound calls unless named, and refuses a list that is not CIDRs', () => {
    expect(loadConfig({}, cwd).egress.allowNetworks).toEqual([]);
    expect(() => loadConfig({ PITCREW_EGRESS_ALLOW_NETWORKS: 'all' }, cwd)).toThrow(/PITCREW_EGRESS_ALLOW_NETWORKS must list addresses or CIDRs.*got "all"/);
    expect(() => loadConfig({ PITCREW_EGRESS_ALLOW_NETWORKS: '10.0.0.0/8,192.168.0.0/40' }, cwd)).toThrow(/got "192.168.0.0\/40"/);
  });

  it('still reads the egress setting by its old notification name, with a warning to rename it; the new name wins', () => {
    const old = loadConfig({ PITCREW_NOTIFY_ALLOW_NETWORKS: '10.20.0.0/16' }, cwd);
    expect(old.egress.allowNetworks).toEqual(['10.20.0.0/16']);
    expect(old.warnings).toEqual([expect.stringMatching(/^PITCREW_NOTIFY_ALLOW_NETWORKS is read as PITCREW_EGRESS_ALLOW_NETWORKS, its new name: one setting for every outbound call .*; rename it$/)]);
    // Refused under the name the operator wrote.
    expect(() => loadConfig({ PITCREW_NOTIFY_ALLOW_NETWORKS: 'all' }, cwd)).toThrow(/^PITCREW_NOTIFY_ALLOW_NETWORKS must list addresses or CIDRs/);

    const both = loadConfig({ PITCREW_NOTIFY_ALLOW_NETWORKS: '10.20.0.0/16', PITCREW_EGRESS_ALLOW_NETWORKS: '192.168.7.0/24' }, cwd);
    expect(both.egress.allowNetworks).toEqual(['192.168.7.0/24']);
    expect(both.warnings).toEqual(['PITCREW_NOTIFY_ALLOW_NETWORKS is ignored: PITCREW_EGRESS_ALLOW_NETWORKS is set too and wins; remove PITCREW_NOTIFY_ALLOW_NETWORKS']);
    expect(loadConfig({ PITCREW_EGRESS_ALLOW_NETWORKS: '192.168.7.0/24' }, cwd).warnings).toEqual([]);
  });

  it('keeps an absolute data directory and a public URL path', () => {
    const config = loadConfig({ PITCREW_DATA_DIR: '/data/pitcrew', PITCREW_PUBLIC_URL: 'http://example.com/pitcrew/', DATABASE_URL: 'postgres://h/db' }, cwd);
    expect(config.dataDir).toBe('/data/pitcrew');
    expect(config.publicUrl).toBe('http://example.com/pitcrew');
    expect(config.databaseUrl).toBe('postgres://h/db');
  });

  it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])('accepts the log level %s', (level) => {
    expect(loadConfig({ PITCREW_LOG_LEVEL: level }, cwd).logLevel).toBe(level);
  });

  it.each<[string, string, (c: Config) => number, number]>([
    ['PORT', '65535', (c) => c.port, 65535],
    ['PORT', '0', (c) => c.port, 0],
    ['PITCREW_WEBHOOK_BODY_LIMIT', String(64 * 1024 * 1024), (c) => c.webhookBodyLimitBytes, 64 * 1024 * 1024],
    ['PITCREW_SQLITE_BUSY_TIMEOUT_MS', '600000', (c) => c.sqliteBusyTimeoutMs, 600_000],
    ['PITCREW_INGEST_MAX_BATCH', '1', (c) => c.ingest.maxBatch, 1],
    ['PITCREW_INGEST_MAX_QUEUED', '1000000', (c) => c.ingest.maxQueued, 1_000_000],
  ])('accepts the bound %s=%s', (name, value, read, expected) => {
    expect(read(loadConfig({ [name]: value }, cwd))).toBe(expected);
  });

  it.each([
    ['PITCREW_LOG_LEVEL', 'verbose'],
    ['PITCREW_LOG_LEVEL', 'INFO'],
    ['PITCREW_PUBLIC_URL', 'pitcrew.example.com'],
    ['PITCREW_PUBLIC_URL', 'ftp://pitcrew.example.com'],
    ['PORT', 'http'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PORT', '0x1F90'],
    ['PORT', '8e3'],
    ['PORT', ' 8080'],
    ['PITCREW_TLS_PORT', '70000'],
    ['PITCREW_WEBHOOK_BODY_LIMIT', '1023'],
    ['PITCREW_WEBHOOK_BODY_LIMIT', String(64 * 1024 * 1024 + 1)],
    ['PITCREW_SQLITE_BUSY_TIMEOUT_MS', '-5'],
    ['PITCREW_SQLITE_BUSY_TIMEOUT_MS', '600001'],
    ['PITCREW_THROTTLE_RATE', '0'],
    ['PITCREW_THROTTLE_BURST', '0'],
    ['PITCREW_THROTTLE_BURST', 'lots'],
    ['PITCREW_INGEST_MAX_BATCH', '1001'],
    ['PITCREW_INGEST_MAX_QUEUED', '0'],
    ['PITCREW_EXECUTION_EXPIRY_SECONDS', '0'],
    ['PITCREW_AGENT_HEARTBEAT_SECONDS', 'often'],
  ])('refuses %s=%j with a ConfigError naming it and the value', (name, value) => {
    const error = failure({ [name]: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(name);
    expect((error as Error).message).toContain(value);
  });

  it.each(['mysql://admin:s3cret@db/pitcrew', '/var/lib/pitcrew.db'])('refuses DATABASE_URL=%j without echoing it (it may hold a password)', (value) => {
    const error = failure({ DATABASE_URL: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^DATABASE_URL must start with postgres:\/\//);
    expect((error as Error).message).not.toContain('s3cret');
  });

  it('reports the variable that is wrong, not a neighbour', () => {
    const error = failure({ PORT: '8080', PITCREW_TLS_PORT: 'x', PITCREW_THROTTLE_RATE: '5' });
    expect((error as Error).message).toMatch(/^PITCREW_TLS_PORT /);
  });

  it('reads only the environment it is given', () => {
    const previous = process.env.PORT;
    process.env.PORT = 'not-a-port';
    try {
      expect(loadConfig({}, cwd).port).toBe(8080);
    } finally {
      if (previous === undefined) delete process.env.PORT;
      else process.env.PORT = previous;
    }
  });
});

describe('PITCREW_SECRET_KEY', () => {
  it('takes 32 bytes as hexadecimal or base64', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    expect(loadConfig({ PITCREW_SECRET_KEY: bytes.toString('hex') }).secretKey).toEqual(bytes);
    expect(loadConfig({ PITCREW_SECRET_KEY: bytes.toString('base64') }).secretKey).toEqual(bytes);
  });

  it.each(['short', 'ab'.repeat(31), Buffer.alloc(16, 1).toString('base64'), Buffer.alloc(48, 1).toString('base64')])('refuses %j without echoing it', (value) => {
    expect(() => loadConfig({ PITCREW_SECRET_KEY: value })).toThrow(/PITCREW_SECRET_KEY must be 32 bytes/);
    try {
      loadConfig({ PITCREW_SECRET_KEY: value });
    } catch (error) {
      expect((error as Error).message).not.toContain(value);
    }
  });
});

describe('PITCREW_BACKUP_SCHEDULE', () => {
  it('is off unless set, and keeps 7 in the data directory by default', () => {
    expect(loadConfig({}, '/srv').backup).toBeUndefined();
    expect(loadConfig({ PITCREW_BACKUP_SCHEDULE: '0 3 * * *', PITCREW_DATA_DIR: 'state' }, '/srv').backup).toEqual({ schedule: '0 3 * * *', keep: 7, dir: '/srv/state/backups' });
    expect(loadConfig({ PITCREW_BACKUP_SCHEDULE: '0 3 * * *', PITCREW_BACKUP_KEEP: '30', PITCREW_BACKUP_DIR: '/mnt/b' }, '/srv').backup).toMatchObject({ keep: 30, dir: '/mnt/b' });
  });

  it('refuses a schedule that is not cron, and PostgreSQL', () => {
    expect(() => loadConfig({ PITCREW_BACKUP_SCHEDULE: 'daily' })).toThrow(/PITCREW_BACKUP_SCHEDULE must be a cron schedule such as "0 3 \* \* \*".*got "daily"/);
    expect(() => loadConfig({ PITCREW_BACKUP_SCHEDULE: '0 3 * * *', DATABASE_URL: 'postgres://db/pitcrew' })).toThrow(/pg_dump/);
    expect(() => loadConfig({ PITCREW_BACKUP_SCHEDULE: '0 3 * * *', PITCREW_BACKUP_KEEP: '0' })).toThrow(/PITCREW_BACKUP_KEEP/);
  });
});

describe('PITCREW_DISK_WARN_FREE and PITCREW_DISK_RESERVE', () => {
  it('take a share or a size, 10 % and 32 MiB by default', () => {
    expect(loadConfig({}).disk).toEqual({ warnFree: { percent: 10 }, reserve: { bytes: 32 * 1024 * 1024 } });
    expect(loadConfig({ PITCREW_DISK_WARN_FREE: '2GiB', PITCREW_DISK_RESERVE: '1.5%' }).disk).toEqual({ warnFree: { bytes: 2 * 1024 ** 3 }, reserve: { percent: 1.5 } });
    expect(loadConfig({ PITCREW_DISK_RESERVE: '1048576' }).disk.reserve).toEqual({ bytes: 1048576 });
  });

  it('refuses what is neither', () => {
    expect(() => loadConfig({ PITCREW_DISK_RESERVE: 'lots' })).toThrow(/PITCREW_DISK_RESERVE must be a share .* such as 10% or a size such as 32MiB or 2GiB, got "lots"/);
    expect(() => loadConfig({ PITCREW_DISK_WARN_FREE: '150%' })).toThrow(/PITCREW_DISK_WARN_FREE/);
  });
});

describe('TLS files', () => {
  it('needs the certificate and the key together', () => {
    expect(() => loadConfig({ PITCREW_TLS_CERT: '/etc/pitcrew/cert.pem' })).toThrow(/PITCREW_TLS_CERT and PITCREW_TLS_KEY go together/);
    expect(() => loadConfig({ PITCREW_TLS_KEY: '/etc/pitcrew/key.pem' })).toThrow(ConfigError);
  });
});
