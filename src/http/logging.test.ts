import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessLog, lazyChildLogger } from './logging.js';

/** A pino logger writing JSON lines into an array, at `level`. */
function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

describe("a request's logger", () => {
  it('writes the lines of an enabled level with the request id, and nothing below the level', () => {
    const { logger, lines } = capture('info');
    const log = lazyChildLogger(logger, { reqId: 'req-7' }, {});
    log.debug('not written');
    log.info({ status: 400 }, 'request refused');
    log.error('request failed');
    expect(lines.map((l) => [l.reqId, l.msg, l.level])).toEqual([['req-7', 'request refused', 30], ['req-7', 'request failed', 50]]);
    expect(lines[0]!.status).toBe(400);
  });

  it('makes no pino child until a line is written', () => {
    const { logger } = capture('warn');
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof logger.child>) => {
      children += 1;
      return child(...args);
    }) as typeof logger.child;
    const log = lazyChildLogger(logger, { reqId: 'req-1' }, {});
    log.info('below warn');
    log.debug('below warn');
    expect(children).toBe(0);
    log.warn('written');
    log.warn('written again');
    expect(children).toBe(1);
  });

  it("follows the service's level when it changes, and a route's own level makes its child at once", () => {
    const { logger, lines } = capture('warn');
    const log = lazyChildLogger(logger, { reqId: 'req-2' }, {});
    logger.level = 'debug';
    log.debug('now written');
    expect(lines.map((l) => l.msg)).toEqual(['now written']);
    const own = lazyChildLogger(logger, { reqId: 'req-3' }, { level: 'error' });
    own.warn('below the route level');
    own.error('at the route level');
    expect(lines.map((l) => l.msg)).toEqual(['now written', 'at the route level']);
  });

  it('tells whether a level is written, as its child would, before making one', () => {
    const { logger } = capture('info');
    const log = lazyChildLogger(logger, { reqId: 'req-4' }, {}) as unknown as { isLevelEnabled(level: string): boolean };
    expect([log.isLevelEnabled('debug'), log.isLevelEnabled('info')]).toEqual([false, true]);
    logger.level = 'debug';
    expect(log.isLevelEnabled('debug')).toBe(true);
  });
});

describe('the access log', () => {
  const call = (log: ReturnType<typeof lazyChildLogger>, statusCode: number) => {
    const request = { log, method: 'POST', ip: '127.0.0.1', url: '/api/v1/rules', routeOptions: { url: '/api/v1/rules' } } as unknown as FastifyRequest;
    return [request, { log, statusCode, elapsedTime: 1.5 } as unknown as FastifyReply] as const;
  };

  it('writes refusals and failures at the default level, and a completed call only at debug', () => {
    const { logger, lines } = capture('info');
    const access = new AccessLog();
    for (const status of [202, 404, 503]) {
      const [request, reply] = call(lazyChildLogger(logger, { reqId: `req-${status}` }, {}), status);
      access.incomingRequest(request);
      access.requestCompleted(null, request, reply);
    }
    expect(lines.map((l) => [l.reqId, l.msg, l.level, l.status])).toEqual([['req-404', 'request refused', 30, 404], ['req-503', 'request failed', 50, 503]]);
    logger.level = 'debug';
    const [request, reply] = call(lazyChildLogger(logger, { reqId: 'req-9' }, {}), 202);
    access.incomingRequest(request);
    access.requestCompleted(null, request, reply);
    expect(lines.slice(2).map((l) => [l.msg, l.status, l.responseTime])).toEqual([['incoming request', undefined, undefined], ['request completed', 202, 1.5]]);
  });
});
