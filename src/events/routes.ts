import { Type } from 'typebox';
import { notFound } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Kysely } from 'kysely';
import type { Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import { executionsOfEvents } from '../executions/repository.js';
import { EventView, LISTED_EXECUTION_IDS, Outcome, presentEvent } from './presenter.js';
import { ruleExists } from '../rules/repository.js';
import { getEvent, listRuleEvents } from './repository.js';
import type { Database } from '../store/schema.js';

const tags = ['events'];

export function registerEventRoutes(app: Api, db: Kysely<Database>): void {
  app.get('/rules/:id/events', {
    schema: {
      tags, ...access('viewer'), summary: "A rule's events, newest first",
      params: IdParams,
      querystring: Type.Object({ ...PageQuery, outcome: Type.Optional(Outcome) }, { additionalProperties: false }),
      response: { 200: pageOf(EventView), ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const { tenantId } = request.principal;
    const page = pageRequest(request.query);
    const rows = await listRuleEvents(db, tenantId, request.params.id, request.query.outcome, page);
    if (rows.length === 0 && !(await ruleExists(db, tenantId, request.params.id))) throw notFound('rule', request.params.id);
    const executions = await executionsOfEvents(db, rows.map((row) => row.id), LISTED_EXECUTION_IDS);
    return toPage(rows, page, (row) => presentEvent(row, executions.get(row.id)));
  });

  app.get('/events/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get an event', params: IdParams, response: { 200: EventView, ...problems(400, 401, 404) } },
  }, async (request) => {
    const row = await getEvent(db, request.principal.tenantId, request.params.id);
    const executions = await executionsOfEvents(db, [row.id], LISTED_EXECUTION_IDS);
    return presentEvent(row, executions.get(row.id));
  });
}
