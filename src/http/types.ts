import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { AgentGateway } from '../agents/gateway.js';
import type { LiveRelay } from '../cluster/live-relay.js';
import type { Wakeups } from '../cluster/wakeups.js';
import type { EventWriter } from '../events/writer.js';
import type { ExecutionLedger } from '../executions/ledger.js';
import type { LiveExecutions } from '../executions/live.js';
import type { Metrics } from '../metrics/registry.js';
import type { Notifier } from '../notify/notifier.js';
import type { SecretBox } from '../notify/secret-box.js';
import type { Store } from '../store/database.js';
import type { KeyDirectory } from '../tenants/directory.js';
import type { Tarpit } from '../tenants/tarpit.js';

export type Api = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What route modules are given: built once by buildApp, passed explicitly. */
export interface AppContext {
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
  /** Seals and opens channel secrets (the key lives outside the database). */
  secretBox: SecretBox;
  publicUrl: string | undefined;
  webhookBodyLimitBytes: number;
  /** Epoch milliseconds; Date.now except in tests that move time. */
  clock: () => number;
  /** The bundled agent file offered to hosts, when the build made one. */
  agentBundle: string | undefined;
  /** PITCREW_RETENTION_DAYS; undefined when history is kept for ever. */
  retentionDays: number | undefined;
  /** Where agents connect: set by listen() once the HTTPS port is open. */
  agentEndpoint: { port: number; fingerprint: string } | undefined;
}

/** The base URL a caller reached us at, unless one is configured (PITCREW_PUBLIC_URL). */
export function baseUrl(ctx: AppContext, request: FastifyRequest): string {
  return ctx.publicUrl ?? `${request.protocol}://${request.host}`;
}
