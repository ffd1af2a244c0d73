import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { AgentGateway } from '../agents/gateway.js';
import { registerAgentRoutes } from '../agents/routes.js';
import { NodeRegistry, newNodeId } from '../cluster/nodes.js';
import { Wakeups } from '../cluster/wakeups.js';
import { EventWriter } from '../events/writer.js';
import { ExecutionLedger } from '../executions/ledger.js';
import { LiveExecutions } from '../executions/live.js';
import { registerExecutionRoutes } from '../executions/routes.js';
import { Sweeper } from '../executions/sweeper.js';
import { registerHostRoutes } from '../hosts/routes.js';
import { registerEventRoutes } from '../events/routes.js';
import { registerWebhookRoutes } from '../ingress/webhook.js';
import { Metrics } from '../metrics/registry.js';
import { registerRuleRoutes } from '../rules/routes.js';
import type { Store } from '../store/database.js';
import { KeyDirectory } from '../tenants/directory.js';
import type { ThrottleSettings } from '../tenants/repository.js';
import { registerTenantRoutes } from '../tenants/routes.js';
import { bearerAuth } from './auth.js';
import { AccessLog } from './logging.js';
import { registerHealthRoutes } from './health.js';
import { openApiOptions } from './openapi.js';
import { errorHandler, notFoundHandler } from './problem.js';
import { ProblemSchema } from './schemas.js';
import type { Api, AppContext } from './types.js';
import { validatorCompiler } from './validation.js';

export interface AppDeps {
  store: Store;
  logger: FastifyBaseLogger;
  publicUrl?: string | undefined;
  webhookBodyLimitBytes: number;
  throttleDefaults: ThrottleSettings;
  ingest: { maxBatch: number; maxQueued: number };
  executionExpirySeconds?: number;
  agentHeartbeatSeconds?: number;
  sweepIntervalMs?: number;
}

export interface App {
  server: Api;
  context: AppContext;
  /** Starts the background duties (node heartbeat, recovery, expiry); call once before listening. */
  start(): Promise<void>;
  /** Stops taking requests and agent connections, finishes what was accepted; leaves the store open. */
  close(): Promise<void>;
}

/** Builds the HTTP application without listening, so tests can `inject` and the CLI can `listen`. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const metrics = new Metrics();
  const nodeId = newNodeId();
  const live = new LiveExecutions();
  const ledger = new ExecutionLedger(deps.store.db, deps.store.dialect, (changes) => live.changed(changes));
  const gateway = new AgentGateway({
    db: deps.store.db, ledger, live, nodeId, logger: deps.logger, heartbeatSeconds: deps.agentHeartbeatSeconds ?? 15,
    recoverFromDeadNodes: () => sweeper.recoverFromDeadNodes(),
  });
  const writer = new EventWriter(deps.store.db, metrics, {
    ...deps.ingest,
    executionExpirySeconds: deps.executionExpirySeconds ?? 3600,
    // Work for agents connected here is pushed now; other nodes are told (PostgreSQL NOTIFY).
    onQueued: (executions) => {
      gateway.dispatch(executions);
      wakeups.publish('queued', executions.filter((e) => !gateway.holds(e.hostId)));
    },
  });
  const wakeups: Wakeups = new Wakeups(deps.store, {
    queued: (executions) => gateway.dispatch(executions.filter((e) => gateway.holds(e.hostId))),
    cancel: (executions) => executions.forEach((e) => gateway.cancel(e.hostId, e.id)),
  }, deps.logger);
  const sweeper: Sweeper = new Sweeper({
    db: deps.store.db, nodes: new NodeRegistry(deps.store, nodeId), ledger, gateway, logger: deps.logger, intervalMs: deps.sweepIntervalMs ?? 1000,
  });
  const context: AppContext = {
    store: deps.store,
    metrics,
    writer,
    ledger,
    live,
    gateway,
    wakeups,
    directory: new KeyDirectory(deps.store.db, deps.throttleDefaults),
    publicUrl: deps.publicUrl,
    webhookBodyLimitBytes: deps.webhookBodyLimitBytes,
  };

  const server = Fastify({
    loggerInstance: deps.logger,
    logController: new AccessLog(),
    bodyLimit: 1024 * 1024,
    // Monitoring tools and people add a trailing slash to pasted URLs; it means the same route.
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();

  server.setValidatorCompiler(validatorCompiler);
  server.setErrorHandler(errorHandler);
  server.setNotFoundHandler(notFoundHandler);
  server.addSchema(ProblemSchema);
  server.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.observe({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
    done();
  });

  await server.register(swagger, openApiOptions());
  registerHealthRoutes(server, context);
  await server.register(async (scope) => registerWebhookRoutes(scope as Api, context));
  await server.register(async (scope) => registerAgentRoutes(scope as Api, context), { prefix: '/api/v1' });
  await server.register(
    async (scope) => {
      scope.addHook('onRequest', bearerAuth(deps.store));
      registerRuleRoutes(scope as Api, context);
      registerEventRoutes(scope as Api, context);
      registerTenantRoutes(scope as Api, context);
      registerHostRoutes(scope as Api, context);
      registerExecutionRoutes(scope as Api, context);
    },
    { prefix: '/api/v1' },
  );
  server.get('/api/v1/openapi.json', { schema: { hide: true } }, () => server.swagger());

  // Agents on the plain HTTP port: refused by the gateway unless they come from loopback.
  server.server.on('upgrade', (request, socket, head) => {
    if (!gateway.handleUpgrade(request, socket, head, false)) socket.destroy();
  });

  return {
    server,
    context,
    start: async () => {
      await wakeups.start();
      await sweeper.start();
    },
    close: async () => {
      await gateway.close();
      await server.close();
      await writer.drain();
      await ledger.drain();
      await sweeper.stop();
      await wakeups.stop();
    },
  };
}
