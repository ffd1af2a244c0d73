import SerializerSelector, { type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { compileValidator } from './validation.js';

type Validate = ReturnType<FastifySchemaCompiler<unknown>>;

/**
 * Compiles each route's validators and response serializers on the route's first request instead
 * of at start. Compiling all of them (Ajv, fast-json-stringify) was most of a restart's CPU
 * between building the app and listening, for routes few requests reach in the minutes after a
 * restart, while the service is down and every agent waits (bench/start.js). A schema mistake
 * would then show at its route's first request: `compileAll()` compiles what is left, and a test
 * calls it on the whole app (test/route-schemas.test.ts).
 */
export class RouteSchemas {
  private readonly pending = new Set<() => void>();

  /** For `setValidatorCompiler`: Ajv's compile, deferred. */
  readonly validatorCompiler: FastifySchemaCompiler<unknown> = (route) => this.deferredValidator(() => compileValidator(route));

  /** For Fastify's `schemaController.compilersFactory.buildSerializer`: fast-json-stringify with the shared schemas, deferred. */
  readonly buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) => {
    const compile = SerializerSelector()(externalSchemas, serializerOptions);
    return (route) => this.deferredSerializer(() => compile(route));
  };

  /** How many schemas wait for their route's first request. */
  get uncompiled(): number {
    return this.pending.size;
  }

  /** Compiles every schema not compiled yet; returns how many. */
  compileAll(): number {
    const left = [...this.pending];
    for (const compile of left) compile();
    return left.length;
  }

  private deferredValidator(compile: () => Validate): Validate {
    const compiled = this.waiting(compile);
    const deferred = ((data: unknown, context?: unknown) => {
      const check = compiled();
      const result = (check as (data: unknown, context?: unknown) => ReturnType<Validate>)(data, context);
      deferred.errors = check.errors;
      return result;
    }) as Validate & { schemaEnv?: unknown };
    // Fastify hands Ajv's functions (those with `schemaEnv`) the request as parent data, so a
    // coercion of the whole part (a query string's root) reaches the request: this one passes it on.
    deferred.schemaEnv = true;
    return deferred;
  }

  private deferredSerializer(compile: () => Serializer): Serializer {
    const compiled = this.waiting(compile);
    return (data) => compiled()(data);
  }

  /** `compile` run once, at the first call of what this returns (or at compileAll). */
  private waiting<T>(compile: () => T): () => T {
    let done: T | undefined;
    const compiled = () => {
      if (done === undefined) {
        done = compile();
        this.pending.delete(compiled);
      }
      return done;
    };
    this.pending.add(compiled);
    return compiled;
  }
}
