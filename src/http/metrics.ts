import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { carriesMetricsToken } from '../metrics/access.js';
import type { Metrics } from '../metrics/registry.js';
import { errorHandler, notFoundHandler } from './problem.js';
import { ProblemSchema, problems } from './schemas.js';
import type { Api } from './types.js';

/**
 * Who may read the metrics (docs/configuration.md#metrics). They name every tenant and show its
 * activity, so the API ports serve them only behind PITCREW_METRICS_TOKEN; the metrics listener
 * (PITCREW_METRICS_ADDR, loopback unless told) serves them to whoever can reach it, or asks for
 * the token too when one is set.
 */
export interface MetricsAccess {
  token: string | undefined;
  /** The listener is one of the API ports (HTTP and HTTPS), reachable by every caller of the API. */
  onApiPort: boolean;
}

const NOT_HERE = 'metrics are not served on the API ports: scrape the metrics listener (PITCREW_METRICS_ADDR, 127.0.0.1:9464 unless set), or set PITCREW_METRICS_TOKEN to serve them here to a scraper that sends it';

export function registerMetricsRoute(app: Api, metrics: Metrics, access: MetricsAccess): void {
  app.get('/metrics', {
    schema: {
      tags: ['operations'], summary: 'Prometheus metrics: on the API ports only with PITCREW_METRICS_TOKEN, sent as a bearer token',
      response: { ...problems(401, 404) },
    },
  }, async (request, reply) => {
    const { token } = access;
    if (token === undefined && access.onApiPort) throw new PitcrewError('PITCREW_ERR_NOT_FOUND', NOT_HERE);
    if (token !== undefined && !carriesMetricsToken(request.headers.authorization, token)) {
      throw new PitcrewError('PITCREW_ERR_UNAUTHENTICATED', 'send the metrics token (PITCREW_METRICS_TOKEN) as "Authorization: Bearer <token>", as Prometheus does with its authorization scrape setting', {
        headers: { 'WWW-Authenticate': 'Bearer realm="pitcrew metrics"' },
      });
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/** The metrics listener's server: /metrics and nothing else, errors as problem+json. Not listening yet. */
export async function buildMetricsServer(metrics: Metrics, token: string | undefined, logger: FastifyBaseLogger): Promise<Api> {
  // Scrapes are not logged (Fastify 5.10 moved disableRequestLogging into the log controller).
  const server = Fastify({ loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) }).withTypeProvider<TypeBoxTypeProvider>();
  server.setErrorHandler(errorHandler);
  server.setNotFoundHandler(notFoundHandler);
  server.addSchema(ProblemSchema);
  registerMetricsRoute(server, metrics, { token, onApiPort: false });
  await server.ready();
  return server;
}
