import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { LISTED_EXECUTION_IDS, SkippedEnv } from '../events/presenter.js';
import { jsonBodyParser } from '../http/json-body.js';
import { problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { isUuid } from '../store/ids.js';
import type { EventWriter } from '../ingest/writer.js';
import type { Metrics } from '../metrics/registry.js';
import type { KeyDirectory } from '../tenants/directory.js';
import type { Tarpit } from '../tenants/tarpit.js';
import { assertNever } from '../errors/assert-never.js';
import { admit, invalidKey, lacksWebhookScope, submitted, unstorable } from './admission.js';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH, readIdempotencyKey } from './idempotency-key.js';
import type { AlertPayload } from '../ingest/alert.js';
import { parseAlertPayload } from './payload.js';

/** Both path forms of DESIGN.md §3; the second is the older one, kept for existing integrations. */
export const WEBHOOK_PATHS = ['/api/v1/trigger/channel/webhook/:apiKey/:triggerId', '/api/trigger/channel/webhook/:apiKey/:triggerId'];

const Params = Type.Object({
  apiKey: Type.String({ description: "the tenant's API key (64 hex characters)" }),
  triggerId: Type.String({ description: "the rule's trigger id (UUID)" }),
});

/** What monitoring tools send in a text field: read as its string form; null as absent. */
const Scalar = (description?: string) => Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], description ? { description } : {});

const AlertBody = Type.Object(
  {
    HostName: Type.Optional(Scalar('the host to act on (trigger_host); a number or boolean is read as its text, 12345 as "12345"')),
    hostname: Type.Optional(Scalar('older form of HostName')),
    AppName: Type.Optional(Scalar()),
    application: Type.Optional(Scalar('older form of AppName')),
    AlarmName: Type.Optional(Scalar()),
    Severity: Type.Optional(Scalar()),
    Source: Type.Optional(Scalar()),
    Act: Type.Optional(Type.Union([Type.Boolean(), Type.Enum(['true', 'false'])], { description: 'false (or "false") records the event without acting (dry run); default true. null or any other value is refused with 400' })),
    MetaData: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]))),
  },
  { description: 'Every field is optional; a known field sent as null is absent; every scalar pair reaches the runbook as an environment variable' },
);

/**
 * Execution ids a reply lists at most, as an event's view does. A rule over a fleet queues one
 * execution per host: the reply stays small and counts them, and the link pages through all
 * (docs/webhook.md).
 */
const REPLY_EXECUTION_IDS = LISTED_EXECUTION_IDS;

const Accepted = Type.Object({
  eventId: Type.String({ format: 'uuid' }),
  outcome: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
  executionIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: REPLY_EXECUTION_IDS, description: `the event's executions, at most the first ${REPLY_EXECUTION_IDS}; executionsUrl lists them all` }),
  executionCount: Type.Integer({ minimum: 0, description: 'how many executions the event queued (executionIds may list fewer)' }),
  executionsUrl: Type.String({ description: "the event's executions, paged: GET with a bearer token" }),
  skippedEnv: Type.Array(SkippedEnv),
  act: Type.Boolean({ description: 'how Act was read: false, a dry run (Act: false or "false"); true when it was true, "true" or left out' }),
  replayed: Type.Boolean({ description: 'true: an earlier call with the same Idempotency-Key recorded this event; nothing new was stored or run' }),
});

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: `retries with the same key within 24 h get the original event back and run nothing (1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters)` })),
});

type WebhookRequest = FastifyRequest<{ Params: { apiKey: string; triggerId: string } }>;

/** Registers the webhook trigger endpoint in its own scope: its own body parser and limits. */
/** What the webhook takes an event with. */
export interface WebhookDeps {
  writer: EventWriter;
  directory: KeyDirectory;
  tarpit: Tarpit;
  metrics: Metrics;
  clock: () => number;
  bodyLimitBytes: number;
  /** Where the database is, for the log line of a full disk. */
  storeLocation: string;
}

export function registerWebhookRoutes(app: Api, deps: WebhookDeps): void {
  app.removeAllContentTypeParsers();
  // The body is optional (DESIGN.md §3): an empty JSON body is an empty payload, not an error.
  app.addContentTypeParser(/^application\/([\w.-]+\+)?json\s*(;.*)?$/i, { parseAs: 'string' }, jsonBodyParser(app, { optional: true }));

  for (const url of WEBHOOK_PATHS) {
    const older = url.startsWith('/api/trigger');
    app.post(url, {
      bodyLimit: deps.bodyLimitBytes,
      // The handler validates the body itself, to answer in the words of DESIGN.md §3.
      validatorCompiler: () => () => true,
      onRequest: (request) => admit(deps, request as WebhookRequest),
      // Every refusal, whoever found it: the key check, the parser, the body limit, the storage.
      onResponse: (_request, reply, done) => {
        if (reply.statusCode >= 400) deps.metrics.ingressRejections.inc({ status: reply.statusCode });
        done();
      },
      schema: {
        tags: ['webhook'],
        summary: older ? 'Fire a webhook trigger (older path form)' : 'Fire a webhook trigger',
        description: 'Records an event for the rule and answers once it is stored. No bearer token: the API key in the path authenticates.',
        deprecated: older,
        security: [],
        params: Params,
        headers: IdempotencyHeaders,
        body: AlertBody,
        response: { 202: Accepted, ...problems(400, 401, 403, 404, 413, 415, 422, 429, 503) },
      },
    }, (request, reply) => accept(deps, request as unknown as WebhookRequest, reply));
  }
}

async function accept(deps: WebhookDeps, request: WebhookRequest, reply: FastifyReply) {
  const { triggerId } = request.params;
  if (!isUuid(triggerId)) throw noTrigger(triggerId);
  const parsed = parseAlertPayload(request.body);
  if (!parsed.ok) {
    const first = parsed.errors[0]!;
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `${first.path}: ${first.message}`, { fieldErrors: parsed.errors });
  }
  const idempotencyKey = readIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER]);
  const result = await submitted(request, deps.storeLocation, deps.writer.submit({
    tenantId: request.caller.tenantId,
    rule: { by: 'trigger', triggerId: triggerId.toLowerCase() },
    source: 'webhook',
    credential: { kind: 'api_key', keyId: request.caller.keyId },
    receivedAt: deps.clock(),
    sourceIp: request.ip,
    payload: parsed.payload,
    idempotencyKey,
  }));
  switch (result.status) {
    case 'revoked_key':
      deps.directory.forgetTenant(request.caller.tenantId);
      throw invalidKey();
    case 'key_lacks_scope':
      // Narrowed on another node since this one cached the key.
      deps.directory.forgetTenant(request.caller.tenantId);
      throw lacksWebhookScope(request.caller.keyName);
    case 'no_rule':
      throw noTrigger(triggerId);
    case 'unstorable':
      request.log.error({ err: result.error }, 'event not stored: the service could not make it into rows; the other events of its batch were stored');
      throw unstorable();
    case 'idempotency_conflict':
      throw new PitcrewError('PITCREW_ERR_IDEMPOTENCY_KEY_REUSED', `Idempotency-Key "${idempotencyKey}" was used on this trigger within 24 h for a different body, so nothing was recorded; use a new key for a new alarm, or resend the same body to get the original event`);
    case 'replayed':
      return reply
        .code(202)
        .header('Location', `/api/v1/events/${result.eventId}`)
        .header('Idempotent-Replayed', 'true')
        .send(acceptedReply(result, result.skippedEnv, parsed.payload.act, true));
    case 'stored':
      return reply
        .code(202)
        .header('Location', `/api/v1/events/${result.eventId}`)
        .send(acceptedReply(result, result.skippedEnv, parsed.payload.act, false));
    case 'alert':
      throw new Error('a webhook call names one rule; the writer answered for an alert');
    default:
      return assertNever(result);
  }
}

function acceptedReply(event: { eventId: string; outcome: string; reason: string | null; executionIds: string[] }, skippedEnv: AlertPayload['skippedEnv'], act: boolean, replayed: boolean) {
  return {
    eventId: event.eventId,
    outcome: event.outcome,
    reason: event.reason,
    executionIds: event.executionIds.slice(0, REPLY_EXECUTION_IDS),
    executionCount: event.executionIds.length,
    executionsUrl: `/api/v1/executions?eventId=${event.eventId}`,
    skippedEnv,
    act,
    replayed,
  };
}

function noTrigger(triggerId: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_TRIGGER_NOT_FOUND', `no webhook rule with trigger id ${triggerId} in this tenant; copy the URL from the rule (GET /api/v1/rules/{id})`);
}
