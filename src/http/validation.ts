import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../errors/catalogue.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives one level down.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

// verbose: the discriminator message lists the known kinds from the schema it failed.
const shared: Options = { allErrors: true, discriminator: true, strict: false, useDefaults: false, verbose: true };

// Bodies are validated strictly: an unknown field or a "true" string is an error, never guessed.
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false, removeAdditional: false }));
// Query strings and path parameters arrive as text: numbers and booleans are coerced.
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array', removeAdditional: false }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/**
 * A body check for values assembled in code (a PATCH merged onto what is stored), with the same
 * strictness and messages as request bodies. Compiled once, where it is declared.
 */
export function compileBodyCheck(schema: object, part = 'body'): (value: unknown) => FieldError[] {
  const validate = bodyAjv.compile(schema);
  return (value) => (validate(value) ? [] : describeValidationErrors(validate.errors ?? [], part));
}

/** Turns Ajv's errors into messages a person can act on, each at a JSON pointer. */
export function describeValidationErrors(errors: ErrorObject[], part: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors) {
    const fieldError = describe(error, part);
    const key = `${fieldError.path} ${fieldError.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(fieldError);
    }
  }
  return out;
}

function describe(error: ErrorObject, part: string): FieldError {
  const base = `/${part}${error.instancePath}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: `${base}/${String(params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${base}/${String(params.additionalProperty)}`, message: 'is not a known field; remove it or check its spelling' };
    case 'const':
      return { path: base, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'enum':
      return { path: base, message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'discriminator':
      return { path: `${base}/type`, message: discriminatorMessage(error) };
    default:
      return { path: base, message: error.message ?? 'is not valid' };
  }
}

function discriminatorMessage(error: ErrorObject): string {
  const params = error.params as { error?: string; tagValue?: unknown };
  const oneOf = (error.parentSchema as { oneOf?: Array<{ properties: { type: { const: string } } }> } | undefined)?.oneOf ?? [];
  const kinds = oneOf.map((branch) => branch.properties.type.const).join(', ');
  return params.error === 'mapping' ? `unknown type ${JSON.stringify(params.tagValue)}; use one of ${kinds}` : `type is required: one of ${kinds}`;
}
