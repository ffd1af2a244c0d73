import { Type, type Static } from 'typebox';
import type { Decision } from '../engine/decide.js';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Api } from '../http/types.js';
import { decideWithoutStoring, type WhatIfDeps } from '../ingest/what-if.js';
import { AlertView, presentAlert, previewTrigger, recentAlerts, TriggerMatch } from '../integrations/alert-log.js';
import { getIntegration } from '../integrations/repository.js';
import { withFlappingDefaults, type Rule } from '../rules/rule.js';
import { Action, InfrastructureType, Target, type RuleInput } from '../rules/schema.js';
import { crossFieldErrors } from '../rules/validate.js';
import { newId } from '../store/ids.js';
import type { IntegrationRow } from '../store/schema.js';
import { alertPayloadOf } from './alert-payload.js';
import { alertOccurrence } from './alert-store.js';
import { notAudited } from '../identity/audit/naming.js';

/** Host names an item lists at most; targetCount says how many there are. */
const LISTED_TARGETS = 20;

/** What a rule does when the preview is not told: a script on the host the alert names (the wizard's start). */
const DEFAULT_DRAFT = { target: { type: 'trigger_host' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, infrastructureType: 'On_Premise' } as const;

const PreviewInput = Type.Object(
  {
    ...TriggerMatch.properties,
    target: Type.Optional(Target),
    action: Type.Optional(Action),
    infrastructureType: Type.Optional(InfrastructureType),
  },
  { additionalProperties: false },
);
type PreviewInput = Static<typeof PreviewInput>;

export const PreviewView = Type.Object({
  scanned: Type.Integer({ minimum: 0, description: 'how many recent alerts were looked at (newest first)' }),
  matched: Type.Integer({ minimum: 0, description: 'how many of them the trigger matches' }),
  items: Type.Array(Type.Object({
    alert: AlertView,
    matches: Type.Boolean({ description: 'whether the trigger would have raised the rule for this alert' }),
    outcome: Type.Union([Type.String(), Type.Null()], {
      description: "what the ingest would decide for it now, on a rule with this trigger, target and action (accepted, recorded, no_target, ...; the rule's flapping and limit history not counted); null when it does not match",
    }),
    reason: Type.Union([Type.String(), Type.Null()], { description: "the decision's reason, as the event would record it" }),
    acts: Type.Boolean({ description: 'whether it would act: outcome accepted' }),
    hostName: Type.Union([Type.String(), Type.Null()], { description: 'the host the alert names for this rule (trigger.hostLabel, or the tool’s own)' }),
    targets: Type.Array(Type.String(), { maxItems: LISTED_TARGETS, description: `the hosts it would act on (the first ${LISTED_TARGETS}), or the host a run by the service is about` }),
    targetCount: Type.Integer({ minimum: 0, description: 'how many executions it would queue' }),
  })),
});

/**
 * The rule wizard's preview: which of the integration's recent alerts an alert trigger would have
 * matched, and what the ingest would decide for each now, target resolution included
 * (ingest/what-if.ts), for the target and action the rule has so far. Nothing is stored.
 */
export function registerAlertPreviewRoute(app: Api, deps: WhatIfDeps & { clock: () => number }): void {
  app.post('/integrations/:id/alerts/preview', {
    schema: {
      ...notAudited('a preview: replays recent alerts against a draft trigger, stores nothing'),
      tags: ['integrations'], ...access('viewer'),
      summary: "What an alert trigger would have done with the integration's recent alerts: matched or not, and the ingest's decision (act, no_target, ...) for the rule's target and action; nothing is stored",
      params: IdParams, querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'how many recent alerts to look at' })) }, { additionalProperties: false }),
      body: PreviewInput, response: { 200: PreviewView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const integration = await getIntegration(deps.db, request.principal.tenantId, request.params.id);
    const draft = draftRule(integration, request.body, deps.clock());
    const rows = await recentAlerts(deps.db, integration.tenant_id, integration.id, request.query.limit ?? 100);
    const { scanned, matched, items } = previewTrigger(rows.map(presentAlert), request.body, integration.id);
    const matching = items.filter((item) => item.matches);
    const decisions = await decideWithoutStoring(deps, draft, matching.map(({ alert }) => occurrenceOf(integration, alert, deps.clock())));
    const decided = new Map(matching.map((item, i) => [item.alert.id, decisions[i]!]));
    return { scanned, matched, items: items.map((item) => ({ ...item, ...decisionView(decided.get(item.alert.id)) })) };
  });
}

/** The rule being written, as the ingest would hold it, checked as the rules API checks a rule (rules/validate.ts). */
function draftRule(integration: IntegrationRow, body: PreviewInput, now: number): Rule {
  const { target = DEFAULT_DRAFT.target, action = DEFAULT_DRAFT.action, infrastructureType = DEFAULT_DRAFT.infrastructureType, ...match } = body;
  const input: RuleInput = { name: 'preview', trigger: { type: 'alert', integrationId: integration.id, ...match }, target, action, infrastructureType };
  // The trigger's fields are the body's own here: /trigger/alarmName is the body's /alarmName.
  const errors = crossFieldErrors(input).map((e) => ({ ...e, path: e.path.replace(/^\/trigger/, '') }));
  if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}`, { fieldErrors: errors });
  return {
    id: newId(now), tenantId: integration.tenant_id, name: input.name, enabled: true, trigger: input.trigger, triggerId: null, action, target, infrastructureType,
    actionLimit: null, flapping: withFlappingDefaults(undefined), approval: null, createdAt: now, updatedAt: now,
  };
}

/** A logged alert as it would enter the ingest again now, asking to act. */
function occurrenceOf(integration: IntegrationRow, alert: AlertView, now: number) {
  const tool = {
    alarmName: alert.alarmName ?? undefined, hostName: alert.hostName ?? undefined, severity: alert.severity ?? undefined, state: alert.state,
    fingerprint: alert.fingerprint, incidentKey: alert.fingerprint, at: null, labels: alert.labels, annotations: alert.annotations, raw: {},
  };
  const parsed = alertPayloadOf(alert.source, tool);
  // It was read the same way when the tool sent it; a refusal now would be a change of the reading.
  if (!parsed.ok) throw new Error(`a logged alert no longer reads as a payload: ${parsed.errors[0]?.message ?? ''}`);
  return alertOccurrence(integration, tool, { ...parsed.payload, act: true }, { credential: { kind: 'service' }, source: alert.source, sourceIp: null, receivedAt: now });
}

/** A decision as the preview tells it; no decision: the trigger does not match the alert. */
function decisionView(decision: Decision | undefined): { outcome: string | null; reason: string | null; acts: boolean; targets: string[]; targetCount: number } {
  if (!decision) return { outcome: null, reason: null, acts: false, targets: [], targetCount: 0 };
  if (decision.outcome !== 'accepted') return { outcome: decision.outcome, reason: decision.reason, acts: false, targets: [], targetCount: 0 };
  const hosts = [...decision.targets, ...decision.held].map((host) => host.hostname);
  const about = decision.serviceRuns.map((run) => run.about ?? 'the service');
  const all = [...hosts, ...about];
  return { outcome: 'accepted', reason: decision.reason, acts: true, targets: all.slice(0, LISTED_TARGETS), targetCount: all.length };
}
