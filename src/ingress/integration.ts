import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError, type FieldError } from '../errors/catalogue.js';
import { jsonBodyParser } from '../http/json-body.js';
import { IdParams, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { EventWriter, RaisedEvent } from '../ingest/writer.js';
import { SnsCertificateUnavailableError } from '../integrations/cloudwatch-sns/parse.js';
import type { ToolAlert, ToolNotification } from '../integrations/notification.js';
import { getIntegration, openSecret, recordDelivery } from '../integrations/repository.js';
import { INTEGRATION_TYPES, type IntegrationType } from '../integrations/schema.js';
import type { ToolParser } from '../integrations/tools.js';
import type { Database, IntegrationRow } from '../store/schema.js';
import { isUuid, newId } from '../store/ids.js';
import { LISTED_EXECUTION_IDS, SkippedEnv } from '../events/presenter.js';
import { admit, invalidKey, lacksWebhookScope, submitted, unstorable, type AdmissionDeps } from './admission.js';
import { alertPayloadOf } from './alert-payload.js';
import type { ParseResult } from './payload.js';
import type { AlertPayload } from '../ingest/alert.js';
import type { Credential } from '../ingest/occurrence.js';

/** DESIGN.md §7: each integration's own URL; the tool posts its own body there. */
/** The name a test alert has unless the person sending it gives one. */
const TEST_ALARM_NAME = 'PitcrewTestAlert';

export const INTEGRATION_PATH = '/api/v1/trigger/channel/:type/:apiKey/:integrationId';

type IntegrationRequest = FastifyRequest<{ Params: { type: string; apiKey: string; integrationId: string } }> & { rawBody?: string };

interface StoreDeps {
  db: Kysely<Database>;
  writer: EventWriter;
  clock: () => number;
  storeLocation: string;
}

export interface IntegrationIngressDeps extends AdmissionDeps, StoreDeps {
  box: SecretBox;
  parserOf: (type: IntegrationType) => ToolParser;
  bodyLimitBytes: number;
}

const RaisedView = Type.Object({
  ruleId: Type.String({ format: 'uuid' }),
  eventId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null when nothing was recorded for this rule (a conflict)' }),
  outcome: Type.String({ description: 'accepted, recorded (a state the rule does not act on), duplicate (a re-sent alert), rule_off, no_target, ...' }),
  reason: Type.Union([Type.String(), Type.Null()]),
  executionIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: LISTED_EXECUTION_IDS }),
  executionCount: Type.Integer({ minimum: 0 }),
});

const AlertResult = Type.Object({
  fingerprint: Type.String(),
  state: Type.Enum(['firing', 'resolved']),
  alarmName: Type.Union([Type.String(), Type.Null()]),
  hostName: Type.Union([Type.String(), Type.Null()]),
  events: Type.Array(RaisedView, { description: 'one per rule of the integration the alert matched; none: no rule matched (nothing to do)' }),
  skippedEnv: Type.Array(SkippedEnv),
});

const Accepted = Type.Object({ alerts: Type.Array(AlertResult) });

const TestAlert = Type.Object({
  alarmName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, default: TEST_ALARM_NAME })),
  hostName: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  severity: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  state: Type.Optional(Type.Enum(['firing', 'resolved'], { default: 'firing' })),
  labels: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 500 }))),
  act: Type.Optional(Type.Boolean({ default: false, description: "false (default): a dry run, the matching rules record it and run nothing; true: they act as on the tool's own alert" })),
}, { additionalProperties: false });

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
    onRequest: (request) => admit(deps, request as IntegrationRequest),
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

/**
 * A test alert sent by a person from the integration's page: recorded in the integration's log and
 * matched against its rules like the tool's own, as a dry run unless asked to act. Its source is
 * `test`, its fingerprint new each time (never a duplicate), and it carries the label pitcrew_test.
 */
export function registerTestAlertRoute(app: Api, deps: StoreDeps): void {
  app.post('/integrations/:id/test', {
    schema: {
      tags: ['integrations'], security: [{ bearerAuth: [] }],
      summary: "Send a test alert through the integration: recorded and matched against its rules (a dry run unless act is true)",
      params: IdParams, body: TestAlert, response: { 202: Type.Object({ alert: AlertResult }), ...problems(400, 401, 404) },
    },
  }, async (request, reply) => {
    const integration = await getIntegration(deps.db, request.principal.tenantId, request.params.id);
    const { alarmName = TEST_ALARM_NAME, hostName, severity, state = 'firing', labels = {}, act = false } = request.body;
    const alert: ToolAlert = {
      alarmName, hostName, severity, state,
      fingerprint: `test-${newId()}`,
      labels: { ...labels, pitcrew_test: 'true' },
      annotations: { summary: `A test alert sent from pitcrew${act ? '' : ' (a dry run)'}` },
      raw: { test: true, alarmName, hostName, severity, state, labels },
    };
    const parsed = alertPayloadOf('test', alert);
    if (!parsed.ok) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${parsed.errors[0]!.path}: ${parsed.errors[0]!.message}`, { fieldErrors: parsed.errors });
    const payload = { ...parsed.payload, act };
    const [stored] = await storeAlerts(deps, request, integration, [{ alert, payload }], { kind: 'service' }, request.ip, 'test');
    return reply.code(202).send({ alert: stored! });
  });
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
  const alerts = await storeAlerts(deps, request, integration, payloads, { kind: 'api_key', keyId: request.caller.keyId }, request.ip);
  await recordDelivery(deps.db, integration.id, { ok: true });
  return reply.code(202).send({ alerts });
}

/**
 * The alerts of one notification, each matched against the integration's rules and recorded with
 * the events it raised, in one transaction (the tool's retry of a failed one finds nothing half stored).
 */
async function storeAlerts(deps: StoreDeps, request: FastifyRequest, integration: IntegrationRow, payloads: Array<{ alert: ToolAlert; payload: AlertPayload }>, credential: Credential, sourceIp: string | null, source = integration.type) {
  const receivedAt = deps.clock();
  const results = await submitted(request, deps.storeLocation, deps.writer.submitAll(payloads.map(({ alert, payload }) => ({
    tenantId: integration.tenant_id,
    rule: { by: 'integration', integrationId: integration.id, alert: { alarmName: alert.alarmName, severity: alert.severity, state: alert.state, labels: alert.labels, hostName: alert.hostName, annotations: alert.annotations } },
    source,
    sourceIp,
    receivedAt,
    credential,
    payload,
    alertFingerprint: alert.fingerprint,
  }))));
  return results.map((result, i) => {
    if (result.status === 'revoked_key') throw invalidKey();
    if (result.status === 'key_lacks_scope') throw lacksWebhookScope((request as IntegrationRequest).caller.keyName);
    if (result.status !== 'alert') throw unstorable();
    return alertView(payloads[i]!.alert, result.events, payloads[i]!.payload.skippedEnv);
  });
}

async function integrationOf(db: Kysely<Database>, request: IntegrationRequest): Promise<IntegrationRow> {
  const { type, integrationId } = request.params;
  const row = isUuid(integrationId)
    ? await db.selectFrom('integrations').selectAll().where('id', '=', integrationId.toLowerCase()).where('tenant_id', '=', request.caller.tenantId).where('deleted_at', 'is', null).executeTakeFirst()
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
  await recordDelivery(deps.db, integration.id, { ok: false, error: message });
  throw new PitcrewError(signature ? 'PITCREW_ERR_INVALID_SIGNATURE' : 'PITCREW_ERR_VALIDATION', message, { fieldErrors: errors });
}

function alertView(alert: ToolAlert, events: RaisedEvent[], skippedEnv: AlertPayload['skippedEnv']) {
  return {
    fingerprint: alert.fingerprint,
    state: alert.state,
    alarmName: alert.alarmName ?? null,
    hostName: alert.hostName ?? null,
    events: events.map((event) => (event.status === 'idempotency_conflict'
      ? { ruleId: event.ruleId, eventId: null, outcome: 'conflict', reason: 'not recorded', executionIds: [], executionCount: 0 }
      : {
        ruleId: event.ruleId,
        eventId: event.eventId,
        outcome: event.status === 'replayed' ? 'duplicate' : event.outcome,
        reason: event.reason,
        executionIds: event.executionIds.slice(0, LISTED_EXECUTION_IDS),
        executionCount: event.executionIds.length,
      })),
    skippedEnv,
  };
}
