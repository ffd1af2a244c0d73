import type { Kysely } from 'kysely';
import { executionsOfEvents } from '../executions/repository.js';
import { presentExecution } from '../executions/presenter.js';
import { LISTED_EXECUTION_IDS, presentEvent } from '../events/presenter.js';
import { IdParams, pageOf, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { access } from '../identity/access.js';
import { presentAlert } from '../integrations/alert-log.js';
import type { Dialect } from '../store/database.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database } from '../store/schema.js';
import { LISTED_EXECUTIONS } from './book.js';
import { presentIncident } from './presenter.js';
import { getIncident, incidentParts, listIncidents, resolveByHand } from './repository.js';
import { IncidentDetail, IncidentQuery, IncidentView } from './schema.js';

const tags = ['incidents'];

/** DESIGN.md §7 "Incidents": the list, one incident with what belongs to it, and resolving one by hand. */
export function registerIncidentRoutes(app: Api, { db, dialect, clock }: { db: Kysely<Database>; dialect: Dialect; clock: () => number }): void {
  app.get('/incidents', {
    schema: {
      tags, ...access('viewer'), summary: 'Incidents, newest opened first',
      description: 'from and to bound when they opened; hostname compares without case.',
      querystring: IncidentQuery,
      response: { 200: pageOf(IncidentView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const { state, integrationId, hostname, alarmName, from, to } = request.query;
    const filter = { state, integrationId, hostname, alarmName, from: from === undefined ? undefined : Date.parse(from), to: to === undefined ? undefined : Date.parse(to) };
    return toPage(await listIncidents(db, request.principal.tenantId, filter, page), page, presentIncident);
  });

  app.get('/incidents/:id', {
    schema: {
      tags, ...access('viewer'), summary: 'One incident, with its alerts, events and executions (the newest of each)',
      params: IdParams, response: { 200: IncidentDetail, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const { tenantId } = request.principal;
    const row = await getIncident(db, tenantId, request.params.id);
    const parts = await incidentParts(db, tenantId, row, LISTED_EXECUTIONS);
    const executionsOf = await executionsOfEvents(db, parts.eventRows.map((event) => event.id), LISTED_EXECUTION_IDS);
    return {
      ...presentIncident(row),
      alerts: parts.alertRows.map(presentAlert),
      alertCount: parts.alertCount,
      events: parts.eventRows.map((event) => presentEvent(event, executionsOf.get(event.id))),
      eventCount: parts.eventCount,
      executions: parts.executionRows.map((execution) => presentExecution(execution)),
    };
  });

  app.post('/incidents/:id/resolve', {
    schema: {
      tags, ...access('operator'), summary: 'Resolve an open incident by hand: now, by you',
      description: 'For an alarm the tool will not resolve (it was fixed by hand, the alert was deleted). The tool\'s later resolution changes nothing; its next firing opens a new incident.',
      params: IdParams, response: { 200: IncidentView, ...problems(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { tenantId, userId } = request.principal;
    return presentIncident(await resolveByHand(db, dialect, tenantId, request.params.id, userId, clock()));
  });
}
