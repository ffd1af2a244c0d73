import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { AgentGateway } from '../agents/gateway.js';
import { registerAgentDownloadRoute, registerAgentInstallRoutes, type AgentOffer } from '../agents/install.js';
import { registerAgentRoutes } from '../agents/routes.js';
import { NodeRegistry, newNodeId } from '../cluster/nodes.js';
import { LiveRelay, type LiveNotice } from '../cluster/live-relay.js';
import { Wakeups } from '../cluster/wakeups.js';
import { registerEscalationRoutes } from '../escalations/routes.js';
import { EventWriter, type QueuedExecution } from '../ingest/writer.js';
import { ExecutionLedger } from '../executions/ledger.js';
import { LiveExecutions } from '../executions/live.js';
import { registerExecutionRoutes } from '../executions/routes.js';
import { APPROVAL_LINK_PURPOSE } from '../executions/approval-link.js';
import { registerApprovalRoutes } from '../executions/approval-routes.js';
import { registerTeamsActivityRoute } from '../notify/teams/activities-route.js';
import { refreshTeamsCards } from '../notify/teams/card-refresh.js';
import { BotConnector } from '../notify/teams/connector.js';
import { TEAMS_BOT_DEFAULTS, type TeamsBotEndpoints } from '../notify/teams/endpoints.js';
import { BotTokenCheck } from '../notify/teams/inbound-token.js';
import type { ExecutionRow } from '../store/schema.js';
import type { ExecutionState } from '../executions/states.js';
import { Placement } from '../executions/placement.js';
import { Sweeper } from '../executions/sweeper.js';
import { Retention } from '../retention/retention.js';
import { DiskWatch, type DiskWatchSettings } from '../store/disk-watch.js';
import { incidentFixes } from '../incidents/fixes.js';
import { QuietCloser } from '../incidents/closer.js';
import { RollupRefresher } from '../incidents/rollup-refresher.js';
import { registerIncidentRoutes } from '../incidents/routes.js';
import { Statements } from '../store/statements.js';
import { registerHostRoutes } from '../hosts/routes.js';
import { HostSessions } from '../hosts/sessions.js';
import { registerEventRoutes } from '../events/routes.js';
import { registerWebhookRoutes } from '../ingress/webhook.js';
import { EmailRunbookRunner } from '../actions/email-runbook/runner.js';
import { SnapshotRunner } from '../actions/snapshot/runner.js';
import { graphSources } from '../integrations/graph-sources.js';
import { registerSnapshotRoutes } from '../snapshots/routes.js';
import { SIGNED_LINK_PURPOSE } from '../snapshots/signed-link.js';
import { RENDER_WORKER, RenderPool, type RenderWorkerEntry } from '../snapshots/render-pool.js';
import type { ActionKind } from '../actions/kind.js';
import { ActionKinds } from '../actions/kinds.js';
import { ServiceExecutor, type ServiceRunner } from '../executions/service-executor.js';
import { AZURE_DEFAULTS, CLI_MACHINE_DEFAULTS, GIT_DEFAULTS, RENDER_DEFAULTS, type AzureEndpoints, type CliMachineSettings, type EgressSettings, type GitSettings, type NotifySettings, type RenderSettings } from '../config/config.js';
import { Metrics } from '../metrics/registry.js';
import { registerContactRoutes } from '../notify/contacts-routes.js';
import { EscalationRelay } from '../notify/escalation-relay.js';
import { UiLinks } from '../notify/links.js';
import { Notifier } from '../notify/notifier.js';
import { SLACK_API_URL } from '../notify/senders/slack-web-api.js';
import { SlackInteractions } from '../notify/slack/interactions.js';
import { registerChannelRoutes } from '../notify/routes.js';
import { SecretBox } from '../identity/secret-box.js';
import { AuditRecorder } from '../identity/audit/recorder.js';
import { registerAuditRoutes } from '../identity/audit/routes.js';
import { registerIncidentAnalyticsRoutes } from '../incidents/analytics-routes.js';
import { registerRuleRoutes } from '../rules/routes.js';
import { registerIntegrationRoutes } from '../integrations/routes.js';
import { registerCredentialRoutes } from '../credentials/routes.js';
import { registerRunbookRoutes } from '../runbooks/routes.js';
import { followRunbook, rulesUsingRepository, rulesUsingRunbook } from '../rules/runbook-refs.js';
import type { RunbookLibrary } from '../runbooks/library/library.js';
import { registerRunbookLibraryRoutes } from '../runbooks/library/routes.js';
import { registerRepositoryRoutes } from '../runbooks/git/routes.js';
import { GitSources, RunbookFetchError } from '../runbooks/git/sources.js';
import { RunbookStage } from '../executions/runbook-stage.js';
import { ENV_REFUSAL_TEXT, refusalForName } from '../ingress/env.js';
import { CliRunner } from '../actions/cli/runner.js';
import { CloudRunner, probeCloud, type CloudProviders } from '../actions/cloud/runner.js';
import { lazyProvider } from '../actions/cloud/lazy.js';
import { snsCertificates, toolParsers, type ToolDeps } from '../integrations/tools.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { ImportRunner } from '../imports/runner.js';
import { registerImportRoutes } from '../imports/routes.js';
import type { ObservationSink } from '../imports/sink.js';
import { applyObservations } from '../incidents/apply.js';
import { toolImporters } from '../integrations/importers.js';
import { registerMonascaRoutes } from '../integrations/monasca/routes.js';
import { EgressPolicy } from '../egress/policy.js';
import { policyFetch } from '../egress/fetch.js';
import { registerIntegrationIngress } from '../ingress/integration.js';
import { DeliveryStamps } from '../integrations/delivery-stamps.js';
import { registerAlertPreviewRoute } from '../ingress/alert-preview.js';
import { registerTestAlertRoute } from '../ingress/test-alert.js';
import { registerRunNowRoutes } from '../ingress/run-now.js';
import { registerIncidentRunRoutes } from '../ingress/incident-runs.js';
import { linkRuleToIncidents } from '../incidents/rule-links.js';
import { GCP_DEFAULTS, type GcpEndpoints, type TrustProxy } from '../config/config.js';
import type { Store } from '../store/database.js';
import { KeyDirectory } from '../tenants/directory.js';
import type { ThrottleSettings } from '../tenants/repository.js';
import { registerTenantRoutes } from '../tenants/routes.js';
import { Tarpit } from '../tenants/tarpit.js';
import { PitcrewError } from '../errors/catalogue.js';
import { managementAuth } from '../identity/management-auth.js';
import { ROLE_KEY } from '../identity/access.js';
import { SESSION_DEFAULTS, type SessionPolicy } from '../identity/sessions.js';
import { registerSignInRoutes } from '../identity/sign-in-routes.js';
import { oidcFetch } from '../identity/sso/oidc.js';
import { ssoRequired, ssoRequiredReason } from '../identity/sso/providers.js';
import { registerSsoRoutes } from '../identity/sso/routes.js';
import { registerTokenRoutes } from '../identity/tokens-routes.js';
import { registerUserRoutes } from '../identity/users-routes.js';
import { registerTotpResetRoute } from '../identity/totp-reset-route.js';
import { registerTotpRoutes } from '../identity/totp-routes.js';
import { sendAccountMail } from '../notify/account-mail.js';
import type { MailLink } from '../identity/account-links.js';
import { jsonBodyParser } from '../http/json-body.js';
import { AccessLog, lazyChildLogger } from '../http/logging.js';
import { registerHealthRoutes } from '../http/health.js';
import { buildMetricsServer, registerMetricsRoute } from '../http/metrics.js';
import { openApiOptions } from '../http/openapi.js';
import { errorHandler, frameworkErrorHandler, notFoundHandler } from '../http/problem.js';
import { trackKeyedRoutes } from '../http/keyed-routes.js';
import { ProblemSchema } from '../http/schemas.js';
import { closeWithin, SHUTDOWN_GRACE_MS } from '../http/shutdown.js';
import type { Api } from '../http/types.js';
import { RouteSchemas } from '../http/route-schemas.js';
import { isWebUiBuilt, registerWebUi, spaFallback } from '../http/web.js';

export interface AppDeps {
  store: Store;
  logger: FastifyBaseLogger;
  publicUrl?: string | undefined;
  /** PITCREW_AWS_ENDPOINT_URL: EC2 calls go there instead of AWS's regional endpoints. */
  awsEndpoint?: string | undefined;
  /** PITCREW_AWS_STS_ENDPOINT_URL: where cloud actions assume a credential's role. */
  awsStsEndpoint?: string | undefined;
  /** PITCREW_AZURE_*: where Azure cloud actions get tokens and call Resource Manager, and a CA they trust; public Azure's unless set. */
  azure?: Partial<AzureEndpoints>;
  /** PITCREW_GCP_TOKEN_URL, PITCREW_GCP_COMPUTE_URL: where GCP cloud actions get tokens and call Compute Engine; Google's unless set. */
  gcp?: Partial<GcpEndpoints>;
  /** How the CLI Machine runs CLI runbooks (config PITCREW_CLI_*); the defaults of a service not run as root. */
  cli?: Partial<CliMachineSettings>;
  /** How runbooks are read from git repositories (config PITCREW_GIT_*); a temp cache unless set. */
  git?: Partial<GitSettings>;
  /** How graph snapshots are drawn (config PITCREW_SNAPSHOT_RENDER_*): one thread unless set. */
  render?: Partial<RenderSettings>;
  /** The chart renderer's thread code: the built one beside the service's; tests run the sources. */
  renderWorker?: RenderWorkerEntry;
  /** How often a cloud action reads its instance's state while waiting (5 s; tests shorten it). */
  cloudPollMs?: number;
  webhookBodyLimitBytes: number;
  throttleDefaults: ThrottleSettings;
  ingest: { maxBatch: number; maxQueued: number };
  executionExpirySeconds?: number;
  agentHeartbeatSeconds?: number;
  /** How long an agent connection may stay without a hello (tests shorten the 10 s). */
  agentHelloTimeoutMs?: number;
  sweepIntervalMs?: number;
  /** Peers trusted to set X-Forwarded-For (config PITCREW_TRUST_PROXY); off by default. */
  trustProxy?: TrustProxy;
  /** How long a 429 of a throttled tenant is held before it is sent (PITCREW_THROTTLE_DELAY_MS). */
  throttleDelayMs?: number;
  /** What time ingress and decide() go by; tests move it to cross windows without waiting. */
  clock?: () => number;
  /** The built web UI (web/dist); served at / when it holds index.html. */
  webRoot?: string | undefined;
  /** The bundled agent (dist/pitcrew-agent.mjs), offered for download to hosts. */
  agentBundle?: string | undefined;
  /** The starter runbooks shipped with pitcrew (RunbookLibrary.load of runbooks/library/catalogue.ts STARTER_DIR). */
  runbookLibrary: RunbookLibrary;
  /** The 32-byte key that seals channel secrets (PITCREW_SECRET_KEY or $PITCREW_DATA_DIR/secret.key). */
  secretKey: Buffer;
  /** PITCREW_SECRET_KEY_PREVIOUS: the key a rotation replaces, still opening what it sealed (docs/operations.md). */
  secretKeyPrevious?: Buffer | undefined;
  notify?: Partial<NotifySettings>;
  /** PITCREW_EGRESS_ALLOW_NETWORKS: the networks outside the public internet a tenant's outbound calls may reach (none). */
  egress?: EgressSettings;
  /** How long close() lets requests in flight finish before cutting their connections. */
  shutdownGraceMs?: number;
  /** History older than this many days is deleted (PITCREW_RETENTION_DAYS); absent, kept for ever. */
  retentionDays?: number | undefined;
  /** The data directory's free space watched against PITCREW_DISK_WARN_FREE and PITCREW_DISK_RESERVE; absent, not watched. */
  disk?: DiskWatchSettings | undefined;
  /** PITCREW_METRICS_TOKEN: the bearer token a scraper must send; without it the API ports answer 404 for /metrics. */
  metricsToken?: string | undefined;
  /** Action kinds beside the built-in ones (actions/kinds.ts), with the runners of those the service runs: a test's own kind. */
  extraKinds?: { kinds: ActionKind[]; runners: ServiceRunner[] };
  /** How the tools' parsers reach out (SNS certificates); tests give an emulator's. */
  integrationTools?: ToolDeps;
  /** PITCREW_TEAMS_OPENID_METADATA_URL, PITCREW_TEAMS_LOGIN_URL: where Teams bots' tokens are checked and got; Microsoft's unless set. */
  teamsBot?: Partial<TeamsBotEndpoints>;
  /** How often the service executor looks for work besides being woken (1 s). */
  serviceExecutorPollMs?: number;
  /** How often each node looks for due cron ticks (1 s). */
  schedulerIntervalMs?: number;
  /** PITCREW_SCHEDULE_GRACE_SECONDS (300). */
  scheduleGraceSeconds?: number;
  /** When UI sessions end by themselves (PITCREW_SESSION_*). */
  sessions?: Partial<SessionPolicy>;
  /** Where imports apply what they read (incidents); tests may give their own. */
  importSink?: ObservationSink;
  /** How often each node looks for due and queued imports (1 s). */
  importPollMs?: number;
  /** How often each node looks for the incident analytics' stale days to recompute (1 s). */
  rollupIntervalMs?: number;
}

/** A cancel announced to other nodes for a run by the service names this instead of a host. */
const SERVICE_RUN = 'service';
const NOTIFY_DEFAULTS: NotifySettings = { maxAttempts: 8, backoffBaseMs: 5000, backoffMaxMs: 900_000, groupWaitSeconds: 300, sendTimeoutMs: 10_000, pollMs: 1000, passSpacingMs: 50, snapshotLinkDays: 7, slackApiUrl: SLACK_API_URL };

/** The services buildApp made and wired together: for listen(), the CLI and tests. */
export interface Services {
  store: Store;
  writer: EventWriter;
  ledger: ExecutionLedger;
  live: LiveExecutions;
  gateway: AgentGateway;
  wakeups: Wakeups;
  liveRelay: LiveRelay;
  directory: KeyDirectory;
  tarpit: Tarpit;
  metrics: Metrics;
  notifier: Notifier;
  /** Runs the executions the service makes itself (email_runbook). */
  executor: ServiceExecutor;
  /** Fires cron rules. */
  scheduler: Scheduler;
  kinds: ActionKinds;
  /** Seals and opens channel secrets (the key lives outside the database). */
  secretBox: SecretBox;
  /** The agent file and where agents connect; listen() sets the endpoint once the HTTPS port is open. */
  agentOffer: AgentOffer;
  /** Reads runbooks from tenants' git repositories (before each execution that names one). */
  gitSources: GitSources;
  /** Imports tools' alarms with their read-only credentials (src/imports/). */
  imports: ImportRunner;
  /** Closes incidents of webhook alarms quiet for their tenant's period (the sweeper runs it; tests call closeQuiet). */
  quietCloser: QuietCloser;
  /** Recomputes the incident analytics' stale days in the background (tests call refreshAll). */
  rollups: RollupRefresher;
}

export interface App {
  server: Api;
  /** /metrics alone, for the metrics listener (PITCREW_METRICS_ADDR); not listening yet. */
  metricsServer: Api;
  context: Services;
  /** Route schemas compile on each route's first request; `compileAll()` compiles the rest (a test does, for every route). */
  routeSchemas: RouteSchemas;
  /** Starts the background duties (node heartbeat, recovery, expiry); call once before listening. */
  start(): Promise<void>;
  /** Stops taking requests and agent connections, finishes what was accepted; leaves the store open. */
  close(): Promise<void>;
}

/** Builds the service from its settings, without listening, so tests can `inject` and the CLI can `listen`. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const metrics = new Metrics();
  const clock = deps.clock ?? Date.now;
  const nodeId = newNodeId();
  const live = new LiveExecutions((executionId, pieces) => liveRelay.relay(executionId, pieces));
  // Other nodes exist only where Wakeups listens (a dedicated PostgreSQL connection).
  const announceLive = deps.store.dedicatedConnection ? (notice: LiveNotice) => wakeups.announceLive(notice) : undefined;
  const liveRelay: LiveRelay = new LiveRelay(live, announceLive, (hostId) => gateway.holds(hostId), clock);
  const secretBox = new SecretBox(deps.secretKey, deps.secretKeyPrevious);
  // Every call to a service a tenant names (notifications, Keystone, Monasca, Nova, git servers), under one egress policy.
  const egress = new EgressPolicy(deps.egress?.allowNetworks ?? []);
  const toolFetch = policyFetch(egress);
  const gitSources = new GitSources({ db: deps.store.db, box: secretBox, egress, settings: { ...GIT_DEFAULTS, ...deps.git }, logger: deps.logger });
  const clouds: CloudProviders = {
    aws: lazyProvider(async () => new (await import('../actions/cloud/aws.js')).AwsEc2({ awsEndpoint: deps.awsEndpoint, stsEndpoint: deps.awsStsEndpoint, pollMs: deps.cloudPollMs })),
    openstack: lazyProvider(async () => new (await import('../actions/cloud/openstack.js')).NovaServers({ fetch: toolFetch, pollMs: deps.cloudPollMs })),
    azure: lazyProvider(async () => new (await import('../actions/cloud/azure.js')).AzureVms({ ...AZURE_DEFAULTS, ...deps.azure, pollMs: deps.cloudPollMs })),
    gcp: lazyProvider(async () => new (await import('../actions/cloud/gcp.js')).GceInstances({ ...GCP_DEFAULTS, ...deps.gcp, pollMs: deps.cloudPollMs })),
  };
  const links = new UiLinks(deps.publicUrl);
  const kinds = new ActionKinds(deps.extraKinds?.kinds);
  const escalationRelay = new EscalationRelay(deps.store.db, (escalation) => notifier.escalate(escalation), clock);
  const teamsBot = { ...TEAMS_BOT_DEFAULTS, ...deps.teamsBot };
  const botConnector = new BotConnector(egress, teamsBot, { ...NOTIFY_DEFAULTS, ...deps.notify }.sendTimeoutMs);
  const notifier: Notifier = new Notifier({
    store: deps.store, box: secretBox, egress, links, logger: deps.logger, nodeId, settings: { ...NOTIFY_DEFAULTS, ...deps.notify }, teams: botConnector,
    duties: [() => escalationRelay.run(), () => refreshTeamsCards({ db: deps.store.db, box: secretBox, connector: botConnector, logger: deps.logger })],
    describeAction: (spec) => kinds.describe(spec),
  });
  const cli = { ...CLI_MACHINE_DEFAULTS, ...deps.cli };
  const snapshots = new SnapshotRunner({ db: deps.store.db, box: secretBox, fetch: toolFetch, sources: graphSources({ awsEndpoint: deps.awsEndpoint, stsEndpoint: deps.awsStsEndpoint }), logger: deps.logger, clock,
    render: new RenderPool({ ...RENDER_DEFAULTS, ...deps.render }, deps.renderWorker ?? RENDER_WORKER),
  });
  const executor = new ServiceExecutor({
    db: deps.store.db, ledger: { claimForService: (...a) => ledger.claimForService(...a), move: (...a) => ledger.move(...a), serviceResult: (result) => ledger.serviceResult(result) },
    nodeId, logger: deps.logger, pollMs: deps.serviceExecutorPollMs ?? 1000, clock, output: (id, stream, chunk) => live.output(id, stream, chunk),
    runners: [
      new EmailRunbookRunner(deps.store.db, links),
      new CloudRunner(deps.store.db, deps.store.dialect, secretBox, clouds, deps.logger),
      snapshots,
      ...(cli.enabled ? [new CliRunner(deps.store.db, secretBox, { ...cli, awsEndpoint: deps.awsEndpoint, awsStsEndpoint: deps.awsStsEndpoint })] : []),
      ...(deps.extraKinds?.runners ?? []),
    ],
  });
  // Work for agents connected here is pushed now; other nodes are told (PostgreSQL NOTIFY).
  const dispatchQueued = (executions: QueuedExecution[]) => {
    gateway.dispatch(executions);
    wakeups.publish('queued', executions.filter((e) => !e.claim && !gateway.holds(e.hostId)));
  };
  // A cancel for an agent connected elsewhere, or a run by another node, is announced to the other nodes.
  const cancelRunning = (hostId: string | null, executionId: string) => {
    const here = hostId === null ? executor.cancel(executionId) : gateway.cancel(hostId, executionId);
    if (!here) wakeups.publish('cancel', [{ id: executionId, hostId: hostId ?? SERVICE_RUN }]);
  };
  const ledger: ExecutionLedger = new ExecutionLedger(deps.store.db, deps.store.dialect, deps.store.durability, {
    onChange: (changes) => live.changed(changes), onReleased: dispatchQueued, outboxes: [notifier.ledgerOutbox, incidentFixes(new Statements(deps.store.dialect), deps.store.dialect)], logger: deps.logger,
  });
  // Runs whose script is a file of a git repository: read fresh for each event before dispatch.
  const runbookStage = new RunbookStage({
    db: deps.store.db, ledger, logger: deps.logger, pollMs: deps.serviceExecutorPollMs ?? 1000, onServiceWork: () => executor.wake(),
    reader: { read: (tenantId, source) => gitSources.read(tenantId, source), isRefusal: (error) => error instanceof RunbookFetchError },
  });
  const gateway = new AgentGateway({
    db: deps.store.db, ledger, live, nodeId, logger: deps.logger, hostSessions: new HostSessions(deps.store.db, deps.store.durability, deps.store.dialect), heartbeatSeconds: deps.agentHeartbeatSeconds ?? 15, helloTimeoutMs: deps.agentHelloTimeoutMs,
    recoverFromDeadNodes: () => sweeper.recoverFromDeadNodes(Date.now(), true), helloSeconds: metrics.agentHelloSeconds,
  });
  metrics.agentGateway = gateway;
  const writer = new EventWriter(deps.store.db, deps.store.durability, metrics, {
    ...deps.ingest,
    dialect: deps.store.dialect,
    executionExpirySeconds: deps.executionExpirySeconds ?? 3600,
    onQueued: dispatchQueued,
    readySession: (hostId) => gateway.readySession(hostId),
    clock,
    kinds,
    onNotifierWork: () => notifier.wake(),
    onServiceWork: () => executor.wake(),
    onRunbookWork: () => runbookStage.wake(),
    onAfterCommitError: (error) => deps.logger.error({ err: error }, 'events stored, but telling agents or the notifier of them failed; the sweeper dispatches what is queued'),
  });
  const wakeups: Wakeups = new Wakeups(deps.store, {
    queued: (executions) => gateway.dispatch(executions.filter((e) => gateway.holds(e.hostId))),
    cancel: (executions) => executions.forEach((e) => (e.hostId === SERVICE_RUN ? executor.cancel(e.id) : gateway.cancel(e.hostId, e.id))),
    live: (notice) => liveRelay.received(notice),
    tenantChanged: (tenantId) => context.directory.forgetTenant(tenantId),
  }, deps.logger);
  const scheduler = new Scheduler({
    db: deps.store.db, writer, logger: deps.logger, clock, intervalMs: deps.schedulerIntervalMs ?? 1000, graceMs: (deps.scheduleGraceSeconds ?? 300) * 1000,
    tellNotRun: (tenantId, eventId) => notifier.tellNotRun(tenantId, eventId),
  });
  const imports = new ImportRunner({
    store: deps.store, box: secretBox, fetch: toolFetch, importerOf: toolImporters({ awsEndpoint: deps.awsEndpoint, stsEndpoint: deps.awsStsEndpoint }), sink: deps.importSink ?? toIncidents,
    nodeId, logger: deps.logger, clock, pollMs: deps.importPollMs,
  });
  const disk = deps.disk && new DiskWatch(deps.disk, { logger: deps.logger, metrics, clock });
  const quietCloser = new QuietCloser({ db: deps.store.db, dialect: deps.store.dialect, logger: deps.logger });
  const rollups = new RollupRefresher({ db: deps.store.db, dialect: deps.store.dialect, logger: deps.logger, intervalMs: deps.rollupIntervalMs });
  const sweeper: Sweeper = new Sweeper({
    db: deps.store.db, nodeId, nodes: new NodeRegistry(deps.store, nodeId), ledger, gateway, logger: deps.logger, intervalMs: deps.sweepIntervalMs ?? 1000, clock,
    placement: new Placement({ db: deps.store.db, ledger, logger: deps.logger }),
    retention: deps.retentionDays ? new Retention({ db: deps.store.db, dialect: deps.store.dialect, days: deps.retentionDays, logger: deps.logger, metrics }) : undefined,
    incidents: quietCloser,
    escalateUndecided: (tenantId, executionId) => notifier.escalateUndecided(tenantId, executionId),
    escalateOwed: (now) => notifier.escalateOwed(now),
    // Built below, called only once the sweeper has started.
    decideLapsedClicks: (now) => slackInteractions.decideLapsed(now),
  });
  const context: Services = {
    store: deps.store,
    metrics,
    notifier,
    executor,
    scheduler,
    kinds,
    secretBox,
    writer,
    ledger,
    live,
    liveRelay,
    gateway,
    wakeups,
    directory: new KeyDirectory(deps.store.db, deps.throttleDefaults, (tenantId) => wakeups.publishTenantChanged(tenantId)),
    tarpit: new Tarpit(deps.throttleDelayMs ?? 0),
    agentOffer: { publicUrl: deps.publicUrl, bundle: deps.agentBundle, endpoint: undefined },
    gitSources,
    imports,
    quietCloser,
    rollups,
  };
  const { db } = deps.store;
  const { directory } = context;
  // A decision from the UI, the API, the e-mail's link or Slack: after its commit an approved run goes to its agent or the service's executor.
  const approvals = {
    db, dialect: deps.store.dialect, durability: deps.store.durability, clock, executionExpirySeconds: deps.executionExpirySeconds ?? 3600, outboxes: [notifier.ledgerOutbox],
    decided: (row: ExecutionRow) => {
      live.changed([{ executionId: row.id, state: row.state as ExecutionState }]);
      if (row.state !== 'queued') return;
      if (row.awaiting_runbook === 1) runbookStage.wake();
      else if (row.host_id === null) executor.wake();
      else if (row.held === 0) dispatchQueued([{ id: row.id, hostId: row.host_id }]);
    },
  };
  const notifySettings = { ...NOTIFY_DEFAULTS, ...deps.notify };
  const slackInteractions = new SlackInteractions({
    ...approvals, box: secretBox, logger: deps.logger, reach: { apiUrl: notifySettings.slackApiUrl, egress, timeoutMs: notifySettings.sendTimeoutMs },
  });

  const routeSchemas = new RouteSchemas();
  const server = Fastify({
    schemaController: { compilersFactory: { buildSerializer: routeSchemas.buildSerializer } },
    loggerInstance: deps.logger,
    logController: new AccessLog(),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: 1024 * 1024,
    // request.ip, which the IP allowlist checks and events record, honours X-Forwarded-For only from these.
    trustProxy: typeof deps.trustProxy === 'number' ? trustHops(deps.trustProxy) : (deps.trustProxy ?? false),
    // Monitoring tools and people add a trailing slash to pasted URLs; it means the same route.
    routerOptions: { ignoreTrailingSlash: true },
    // Refused below, as problem+json like every other error, instead of Fastify's own body.
    return503OnClosing: false,
    // A malformed or overlong path: problem+json without the path Fastify would quote, key and all.
    frameworkErrors: frameworkErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Before any route: every route with a key in its path is known to the log serializer and to problems.
  trackKeyedRoutes(server);

  let stopping = false;
  server.addHook('onRequest', (_request, _reply, done) => {
    if (!stopping) return done();
    done(new PitcrewError('PITCREW_ERR_STOPPING', 'this service process is stopping and takes no new requests; nothing was done. Retry in a moment: another node, or this one once restarted', {
      headers: { 'Retry-After': '1', Connection: 'close' },
    }));
  });
  server.setValidatorCompiler(routeSchemas.validatorCompiler);
  server.setErrorHandler(errorHandler);
  // The API takes JSON only: a text/plain body gets the 415 that says so, not "must be object".
  server.removeContentTypeParser('text/plain');
  server.removeContentTypeParser('application/json');
  // Management bodies become text columns, which PostgreSQL cannot give a NUL character.
  server.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(server, { refuseNul: true }));
  const webUi = isWebUiBuilt(deps.webRoot);
  server.setNotFoundHandler(webUi ? spaFallback : notFoundHandler);
  server.addSchema(ProblemSchema);
  // Every management call that changes something is recorded (identity/audit/): the hooks go on each route of the scope below.
  const audit = new AuditRecorder({ db, durability: deps.store.durability, clock });
  server.addHook('onResponse', (request, reply, done) => {
    // The recorder's read of a view before a change is part of that change, not a call of its own.
    if (audit.isOwnRead(request)) return done();
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.observe({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
    done();
  });

  await server.register(swagger, openApiOptions());
  if (webUi) await registerWebUi(server, deps.webRoot!);
  else if (deps.webRoot) deps.logger.warn({ webRoot: deps.webRoot }, 'the web UI is not built (npm run build); only the API is served');
  registerHealthRoutes(server, deps.store, disk);
  registerMetricsRoute(server, metrics, { token: deps.metricsToken, onApiPort: true });
  registerAgentDownloadRoute(server, context.agentOffer);
  await server.register(async (scope) => registerWebhookRoutes(scope as Api, {
    writer, directory, tarpit: context.tarpit, metrics, disk, clock, bodyLimitBytes: deps.webhookBodyLimitBytes, storeLocation: deps.store.location,
  }));
  const deliveryStamps = new DeliveryStamps(db);
  await server.register(async (scope) => registerIntegrationIngress(scope as Api, {
    db, box: secretBox, writer, directory, tarpit: context.tarpit, metrics, disk, clock, bodyLimitBytes: deps.webhookBodyLimitBytes, storeLocation: deps.store.location,
    parserOf: toolParsers(deps.integrationTools ?? snsCertificates()), stamps: deliveryStamps,
  }));
  await server.register(async (scope) => registerAgentRoutes(scope as Api, { db, directory, metrics }), { prefix: '/api/v1' });
  // Authenticated by the Bot Connector's signed token, not a pitcrew credential (notify/teams/inbound-token.ts).
  await server.register(async (scope) => registerTeamsActivityRoute(scope as Api, {
    ...approvals, box: secretBox, connector: botConnector,
    tokens: new BotTokenCheck(toolFetch, teamsBot.openIdMetadataUrl, { ...NOTIFY_DEFAULTS, ...deps.notify }.sendTimeoutMs),
  }), { prefix: '/api/v1' });
  // Slack's button clicks: signed by the tenant's Slack app, not by a pitcrew credential.
  await server.register(async (scope) => slackInteractions.register(scope as Api), { prefix: '/api/v1' });
  await server.register(
    async (scope) => {
      // Every management route declares the role it needs (http/schemas.ts access()); none may forget.
      scope.addHook('onRoute', (route) => {
        if (!(route.schema as Record<string, unknown> | undefined)?.[ROLE_KEY]) throw new Error(`${route.method} ${route.url} declares no role (access() in its schema)`);
      });
      const sessions = { ...SESSION_DEFAULTS, ...deps.sessions };
      scope.addHook('onRequest', managementAuth({ db, sessions, clock }));
      audit.install(scope);
      const mailLink: MailLink = (tenantId, to, link) =>
        sendAccountMail({ db, box: secretBox, egress, timeoutMs: { ...NOTIFY_DEFAULTS, ...deps.notify }.sendTimeoutMs }, tenantId, to, link);
      registerSignInRoutes(scope as Api, {
        store: deps.store, box: secretBox, sessions, publicUrl: deps.publicUrl, clock, mailLink,
        passwordAllowed: async (tenantId) => !(await ssoRequired(db, tenantId)),
        passwordRefusal: (tenantIds) => ssoRequiredReason(db, tenantIds),
      });
      registerSsoRoutes(scope as Api, { store: deps.store, box: secretBox, sessions, publicUrl: deps.publicUrl, clock, fetch: oidcFetch(toolFetch) });
      const usersDeps = { store: deps.store, publicUrl: deps.publicUrl, clock, mailLink };
      registerUserRoutes(scope as Api, usersDeps);
      registerTotpResetRoute(scope as Api, usersDeps);
      registerTotpRoutes(scope as Api, { db, box: secretBox, clock });
      registerTokenRoutes(scope as Api, { db, clock });
      registerRuleRoutes(scope as Api, { db, durability: deps.store.durability, publicUrl: deps.publicUrl, clock, onCreated: (tx, rule) => linkRuleToIncidents(tx, deps.store.dialect, rule) });
      registerEventRoutes(scope as Api, db);
      registerTenantRoutes(scope as Api, { db, directory, retentionDays: deps.retentionDays });
      registerHostRoutes(scope as Api, db);
      registerExecutionRoutes(scope as Api, { db, ledger, live, watchRemote: (id, hostId) => liveRelay.watch(id, hostId), cancelRunning });
      registerApprovalRoutes(scope as Api, { ...approvals, linkKey: secretBox.derivedKey(APPROVAL_LINK_PURPOSE) });
      registerSnapshotRoutes(scope as Api, {
        db, linkKey: secretBox.derivedKey(SIGNED_LINK_PURPOSE), clock, linkDays: { ...NOTIFY_DEFAULTS, ...deps.notify }.snapshotLinkDays, publicUrl: deps.publicUrl, preview: (...a) => snapshots.preview(...a),
      });
      registerChannelRoutes(scope as Api, { db, box: secretBox, notifier });
      registerIntegrationRoutes(scope as Api, { db, box: secretBox, publicUrl: deps.publicUrl });
      registerImportRoutes(scope as Api, { db, request: (integration) => imports.request(integration) });
      registerCredentialRoutes(scope as Api, { db, box: secretBox, probe: (provider, secret) => probeCloud(clouds, provider, secret) });
      // A runbook's env names follow the rules of the names a payload may set (ingress/env.ts).
      registerRunbookRoutes(scope as Api, {
        db, clock, usedBy: (tenantId, id) => rulesUsingRunbook(db, tenantId, id), followers: followRunbook, envNameProblem: (name) => { const refusal = refusalForName(name); return refusal && ENV_REFUSAL_TEXT[refusal]; },
      });
      registerRunbookLibraryRoutes(scope as Api, { db, clock, library: deps.runbookLibrary });
      registerRepositoryRoutes(scope as Api, { db, box: secretBox, sources: gitSources, usedBy: (tenantId, id) => rulesUsingRepository(db, tenantId, id), clock });
      registerTestAlertRoute(scope as Api, { db, writer, clock, storeLocation: deps.store.location, dialect: deps.store.dialect, kinds });
      registerAlertPreviewRoute(scope as Api, { db, dialect: deps.store.dialect, kinds, clock });
      registerRunNowRoutes(scope as Api, { db, writer, clock, storeLocation: deps.store.location });
      registerIncidentRunRoutes(scope as Api, { db, writer, clock, storeLocation: deps.store.location, library: deps.runbookLibrary });
      registerMonascaRoutes(scope as Api, { db, box: secretBox, fetch: toolFetch });
      registerContactRoutes(scope as Api, db);
      registerEscalationRoutes(scope as Api, db);
      registerIncidentRoutes(scope as Api, { db, dialect: deps.store.dialect, clock });
      registerAgentInstallRoutes(scope as Api, context.agentOffer);
      registerAuditRoutes(scope as Api, { db });
      registerIncidentAnalyticsRoutes(scope as Api, { db, dialect: deps.store.dialect, clock });
    },
    { prefix: '/api/v1' },
  );
  server.get('/api/v1/openapi.json', { schema: { hide: true } }, () => server.swagger());

  // Agents on the plain HTTP port: refused by the gateway unless they come from loopback.
  server.server.on('upgrade', (request, socket, head) => {
    if (!gateway.handleUpgrade(request, socket, head, false)) socket.destroy();
  });

  const metricsServer = await buildMetricsServer(metrics, deps.metricsToken, deps.logger);

  return {
    server,
    metricsServer,
    context,
    routeSchemas,
    start: async () => {
      disk?.start();
      await wakeups.start();
      await sweeper.start();
      notifier.start();
      executor.start();
      runbookStage.start();
      scheduler.start();
      // After the sweeper's first sweep: imports a stopped node left running are queued again, not taken for this node's.
      imports.start();
      rollups.start();
    },
    close: async () => {
      stopping = true;
      disk?.stop();
      await gateway.close();
      await closeWithin(server.server, deps.shutdownGraceMs ?? SHUTDOWN_GRACE_MS, server.close());
      await slackInteractions.drain();
      await metricsServer.close();
      await scheduler.stop();
      await imports.stop();
      await rollups.stop();
      await writer.drain();
      await deliveryStamps.flush();
      await runbookStage.stop();
      await executor.stop();
      await ledger.drain();
      await sweeper.stop();
      await notifier.stop();
      await wakeups.stop();
    },
  };
}

/** An import's page becomes incidents, in the transaction that stores its cursor (incidents/apply.ts). */
const toIncidents: ObservationSink = async (tx, tenantId, integrationId, observations, receivedAt, options) => {
  await applyObservations(tx, tenantId, integrationId, observations, receivedAt, options);
};

/** Trust the nearest `hops` proxies, as Express's numeric trust proxy does. */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}
