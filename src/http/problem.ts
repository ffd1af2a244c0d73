import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PitcrewError, errorCatalogue, problemType, type ErrorCode, type FieldError } from '../errors/catalogue.js';
import { describeValidationErrors } from './validation.js';
import { isConnectionLost } from '../store/faults.js';
import { redactedUrl } from './keyed-routes.js';

/** An RFC 9457 problem document, with our `code` and field `errors` as extension members. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  instance?: string;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function sendProblem(reply: FastifyReply, error: PitcrewError): FastifyReply {
  const problem: Problem = {
    type: problemType(error.code),
    title: errorCatalogue[error.code].title,
    status: error.status,
    detail: error.message,
    code: error.code,
    instance: redactedUrl(reply.request),
  };
  if (error.fieldErrors?.length) problem.errors = error.fieldErrors;
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}

/**
 * The one error handler. Known errors become their problem; framework errors from parsing and
 * validation are translated; a database connection lost (a failover) is a 503 to retry; anything
 * else is a bug: logged in full, answered with a bare 500.
 */
export function errorHandler(error: FastifyError | PitcrewError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known = error instanceof PitcrewError ? error : translate(error as FastifyError, request) ?? connectionLost(error, request);
  if (known) {
    if (known.status >= 500) request.log.warn({ code: known.code, url: redactedUrl(request) }, known.message);
    return sendProblem(reply, known);
  }
  request.log.error({ err: error, url: redactedUrl(request) }, 'unexpected error');
  return sendProblem(reply, new PitcrewError('PITCREW_ERR_INTERNAL', 'the service hit an unexpected error; it has been logged. Try again, and report it if it persists.'));
}

/**
 * Fastify's refusals before a route is found (its frameworkErrors option). Its own answers are not
 * problem+json and quote the raw path, a trigger URL's API key with it.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const refusal = frameworkRefusal(error.code);
  if (!refusal) return errorHandler(error, request, reply);
  // Fastify logs no end for a request that never reached routing: the refusal's line is written here.
  request.log.info({ req: request, status: refusal.status }, 'request refused');
  return sendProblem(reply, refusal);
}

function frameworkRefusal(code: string): PitcrewError | undefined {
  switch (code) {
    case 'FST_ERR_BAD_URL':
      return new PitcrewError('PITCREW_ERR_VALIDATION', 'the URL has a malformed percent-encoding: a % must be followed by two hexadecimal digits (send % itself as %25)');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new PitcrewError('PITCREW_ERR_VALIDATION', 'a segment of the URL\'s path is longer than any key or id (100 characters); copy the URL again');
    default:
      return undefined;
  }
}

function translate(error: FastifyError, request: FastifyRequest): PitcrewError | undefined {
  if (error.validation) {
    const part = error.validationContext ?? 'body';
    const fieldErrors = describeValidationErrors(error.validation as Parameters<typeof describeValidationErrors>[0], part);
    const first = fieldErrors[0];
    const detail = first ? `${first.path}: ${first.message}${fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : ''}` : 'the request is not valid';
    return new PitcrewError('PITCREW_ERR_VALIDATION', detail, { fieldErrors });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(request);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new PitcrewError('PITCREW_ERR_UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON with the header Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new PitcrewError('PITCREW_ERR_VALIDATION', 'the Content-Length header does not match the body sent');
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /prototype|JSON/i.test(error.message))) {
    return new PitcrewError('PITCREW_ERR_MALFORMED_JSON', `the body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new PitcrewError('PITCREW_ERR_VALIDATION', error.message);
  }
  return undefined;
}

/** A body over the route's limit: the triggers' is the operator's setting, the management API's fixed. */
function tooLarge(request: FastifyRequest): PitcrewError {
  const limit = request.routeOptions.bodyLimit;
  const size = limit === undefined ? 'than this endpoint accepts' : `than the ${limit >= 1024 * 1024 ? `${limit / (1024 * 1024)} MiB` : `${Math.round(limit / 1024)} KiB`} this endpoint accepts`;
  const trigger = /^\/api(\/v1)?\/trigger\//.test(request.url);
  const advice = trigger ? 'send less data, or raise PITCREW_WEBHOOK_BODY_LIMIT on the service' : 'send less data (a script or description over 256 KiB is refused anyway)';
  return new PitcrewError('PITCREW_ERR_BODY_TOO_LARGE', `the body is larger ${size}; ${advice}`);
}

function connectionLost(error: unknown, request: FastifyRequest): PitcrewError | undefined {
  if (!isConnectionLost(error)) return undefined;
  request.log.warn({ err: error }, 'the database connection was lost');
  return new PitcrewError('PITCREW_ERR_STORAGE_UNAVAILABLE', 'the service lost its connection to the database (a failover or restart) during this request, which may not have been carried out; retry shortly', { headers: { 'Retry-After': '1' } });
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(reply, new PitcrewError('PITCREW_ERR_NOT_FOUND', `no route ${request.method} ${redactedUrl(request)}; the API is described at /api/v1/openapi.json`));
}
