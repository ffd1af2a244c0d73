import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { LogFormat } from '../config/config.js';
import { REDACTED, redactedUrl } from './keyed-routes.js';

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password', '*.apiKey', '*.token'], censor: REDACTED },
    serializers: {
      // The tenant API key travels in trigger URLs (DESIGN.md §3): no recorded URL may carry it.
      req: (req: FastifyRequest) => ({ method: req.method, url: redactedUrl(req), remoteAddress: req.ip }),
    },
  };
}

/**
 * The service's logger on stdout: JSON lines for a collector, or the same lines laid out for a
 * person at a terminal. Serializers and redaction run before either, so both hide the same secrets.
 */
export function createLogger(level: string, format: LogFormat): Logger {
  const options = loggerOptions(level);
  if (format === 'json') return pino(options);
  // Synchronous, as pino's own stdout is: a line is out before the next one or a crash.
  return pino(options, pretty({ sync: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l', ignore: 'pid,hostname' }));
}

/**
 * Request log lines: refusals at info (an SRE looks for them), the rest at debug so that the
 * ingest path does not pay for a line per accepted event. URLs pass through the redacting serializer.
 */
export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const fields = { req: request, status: reply.statusCode, responseTime: reply.elapsedTime };
    if (error || reply.statusCode >= 500) reply.log.error(fields, 'request failed');
    else if (reply.statusCode >= 400) reply.log.info(fields, 'request refused');
    else reply.log.debug(fields, 'request completed');
  }

  override routeNotFound(request: FastifyRequest): void {
    request.log.info({ req: request }, 'route not found');
  }
}
