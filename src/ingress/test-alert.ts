import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Api } from '../http/types.js';
import type { ToolAlert } from '../integrations/notification.js';
import { decideWithoutStoring, type WhatIfDeps } from '../ingest/what-if.js';
import type { Occurrence } from '../ingest/occurrence.js';
import { getIntegration } from '../integrations/repository.js';
import { getRule } from '../rules/repository.js';
import { newId } from '../store/ids.js';
import { alertPayloadOf } from './alert-payload.js';
import { AlertResult, alertOccurrence, RaisedView, storeAlerts, type StoreDeps } from './alert-store.js';

type TestAlertDeps = StoreDeps & WhatIfDeps;

/** The reply to a tool's alert, and for each dry run what acting would have done. */
const TestAlertResult = Type.Object({
  ...AlertResult.properties,
  events: Type.Array(Type.Object({
    ...RaisedView.properties,
    ifActed: Type.Optional(Type.Object({ outcome: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) }, {
      description: "a dry run only: what the rule would decide had the alert asked to act, now (accepted, no_target, ...), without its flapping and limit history",
    })),
  })),
});

/** The name a test alert has unless the person sending it gives one. */
const TEST_ALARM_NAME = 'PitcrewTestAlert';

const TestAlert = Type.Object({
  alarmName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, default: TEST_ALARM_NAME })),
  hostName: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  severity: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  state: Type.Optional(Type.Enum(['firing', 'resolved'], { default: 'firing' })),
  labels: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 500 }))),
  act: Type.Optional(Type.Boolean({ default: false, description: "false (default): a dry run, the matching rules record it and run nothing; true: they act as on the tool's own alert" })),
}, { additionalProperties: false });

/**
 * A test alert sent by a person from the integration's page: recorded in the integration's log and
 * matched against its rules like the tool's own, as a dry run unless asked to act. Its source is
 * `test`, its fingerprint new each time (never a duplicate), and it carries the label pitcrew_test.
 */
export function registerTestAlertRoute(app: Api, deps: TestAlertDeps): void {
  app.post('/integrations/:id/test', {
    schema: {
      tags: ['integrations'], ...access('operator'),
      summary: "Send a test alert through the integration: recorded and matched against its rules (a dry run unless act is true)",
      params: IdParams, body: TestAlert, response: { 202: Type.Object({ alert: TestAlertResult }), ...problems(400, 401, 404) },
    },
  }, async (request, reply) => {
    const integration = await getIntegration(deps.db, request.principal.tenantId, request.params.id);
    const { alarmName = TEST_ALARM_NAME, hostName, severity, state = 'firing', labels = {}, act = false } = request.body;
    const fingerprint = `test-${newId()}`;
    // A test alert opens no incident (ingress/alert-store.ts): it is pitcrew's, not the tool's.
    const alert: ToolAlert = {
      alarmName, hostName, severity, state,
      fingerprint, incidentKey: fingerprint, at: null,
      labels: { ...labels, pitcrew_test: 'true' },
      annotations: { summary: `A test alert sent from pitcrew${act ? '' : ' (a dry run)'}` },
      raw: { test: true, alarmName, hostName, severity, state, labels },
    };
    const parsed = alertPayloadOf('test', alert);
    if (!parsed.ok) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${parsed.errors[0]!.path}: ${parsed.errors[0]!.message}`, { fieldErrors: parsed.errors });
    const payload = { ...parsed.payload, act };
    const [stored] = await storeAlerts(deps, request, integration, [{ alert, payload }], { credential: { kind: 'service' }, source: 'test' });
    const acting = alertOccurrence(integration, alert, { ...payload, act: true }, { credential: { kind: 'service' }, source: 'test', sourceIp: request.ip, receivedAt: deps.clock() });
    const events = await Promise.all(stored!.events.map(async (event) => (event.outcome === 'dry_run' ? { ...event, ifActed: await ifActed(deps, event.ruleId, acting) } : event)));
    return reply.code(202).send({ alert: { ...stored!, events } });
  });
}

/**
 * A dry run records `dry_run` before it looks for a target (engine/decide.ts): what the rule would
 * have decided had the alert asked to act, so a dry run tells a rule that would find no host.
 */
async function ifActed(deps: TestAlertDeps, ruleId: string, occurrence: Occurrence): Promise<{ outcome: string; reason: string | null }> {
  const rule = await getRule(deps.db, occurrence.tenantId, ruleId);
  const [decision] = await decideWithoutStoring(deps, rule, [occurrence]);
  return { outcome: decision!.outcome, reason: decision!.reason };
}
