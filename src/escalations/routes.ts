import { Type } from 'typebox';
import { notFound } from '../errors/catalogue.js';
import { getRule, ruleExists } from '../rules/repository.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Kysely } from 'kysely';
import type { Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import { limitUsage, LimitUsageView } from './limit-usage.js';
import { EscalationView, presentEscalation } from './presenter.js';
import { ESCALATION_STATES, getEscalation, listEscalations } from './repository.js';
import type { Database } from '../store/schema.js';

const tags = ['escalations'];

const Filters = {
  hostname: Type.Optional(Type.String({ maxLength: 253 })),
  state: Type.Optional(Type.Enum([...ESCALATION_STATES])),
};

/** A rule's action limit at work: its usage per host, and an escalation per (rule, host, window) in which it stopped the rule acting. */
export function registerEscalationRoutes(app: Api, db: Kysely<Database>): void {
  app.get('/escalations', {
    schema: {
      tags, ...access('viewer'), summary: 'Escalations to a person, newest first',
      querystring: Type.Object({ ...PageQuery, ...Filters, ruleId: Type.Optional(Type.String({ format: 'uuid' })) }, { additionalProperties: false }),
      response: { 200: pageOf(EscalationView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const { ruleId, hostname, state } = request.query;
    return toPage(await listEscalations(db, request.principal.tenantId, { ruleId, hostname, state }, page), page, presentEscalation);
  });

  app.get('/escalations/:id', {
    schema: { tags, ...access('viewer'), summary: 'One escalation', params: IdParams, response: { 200: EscalationView, ...problems(400, 401, 404) } },
  }, async (request) => presentEscalation(await getEscalation(db, request.principal.tenantId, request.params.id)));

  app.get('/rules/:id/escalations', {
    schema: {
      tags, ...access('viewer'), summary: "A rule's escalations, newest first",
      params: IdParams,
      querystring: Type.Object({ ...PageQuery, ...Filters }, { additionalProperties: false }),
      response: { 200: pageOf(EscalationView), ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const { tenantId } = request.principal;
    if (!(await ruleExists(db, tenantId, request.params.id))) throw notFound('rule', request.params.id);
    const page = pageRequest(request.query);
    const rows = await listEscalations(db, tenantId, { ruleId: request.params.id, hostname: request.query.hostname, state: request.query.state }, page);
    return toPage(rows, page, presentEscalation);
  });

  app.get('/rules/:id/limits', {
    schema: {
      tags: ['rules'], ...access('viewer'), summary: "The rule's action limit: executions used per host in the current window, and open escalations",
      params: IdParams, response: { 200: LimitUsageView, ...problems(400, 401, 404) },
    },
  }, async (request) => limitUsage(db, await getRule(db, request.principal.tenantId, request.params.id)));
}
