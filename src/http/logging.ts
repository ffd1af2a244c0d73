import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import pino, { type Logger, type LoggerOptions } from 'pino';
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
 * pino-pretty loads only for the terminal's format: a service logging JSON never needs it.
 */
export async function createLogger(level: string, format: LogFormat): Promise<Logger> {
  const options = loggerOptions(level);
  if (format === 'json') return pino(options);
  const { default: pretty } = await import('pino-pretty');
  // Synchronous, as pino's own stdout is: a line is out before the next one or a crash.
  return pino(options, pretty({ sync: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l', ignore: 'pid,hostname' }));
}

/**
 * Request log lines: refusals at info (an SRE looks for them), the rest at debug so that the
 * ingest path does not pay for a line per accepted event. URLs pass through the redacting serializer.
 */
export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (writes(request.log, 'debug')) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const [level, message] = error || reply.statusCode >= 500 ? COMPLETED.failed : reply.statusCode >= 400 ? COMPLETED.refused : COMPLETED.done;
    // An accepted call at the default level builds nothing: no fields, no arguments (bench/README.md, issue 41 item 4).
    if (writes(reply.log, level)) reply.log[level]({ req: request, status: reply.statusCode, responseTime: reply.elapsedTime }, message);
  }

  override routeNotFound(request: FastifyRequest): void {
    request.log.info({ req: request }, 'route not found');
  }
}

const COMPLETED = {
  failed: ['error', 'request failed'],
  refused: ['info', 'request refused'],
  done: ['debug', 'request completed'],
} as const;

/** Whether a line at `level` would be written; a logger that cannot tell is asked to write it. */
function writes(log: FastifyBaseLogger, level: LogMethod): boolean {
  return (log as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled?.(level) ?? true;
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Fastify gives each request a logger of its own: a pino child carrying the request id. Making one
 * serialises its bindings and merges its serializers, and an accepted webhook call logs nothing at
 * the default level: the children were 1.8 % of the ingest benchmark's CPU (bench/README.md). Each
 * request gets this stand-in instead, which makes the child when a line is logged at a level the
 * service's logger writes. A route with a level of its own gets its child at once.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || typeof (logger as Partial<Logger>).isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new LazyChild(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}

class LazyChild {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.log('error', args);
  }

  warn(...args: unknown[]): void {
    this.log('warn', args);
  }

  info(...args: unknown[]): void {
    this.log('info', args);
  }

  debug(...args: unknown[]): void {
    this.log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.log('trace', args);
  }

  silent(): void {}

  isLevelEnabled(level: string): boolean {
    return (this.made as Logger | undefined ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }

  private log(method: LogMethod, args: unknown[]): void {
    // Once made, the child decides: its level may have been set apart from the service's.
    if (this.made === undefined && !this.parent.isLevelEnabled(method)) return;
    (this.logger()[method] as (...line: unknown[]) => void)(...args);
  }

  private logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }
}
