import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteSchemas } from '../src/http/route-schemas.js';
import { startTestEnv, type TestEnv } from './support/app.js';

/*
 * Route schemas compile on each route's first request, not at start (src/http/route-schemas.ts).
 * A schema mistake would then wait for its route's first request: here every route's validators
 * and serializers are compiled at once, so it fails this test instead. Schemas, not storage: SQLite only.
 */
describe('route schemas', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv('sqlite');
    await env.app.server.ready();
  });
  afterAll(() => env.close());

  it('compile a route on its first request, not at start', async () => {
    const schemas = env.app.routeSchemas;
    const before = schemas.uncompiled;
    expect(before).toBeGreaterThan(100);
    const response = await env.api('GET', '/api/v1/rules?limit=2');
    expect(response.statusCode).toBe(200);
    // The rules list's query string (coerced: limit is a number), its 200 and its problems: a few compiled, not all.
    const after = schemas.uncompiled;
    expect(after).toBeLessThan(before);
    expect(before - after).toBeLessThan(10);
  });

  it('every route of the app compiles', () => {
    const compiled = env.app.routeSchemas.compileAll();
    expect(compiled).toBeGreaterThan(100);
    expect(env.app.routeSchemas.compileAll()).toBe(0);
  });

  it('a deferred validator coerces and refuses as Ajv does, and its serializer uses the shared schemas', async () => {
    const schemas = new RouteSchemas();
    const server = Fastify({ schemaController: { compilersFactory: { buildSerializer: schemas.buildSerializer } } });
    server.setValidatorCompiler(schemas.validatorCompiler);
    server.addSchema({ $id: 'Shared', type: 'object', properties: { n: { type: 'integer' } } });
    server.get('/n', {
      schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, response: { 200: { $ref: 'Shared#' } } },
    }, async (request) => ({ n: (request.query as { n: number }).n + 1, secret: 'not in the schema' }));
    try {
      expect(schemas.uncompiled).toBe(0);
      await server.ready();
      // The GET's query string and 200, and those of the HEAD route Fastify adds beside it.
      expect(schemas.uncompiled).toBe(4);
      const ok = await server.inject({ method: 'GET', url: '/n?n=41' });
      expect(ok.json()).toEqual({ n: 42 });
      const bad = await server.inject({ method: 'GET', url: '/n?n=forty' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toBe('querystring/n must be integer');
      expect(schemas.uncompiled).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('a schema mistake starts, and compileAll finds it', async () => {
    const schemas = new RouteSchemas();
    const server = Fastify();
    server.setValidatorCompiler(schemas.validatorCompiler);
    server.post('/broken', { schema: { body: { type: 'object', properties: { a: { type: 'text' } } } } }, async () => ({}));
    try {
      await server.ready();
      expect(() => schemas.compileAll()).toThrow(/type/);
    } finally {
      await server.close();
    }
  });
});
