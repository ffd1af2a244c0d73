import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { jsonBodyParser } from '../http/json-body.js';
import { problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { isUuid } from '../store/ids.js';
import type { EventWriter } from '../ingest/writer.js';
import type { Metrics } from '../metrics/registry.js';
import type { KeyDirectory } from '../tenants/directory.js';
import type { Tarpit } from '../tenants/tarpit.js';
import { assertNever } from '../errors/assert-never.js';
import { admit, type AdmissionDeps, invalidKey, lacksWebhookScope, submitted, unstorableEvent } from './admission.js';
import { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from './idempotency-key.js';
import { parseAlertPayload } from './payload.js';
import { webhookAlarm } from '../incidents/webhook-alarm.js';
import { Accepted, AlertBody, IdempotencyHeaders, idempotencyKeyReused, sendAccepted } from './webhook-reply.js';

/** Both path forms of DESIGN.md §3; the second is the older one, kept for existing integrations. */
export const WEBHOOK_PATHS = ['/api/v1/trigger/channel/webhook/:apiKey/:triggerId', '/api/trigger/channel/webhook/:apiKey/:triggerId'];

const Params = Type.Object({
  apiKey: Type.String({ description: "the tenant's API key (64 hex characters)" }),
  triggerId: Type.String({ description: "the rule's trigger id (UUID)" }),
});

type WebhookRequest = FastifyRequest<{ Params: { apiKey: string; triggerId: string } }>;

/** What the webhook takes an event with. */
export interface WebhookDeps {
  writer: EventWriter;
  directory: KeyDirectory;
  tarpit: Tarpit;
  metrics: Metrics;
  disk?: AdmissionDeps['disk'];
  clock: () => number;
  bodyLimitBytes: number;
  /** Where the database is, for the log line of a full disk. */
  storeLocation: string;
}

/** Registers the webhook trigger endpoint in its own scope: its own body parser and limits. */
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
      onRequest: (request, _reply, done) => admit(deps, request as WebhookRequest, done),
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
    alarm: webhookAlarm(parsed.payload),
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
      throw unstorableEvent(request, result.error);
    case 'idempotency_conflict':
      throw idempotencyKeyReused(idempotencyKey, 'this trigger');
    case 'replayed':
    case 'stored':
      return sendAccepted(reply, result, parsed.payload);
    case 'alert':
      throw new Error('a webhook call names one rule; the writer answered for an alert');
    default:
      return assertNever(result);
  }
}

function noTrigger(triggerId: string): PitcrewError {
  return new PitcrewError('PITCREW_ERR_TRIGGER_NOT_FOUND', `no webhook rule with trigger id ${triggerId} in this tenant; copy the URL from the rule (GET /api/v1/rules/{id})`);
}
