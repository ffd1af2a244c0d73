import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError, type FieldError } from '../errors/catalogue.js';
import { jsonBodyParser } from '../http/json-body.js';
import { problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import type { SecretBox } from '../identity/secret-box.js';
import { SnsCertificateUnavailableError } from '../integrations/cloudwatch-sns/parse.js';
import type { ToolNotification } from '../integrations/notification.js';
import type { DeliveryStamps } from '../integrations/delivery-stamps.js';
import { openSecret, recordRefusal } from '../integrations/repository.js';
import { INTEGRATION_TYPES, type IntegrationType } from '../integrations/schema.js';
import type { ToolParser } from '../integrations/tools.js';
import type { Database, IntegrationRow } from '../store/schema.js';
import { isUuid } from '../store/ids.js';
import { preparedQuery } from '../store/prepared.js';
import { admit, type AdmissionDeps } from './admission.js';
import { alertPayloadOf } from './alert-payload.js';
import { AlertResult, storeAlerts, type StoreDeps } from './alert-store.js';
import type { ParseResult } from './payload.js';

/** DESIGN.md §7: each integration's own URL; the tool posts its own body there. */
export const INTEGRATION_PATH = '/api/v1/trigger/channel/:type/:apiKey/:integrationId';

type IntegrationRequest = FastifyRequest<{ Params: { type: string; apiKey: string; integrationId: string } }> & { rawBody?: string };

export interface IntegrationIngressDeps extends AdmissionDeps, StoreDeps {
  box: SecretBox;
  parserOf: (type: IntegrationType) => ToolParser;
  bodyLimitBytes: number;
  stamps: DeliveryStamps;
}

const Accepted = Type.Object({ alerts: Type.Array(AlertResult) });

const Control = Type.Object({ control: Type.String({ description: 'what the tool asked (a subscription confirmation, a ping): answered, never acted on' }) });

/** Registers the integrations' inbound URL in its own scope: the tools' content types, their raw bodies. */
export function registerIntegrationIngress(app: Api, deps: IntegrationIngressDeps): void {
  app.removeAllContentTypeParsers();
  const json = jsonBodyParser(app);
  app.addContentTypeParser(/^application\/([\w.-]+\+)?json\s*(;.*)?$/i, { parseAs: 'string' }, (request, body, done) => {
    (request as IntegrationRequest).rawBody = String(body);
    json(request, body, done);
  });
  // AWS SNS posts its JSON as text/plain; the SNS parser reads the raw text itself.
  app.addContentTypeParser(/^text\/plain\s*(;.*)?$/i, { parseAs: 'string' }, (request, body, done) => {
    (request as IntegrationRequest).rawBody = String(body);
    done(null, undefined);
  });

  app.post(INTEGRATION_PATH, {
    bodyLimit: deps.bodyLimitBytes,
    validatorCompiler: () => () => true,
    onRequest: (request, _reply, done) => admit(deps, request as IntegrationRequest, done),
    onResponse: (_request, reply, done) => {
      if (reply.statusCode >= 400) deps.metrics.ingressRejections.inc({ status: reply.statusCode });
      done();
    },
    schema: {
      tags: ['integrations'],
      summary: "A monitoring tool's alerts, in the tool's own format (docs/integrations.md)",
      description: 'Each alert of the notification is matched against the rules of the integration and recorded, one event per matching rule, before the answer. No bearer token: the API key in the path authenticates.',
      security: [],
      params: Type.Object({ type: Type.Enum([...INTEGRATION_TYPES]), apiKey: Type.String(), integrationId: Type.String() }),
      response: { 200: Control, 202: Accepted, ...problems(400, 401, 403, 404, 413, 415, 429, 503) },
    },
  }, (request, reply) => accept(deps, request as IntegrationRequest, reply));
}

async function accept(deps: IntegrationIngressDeps, request: IntegrationRequest, reply: FastifyReply) {
  const integration = await integrationOf(deps.db, request);
  const notification = await parse(deps, integration, request);
  if (notification.kind === 'invalid') return refuse(deps, integration, notification.errors);
  if (notification.kind === 'control') {
    await notification.confirm?.().catch((error: unknown) => {
      throw new PitcrewError('PITCREW_ERR_TOOL_UNAVAILABLE', `the confirmation the tool asked for failed: ${(error as Error).message}; the tool will ask again`, { headers: { 'Retry-After': '5' } });
    });
    request.log.info({ integrationId: integration.id, control: notification.description }, 'an integration answered its tool');
    return reply.code(200).send({ control: notification.description });
  }
  const parsed = notification.alerts.map((alert) => alertPayloadOf(integration.type, alert));
  const refused = parsed.flatMap((p, i) => (p.ok ? [] : p.errors.map((e) => ({ ...e, path: `/alerts/${i}${e.path.replace(/^\/body/, '')}` }))));
  if (refused.length > 0) return refuse(deps, integration, refused);
  const payloads = notification.alerts.map((alert, i) => ({ alert, payload: (parsed[i] as Extract<ParseResult, { ok: true }>).payload }));
  const alerts = await storeAlerts(deps, request, integration, payloads, { credential: { kind: 'api_key', keyId: request.caller.keyId }, keyName: request.caller.keyName });
  deps.stamps.took(integration.id, deps.clock());
  return reply.code(202).send({ alerts });
}

/** Compiled once: every notification reads its integration. */
const liveIntegration = preparedQuery((db, id: string, tenantId: string) => db.selectFrom('integrations').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null));

async function integrationOf(db: Kysely<Database>, request: IntegrationRequest): Promise<IntegrationRow> {
  const { type, integrationId } = request.params;
  const row = isUuid(integrationId)
    ? (await liveIntegration(db, integrationId.toLowerCase(), request.caller.tenantId))[0]
    : undefined;
  if (!row || row.type !== type) {
    throw new PitcrewError('PITCREW_ERR_INTEGRATION_NOT_FOUND', `no ${type} integration ${integrationId} in this tenant; copy the URL from the integration (GET /api/v1/integrations)`);
  }
  return row;
}

async function parse(deps: IntegrationIngressDeps, integration: IntegrationRow, request: IntegrationRequest): Promise<ToolNotification> {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
  try {
    return await deps.parserOf(integration.type as IntegrationType)({
      rawBody: request.rawBody ?? '',
      body: request.body,
      headers,
      config: JSON.parse(integration.config) as Record<string, unknown>,
      secret: openSecret(deps.box, integration),
      now: deps.clock(),
    });
  } catch (error) {
    if (error instanceof SnsCertificateUnavailableError) {
      request.log.warn({ err: error, integrationId: integration.id }, 'alert not read: a service of the tool did not answer');
      throw new PitcrewError('PITCREW_ERR_TOOL_UNAVAILABLE', `${error.message}; nothing was recorded, and the tool retries`, { headers: { 'Retry-After': '5' } });
    }
    throw error;
  }
}

/** A body refused: the tool's own mistake, or a signature that does not verify. Nothing is stored but the integration's last error. */
async function refuse(deps: IntegrationIngressDeps, integration: IntegrationRow, errors: FieldError[]): Promise<never> {
  const first = errors[0]!;
  const signature = errors.some((e) => e.path.startsWith('/headers/'));
  const message = signature
    ? `${first.path}: ${first.message}; nothing was recorded: give the tool and the integration the same secret`
    : `${first.path}: ${first.message}`;
  await recordRefusal(deps.db, integration.id, message);
  throw new PitcrewError(signature ? 'PITCREW_ERR_INVALID_SIGNATURE' : 'PITCREW_ERR_VALIDATION', message, { fieldErrors: errors });
}
