import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../errors/catalogue.js';
import { closestName } from './spelling.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives one level down.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

// verbose: the discriminator message lists the known kinds from the schema it failed.
const shared: Options = { allErrors: true, discriminator: true, strict: false, useDefaults: false, verbose: true };

// Bodies are validated strictly: an unknown field or a "true" string is an error, never guessed.
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false, removeAdditional: false }));
// Query strings and path parameters arrive as text: numbers and booleans are coerced.
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array', removeAdditional: false }));

/** A route part's Ajv validator, compiled now (http/route-schemas.ts defers it to the route's first request). */
export const compileValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * A body check for values assembled in code (a PATCH merged onto what is stored), with the same
 * strictness and messages as request bodies. Compiled once, at its first use: declared at import,
 * they would add their compiles to every start (bench/start.js).
 */
export function compileBodyCheck(schema: object, part = 'body'): (value: unknown) => FieldError[] {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= bodyAjv.compile(schema);
    return validate(value) ? [] : describeValidationErrors(validate.errors ?? [], part);
  };
}

/** Turns Ajv's errors into messages a person can act on, each at a JSON pointer. */
export function describeValidationErrors(errors: ErrorObject[], part: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of misspellingsFirst(withoutUnionNoise(errors))) {
    const fieldError = describe(error, part);
    const key = `${fieldError.path} ${fieldError.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(fieldError);
    }
  }
  return out;
}

/**
 * A value that fails a union (`{...} | null`, `string | number`) gets one error per branch plus
 * "must match a schema in anyOf". `{"actionLimit": {"max": 0}}` read "must be >= 1", "must be
 * null" and "must match a schema in anyOf": only the first says what to fix. So the anyOf summary
 * goes whenever a branch said more, the type errors go where a branch of the right type
 * said what is wrong with the value's contents, and the remaining type errors at one path become one message.
 */
function withoutUnionNoise(errors: ErrorObject[]): ErrorObject[] {
  const within = (e: ErrorObject, path: string) => e.instancePath === path || e.instancePath.startsWith(`${path}/`);
  // A branch of the right type complained about the value's contents (a field, a bound).
  const reachedInside = (path: string) => errors.some((e) => e.keyword !== 'type' && e.keyword !== 'anyOf' && within(e, path));
  const kept = errors.filter((e) => {
    if (e.keyword === 'anyOf') return !errors.some((other) => other !== e && within(other, e.instancePath));
    return !(e.keyword === 'type' && reachedInside(e.instancePath));
  });
  const types = new Map<string, ErrorObject>();
  return kept.flatMap((e) => {
    if (e.keyword !== 'type') return [e];
    const first = types.get(e.instancePath);
    if (!first) {
      const merged = { ...e, params: { type: [String((e.params as { type: unknown }).type)] } };
      types.set(e.instancePath, merged);
      return [merged];
    }
    (first.params as { type: string[] }).type.push(String((e.params as { type: unknown }).type));
    return [];
  });
}

/**
 * A field misspelt (`flavor` for `flavour`, `hostName` for `hostname`) is one mistake, which Ajv
 * tells as two: the known field is missing, and an unknown one is there; the missing one came
 * first. So the unknown field, with the name it was meant to be, goes first, and "is required"
 * of that name goes.
 */
function misspellingsFirst(errors: ErrorObject[]): ErrorObject[] {
  const meant = new Map<ErrorObject, string>();
  for (const error of errors) {
    const field = error.keyword === 'additionalProperties' ? meantField(error) : undefined;
    if (field !== undefined) meant.set(error, field);
  }
  const misspelt = (error: ErrorObject) =>
    [...meant].some(([unknown, field]) => unknown.instancePath === error.instancePath && (error.params as { missingProperty?: string }).missingProperty === field);
  const kept = errors.filter((error) => error.keyword !== 'required' || !misspelt(error));
  return [...kept.filter((error) => meant.has(error)), ...kept.filter((error) => !meant.has(error))];
}

/** The known field of the object an unknown one is closest to (same name but for case, or a typo or two away), if any. */
function meantField(error: ErrorObject): string | undefined {
  const field = String((error.params as { additionalProperty: unknown }).additionalProperty);
  const known = Object.keys((error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  return closestName(field, known);
}

function describe(error: ErrorObject, part: string): FieldError {
  const base = `/${part}${error.instancePath}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: `${base}/${String(params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const meant = meantField(error);
      const message = meant === undefined ? 'is not a known field; remove it or check its spelling' : `unknown field ${JSON.stringify(field)}; did you mean ${JSON.stringify(meant)}?`;
      return { path: `${base}/${field}`, message };
    }
    // Settings that only work together (a chat app's token, secret and channel): name the one missing and why.
    case 'dependencies':
    case 'dependentRequired':
      return { path: `${base}/${String(params.missingProperty)}`, message: `is required with ${JSON.stringify(params.property)}` };
    case 'const':
      return { path: base, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'enum':
      return { path: base, message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'discriminator':
      return { path: `${base}/${String((params as { tag?: string }).tag ?? 'type')}`, message: discriminatorMessage(error) };
    case 'type':
      return { path: base, message: `must be ${orList((params.type as string[]).flatMap((t) => t.split(',')))}` };
    default:
      return { path: base, message: error.message ?? 'is not valid' };
  }
}

/** A union told apart by a field (`type` of a rule's parts, `provider` of a credential): which values it takes. */
function discriminatorMessage(error: ErrorObject): string {
  const params = error.params as { error?: string; tag?: string; tagValue?: unknown };
  const tag = params.tag ?? 'type';
  const oneOf = (error.parentSchema as { oneOf?: Array<{ properties: Record<string, { const: string }> }> } | undefined)?.oneOf ?? [];
  const kinds = oneOf.map((branch) => branch.properties[tag]?.const).join(', ');
  return params.error === 'mapping' ? `unknown ${tag} ${JSON.stringify(params.tagValue)}; use one of ${kinds}` : `${tag} is required: one of ${kinds}`;
}

function orList(words: string[]): string {
  const unique = [...new Set(words)];
  return unique.length === 1 ? unique[0]! : `${unique.slice(0, -1).join(', ')} or ${unique.at(-1)}`;
}
