import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { enrolHost } from '../../src/hosts/repository.js';
import { buildApp, type App, type AppDeps } from '../../src/server/app.js';
import { listen } from '../../src/server/listen.js';
import { loggerOptions } from '../../src/http/logging.js';
import type { NotifySettings } from '../../src/config/config.js';
import { loadSecretKey } from '../../src/identity/secret-box.js';
import { STARTER_DIR } from '../../src/runbooks/library/catalogue.js';
import { RunbookLibrary } from '../../src/runbooks/library/library.js';
import { loadTlsMaterial } from '../../src/http/tls.js';
import type { TrustProxy } from '../../src/config/config.js';
import type { Dialect, Store } from '../../src/store/database.js';
import { bootstrapTenant, type BootstrapResult } from '../../src/tenants/bootstrap.js';
import { AGENT_BUNDLE } from './agents.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { SOURCE_RENDER_WORKER } from './render-worker.js';

/** The starter runbooks, as the built server reads them (src/cli/server.ts). */
export const RUNBOOK_LIBRARY = RunbookLibrary.load(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..', STARTER_DIR));

/** The built web UI (npm test builds it first). */
export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

export interface TestEnv {
  dialect: Dialect;
  database: TestDatabase;
  store: Store;
  app: App;
  tenant: BootstrapResult;
  /** Every log line the app wrote, as text. */
  logs: string[];
  listening: Listening | undefined;
  api(method: InjectOptions['method'], url: string, body?: unknown, token?: string): Promise<LightMyRequestResponse>;
  webhook(triggerId: string, body?: unknown, options?: { apiKey?: string; older?: boolean; headers?: Record<string, string>; ip?: string }): Promise<LightMyRequestResponse>;
  createWebhookRule(overrides?: Record<string, unknown>, token?: string): Promise<{ id: string; triggerId: string; body: Record<string, unknown> }>;
  addTenant(name: string): Promise<BootstrapResult>;
  /** Enrols a host as its agent would (no agent process): targets can then resolve to it. */
  enrol(hostname: string, tags?: string[], tenantId?: string): Promise<{ hostId: string; token: string }>;
  /** GET /metrics from the metrics listener's server, as Prometheus scrapes it: the text. */
  scrape(): Promise<string>;
  close(): Promise<void>;
}

export interface Listening {
  httpUrl: string;
  httpsUrl: string;
  /** The metrics listener (PITCREW_METRICS_ADDR), on a free loopback port. */
  metricsUrl: string;
  fingerprint: string;
}

export interface TestEnvOptions {
  /** When UI sessions end by themselves (idle, absolute). */
  sessions?: { idleMs?: number; maxMs?: number };
  /** Listen for real on loopback: HTTP and HTTPS (a self-signed certificate in the data directory). */
  listen?: boolean;
  executionExpirySeconds?: number;
  /** Another node on an existing test database (the first node's); it is not dropped on close. */
  database?: TestDatabase;
  sweepIntervalMs?: number;
  throttleDefaults?: { ratePerSecond: number; burst: number };
  webhookBodyLimitBytes?: number;
  /** PITCREW_INGEST_MAX_QUEUED; high unless a test is about a full queue. */
  ingestMaxQueued?: number;
  /** How often the scheduler looks for due cron ticks (tests drive it with `scheduler.pass(now)`: an hour unless set). */
  schedulerIntervalMs?: number;
  /** Occurrences per ingest transaction at most (256 unless a test is about it). */
  ingestMaxBatch?: number;
  sqliteBusyTimeoutMs?: number;
  logLevel?: string;
  trustProxy?: TrustProxy;
  /** Held 429s (PITCREW_THROTTLE_DELAY_MS); 0 unless a test is about them. */
  throttleDelayMs?: number;
  clock?: () => number;
  /** The address to listen on with `listen` (default 127.0.0.1; '::' for both IPv4 and IPv6). */
  listenHost?: string;
  /** Serve the built web UI at / (web/dist), as pitcrew server does. */
  webUi?: boolean;
  /** Notification delivery settings; tests default to fast retries and polling. */
  notify?: Partial<NotifySettings>;
  /** The networks outside the public internet outbound calls may reach (PITCREW_EGRESS_ALLOW_NETWORKS): loopback unless set. */
  egressAllowNetworks?: string[];
  publicUrl?: string;
  /** Where EC2 calls go (an emulator). */
  awsEndpoint?: string;
  awsStsEndpoint?: string;
  /** Where Azure calls go (an emulator) and the CA they trust. */
  azure?: AppDeps['azure'];
  /** Where GCP token requests and Compute calls go (an emulator). */
  gcp?: AppDeps['gcp'];
  /** Where Teams bots' tokens are checked and got (the Bot Framework emulator). */
  teamsBot?: AppDeps['teamsBot'];
  /** The CLI Machine's settings (the service's defaults unless set). */
  cli?: AppDeps['cli'];
  cloudPollMs?: number;
  /** How long close() lets requests in flight finish (the app's default unless a test is about it). */
  shutdownGraceMs?: number;
  /** PITCREW_RETENTION_DAYS; unset keeps history for ever. */
  retentionDays?: number;
  /** PITCREW_METRICS_TOKEN; unset, the API ports answer 404 for /metrics. */
  metricsToken?: string;
  /** How long an agent connection may stay without a hello (the service's 10 s unless a test is about it). */
  agentHelloTimeoutMs?: number;
  /** Action kinds beside the built-in ones, with their runners (a test's own kind). */
  extraKinds?: AppDeps['extraKinds'];
  /** How runbooks are read from git repositories; the cache is in the test's data directory unless set. */
  git?: AppDeps['git'];
  /** Where imports apply what they read (incidents unless set). */
  importSink?: AppDeps['importSink'];
  /** How often the import runner looks for due and queued imports besides being woken (tests drive it with `imports.runPass(now)`: an hour unless set). */
  importPollMs?: number;
  /** How often the background looks for the incident analytics' stale days (200 ms unless set). */
  rollupIntervalMs?: number;
}

export function scriptRule(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `rule-${Math.random().toString(36).slice(2, 10)}`,
    trigger: { type: 'webhook' },
    action: { type: 'script', flavour: 'autofix', runbook: { script: 'systemctl restart nginx' } },
    target: { type: 'trigger_host' },
    infrastructureType: 'On_Premise',
    ...overrides,
  };
}

export async function startTestEnv(dialect: Dialect, options: TestEnvOptions = {}): Promise<TestEnv> {
  const database = options.database ?? (await createTestDatabase(dialect));
  const store = database.open({ sqliteBusyTimeoutMs: options.sqliteBusyTimeoutMs });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino(loggerOptions(options.logLevel ?? 'debug'), sink);
  const app = await buildApp({
    store,
    logger,
    webhookBodyLimitBytes: options.webhookBodyLimitBytes ?? 256 * 1024,
    throttleDefaults: options.throttleDefaults ?? { ratePerSecond: 100_000, burst: 100_000 },
    ingest: { maxBatch: options.ingestMaxBatch ?? 256, maxQueued: options.ingestMaxQueued ?? 20_000 },
    executionExpirySeconds: options.executionExpirySeconds,
    agentHeartbeatSeconds: 1,
    agentHelloTimeoutMs: options.agentHelloTimeoutMs,
    sweepIntervalMs: options.sweepIntervalMs ?? 200,
    schedulerIntervalMs: options.schedulerIntervalMs ?? 3_600_000,
    trustProxy: options.trustProxy,
    clock: options.clock,
    throttleDelayMs: options.throttleDelayMs ?? 0,
    webRoot: options.webUi ? WEB_ROOT : undefined,
    agentBundle: AGENT_BUNDLE,
    runbookLibrary: RUNBOOK_LIBRARY,
    // The key file in the test's data directory, made on first use: a second node shares it.
    secretKey: loadSecretKey(database.dataDir, undefined).key,
    notify: { backoffBaseMs: 20, backoffMaxMs: 200, pollMs: 100, groupWaitSeconds: 30, sendTimeoutMs: 5000, ...options.notify },
    // The test receivers and servers listen on loopback: opened as an operator would open a network.
    egress: { allowNetworks: options.egressAllowNetworks ?? ['127.0.0.0/8', '::1/128'] },
    publicUrl: options.publicUrl,
    awsEndpoint: options.awsEndpoint,
    awsStsEndpoint: options.awsStsEndpoint,
    azure: options.azure,
    gcp: options.gcp,
    teamsBot: options.teamsBot,
    cli: options.cli,
    cloudPollMs: options.cloudPollMs ?? 20,
    shutdownGraceMs: options.shutdownGraceMs,
    retentionDays: options.retentionDays,
    metricsToken: options.metricsToken,
    extraKinds: options.extraKinds,
    git: { cacheDir: path.join(database.dataDir, 'git'), ...options.git },
    renderWorker: SOURCE_RENDER_WORKER,
    sessions: options.sessions,
    importSink: options.importSink,
    importPollMs: options.importPollMs ?? 3_600_000,
    rollupIntervalMs: options.rollupIntervalMs ?? 200,
  });
  await app.start();
  let listening: Listening | undefined;
  let stopListening = async () => undefined as void;
  if (options.listen) {
    const tls = await loadTlsMaterial(database.dataDir, {});
    const started = await listen(app, { host: options.listenHost ?? '127.0.0.1', port: 0, tlsPort: 0, tls, shutdownGraceMs: options.shutdownGraceMs, metrics: { host: '127.0.0.1', port: 0 } });
    listening = { httpUrl: started.httpUrl, httpsUrl: started.httpsUrl, metricsUrl: started.metricsUrl!, fingerprint: tls.fingerprint };
    stopListening = started.close;
  }
  // A second node on the same database finds the tenant: it gets a key and token of its own.
  const tenant = await bootstrapTenant(store, 'default', { again: true });

  const api: TestEnv['api'] = (method, url, body, token = tenant.token) =>
    app.server.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  const webhook: TestEnv['webhook'] = (triggerId, body, opts = {}) => {
    const prefix = opts.older ? '/api/trigger' : '/api/v1/trigger';
    const headers: Record<string, string> = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers };
    return app.server.inject({
      method: 'POST',
      url: `${prefix}/channel/webhook/${opts.apiKey ?? tenant.apiKey}/${triggerId}`,
      headers,
      remoteAddress: opts.ip ?? '127.0.0.1',
      ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  };

  const createWebhookRule: TestEnv['createWebhookRule'] = async (overrides = {}, token) => {
    const response = await api('POST', '/api/v1/rules', scriptRule(overrides), token);
    if (response.statusCode !== 201) throw new Error(`rule not created: ${response.body}`);
    const body = response.json();
    return { id: body.id, triggerId: body.trigger.triggerId, body };
  };

  return {
    dialect,
    database,
    store,
    app,
    tenant,
    logs,
    listening,
    api,
    webhook,
    createWebhookRule,
    addTenant: (name) => bootstrapTenant(store, name, { again: true }),
    enrol: async (hostname, tags = [], tenantId = tenant.tenantId) => {
      const key = await store.db.selectFrom('api_keys').select(['id', 'name']).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).orderBy('id').executeTakeFirstOrThrow();
      const by = { keyId: key.id, keyName: key.name, sourceIp: '127.0.0.1' };
      const { host, token } = await enrolHost(store.db, tenantId, { hostname, tags, os: 'Linux test', arch: 'x64', version: 'test' }, by, { replace: false });
      return { hostId: host.id, token };
    },
    scrape: async () => {
      const headers = options.metricsToken ? { authorization: `Bearer ${options.metricsToken}` } : {};
      const response = await app.metricsServer.inject({ method: 'GET', url: '/metrics', headers });
      if (response.statusCode !== 200) throw new Error(`metrics: ${response.statusCode} ${response.body}`);
      return response.body;
    },
    close: async () => {
      await stopListening();
      await app.close();
      await store.close();
      if (!options.database) await database.drop();
    },
  };
}
