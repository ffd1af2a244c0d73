import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { assertNever } from '../errors/assert-never.js';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { IdParams, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { access } from '../identity/access.js';
import { requestedByOf } from '../identity/requested-by.js';
import { composedRule, ensureTroubleshootRule, incidentForRun, incidentPayload, troubleshootRunbook, TroubleshootBody, TroubleshootReply } from '../incidents/troubleshoot.js';
import type { Occurrence } from '../ingest/occurrence.js';
import type { EventWriter, OccurrenceResult, RaisedEvent } from '../ingest/writer.js';
import { getRule } from '../rules/repository.js';
import type { RunbookLibrary } from '../runbooks/library/library.js';
import type { Database } from '../store/schema.js';
import { submitted, unstorableEvent } from './admission.js';
import { parseAlertPayload } from './payload.js';
import { runPayload } from './run-payload.js';
import { Accepted, sendAccepted } from './webhook-reply.js';

const tags = ['incidents'];

const FixBody = Type.Object({
  ruleId: Type.String({ format: 'uuid', description: "the rule whose action runs: with the incident's alarm, host and severity (and its newest alert's labels and annotations) as the webhook body" }),
  act: Type.Optional(Type.Boolean({ description: 'false: a dry run, recorded and not run' })),
}, { additionalProperties: false });

export interface IncidentRunDeps {
  db: Kysely<Database>;
  writer: EventWriter;
  library: RunbookLibrary;
  clock: () => number;
  /** Where the database is, for the log line of a full disk. */
  storeLocation: string;
}

/**
 * A person acting on an incident from the dashboard (DESIGN.md §7, docs/incidents.md):
 * Troubleshoot now runs a diagnostics runbook (stored, or of the starter library) on the
 * incident's host at once; Fix now runs a rule's action as Run now does (run-now.ts), with the
 * incident's alarm as the payload. Both go the ingest's way to the agent (ingest/writer.ts),
 * source `troubleshoot` or `manual` with who asked, and their executions join the incident's.
 */
export function registerIncidentRunRoutes(app: Api, deps: IncidentRunDeps): void {
  app.post('/incidents/:id/troubleshoot', {
    schema: {
      tags, ...access('operator'),
      summary: "Troubleshoot now: run a diagnostics runbook (stored, or from the starter library) on the incident's host at once; its output streams at GET /executions/{executionId}/stream",
      description: 'The run is an execution of the incident (its executionIds), flavour diagnostics, recorded with who asked (event source "troubleshoot"). 409 when nothing could run: no agent has the host.',
      params: IdParams, body: TroubleshootBody,
      response: { 202: TroubleshootReply, ...problems(400, 401, 403, 404, 409, 503) },
    },
  }, async (request, reply) => {
    const { tenantId } = request.principal;
    const incident = await incidentForRun(deps.db, tenantId, request.params.id);
    const hostname = request.body.hostname ?? incident.hostname;
    if (!hostname) {
      const message = "the incident names no host: give the host to run on (hostname)";
      throw new PitcrewError('PITCREW_ERR_VALIDATION', `/body/hostname: ${message}`, { fieldErrors: [{ path: '/body/hostname', message }] });
    }
    const runbook = await troubleshootRunbook(deps.db, deps.library, tenantId, request.body);
    const receivedAt = deps.clock();
    const parsed = parseAlertPayload(await incidentPayload(deps.db, tenantId, incident, hostname));
    if (!parsed.ok) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${parsed.errors[0]!.path}: ${parsed.errors[0]!.message}`, { fieldErrors: parsed.errors });
    await ensureTroubleshootRule(deps.db, tenantId, receivedAt);
    const rule = composedRule(tenantId, runbook, hostname, receivedAt, request.body.timeoutSeconds);
    const event = raised(request, await submitted(request, deps.storeLocation, deps.writer.submit({
      ...asked(request, receivedAt, incident.id),
      rule: { by: 'composed', rule },
      source: 'troubleshoot',
      payload: parsed.payload,
    })), () => new Error('a composed run names its rule whole'));
    if (event.status !== 'stored') throw new Error(`a troubleshooting run carries no Idempotency-Key; the writer answered ${event.status}`);
    const executionId = event.executionIds[0];
    if (executionId === undefined) throw new PitcrewError('PITCREW_ERR_CONFLICT', `nothing ran on ${hostname}: ${event.reason ?? event.outcome}. Install the agent there, or pick a host that has one (hostname)`);
    request.log.info({ incidentId: incident.id, eventId: event.eventId, executionId }, 'troubleshooting run on request');
    return reply.code(202).header('Location', `/api/v1/executions/${executionId}`).send({ executionId, eventId: event.eventId, hostname });
  });

  app.post('/incidents/:id/fix', {
    schema: {
      tags, ...access('operator'),
      summary: "Fix now: run a rule's action for the incident, as Run now does, with the incident's alarm as the payload; the reply is the webhook's",
      description: 'The rule decides as for its trigger (off, flapping, action limit); its executions join the incident\'s, and the rule its rules. A fix that succeeds before the tool resolves the incident makes the resolution automation\'s.',
      params: IdParams, body: FixBody,
      response: { 202: Accepted, ...problems(400, 401, 403, 404, 503) },
    },
  }, async (request, reply) => {
    const { tenantId } = request.principal;
    const incident = await incidentForRun(deps.db, tenantId, request.params.id);
    const rule = await getRule(deps.db, tenantId, request.body.ruleId).catch((error: unknown) => {
      if (error instanceof PitcrewError && error.code === 'PITCREW_ERR_NOT_FOUND') {
        const message = `no rule ${request.body.ruleId} in this tenant; pick one from GET /api/v1/rules`;
        throw new PitcrewError('PITCREW_ERR_VALIDATION', `/body/ruleId: ${message}`, { fieldErrors: [{ path: '/body/ruleId', message }] });
      }
      throw error;
    });
    const receivedAt = deps.clock();
    const parsed = runPayload(rule, { payload: await incidentPayload(deps.db, tenantId, incident, incident.hostname), act: request.body.act }, receivedAt);
    if (!parsed.ok) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${parsed.errors[0]!.path}: ${parsed.errors[0]!.message}`, { fieldErrors: parsed.errors });
    const event = raised(request, await submitted(request, deps.storeLocation, deps.writer.submit({
      ...asked(request, receivedAt, incident.id),
      rule: { by: 'rule', ruleId: rule.id },
      source: 'manual',
      payload: parsed.payload,
    })), () => notFound('rule', rule.id));
    if (event.status === 'idempotency_conflict') throw new Error('a fix carries no Idempotency-Key');
    if (event.status === 'stored') request.log.info({ incidentId: incident.id, ruleId: rule.id, eventId: event.eventId }, 'rule run on an incident (Fix now)');
    return sendAccepted(reply, event, parsed.payload);
  });
}

/** What a person's run on an incident shares: who asked, from where, and which incident. */
function asked(request: FastifyRequest, receivedAt: number, incidentId: string): Pick<Occurrence, 'tenantId' | 'requestedBy' | 'credential' | 'receivedAt' | 'sourceIp' | 'incidentId'> {
  return {
    tenantId: request.principal.tenantId,
    requestedBy: requestedByOf(request.principal),
    // The token or session proved the tenant and the role.
    credential: { kind: 'service' },
    receivedAt,
    sourceIp: request.ip,
    incidentId,
  };
}

/** The event a run stored, or the error its result means. */
function raised(request: FastifyRequest, result: OccurrenceResult, gone: () => Error): RaisedEvent {
  switch (result.status) {
    case 'no_rule':
      // Deleted since it was read.
      throw gone();
    case 'unstorable':
      throw unstorableEvent(request, result.error);
    case 'stored':
    case 'replayed':
    case 'idempotency_conflict':
      return result;
    case 'revoked_key':
    case 'key_lacks_scope':
    case 'alert':
      throw new Error(`a run on an incident carries no API key and names one rule; the writer answered ${result.status}`);
    default:
      return assertNever(result);
  }
}
