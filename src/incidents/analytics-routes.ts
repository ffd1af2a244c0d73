import type { Kysely } from 'kysely';
import { problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { access } from '../identity/access.js';
import type { Dialect } from '../store/database.js';
import type { Database } from '../store/schema.js';
import { periodOf, periodView } from './analytics.js';
import { readAutomationCandidates, readIncidentAnalytics, type AnalyticsQuery as Reads } from './analytics-reads.js';
import { AnalyticsQuery, AnalyticsView, CandidatesQuery, CandidatesView } from './analytics-schema.js';

const tags = ['incidents'];
const DEFAULT_LIST = 10;

export interface IncidentAnalyticsRouteDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock?: () => number;
}

/** GET /incidents/analytics and GET /incidents/candidates (docs/incidents.md): reads, for any member of the tenant. */
export function registerIncidentAnalyticsRoutes(app: Api, { db, dialect, clock = Date.now }: IncidentAnalyticsRouteDeps): void {
  const readsOf = (query: AnalyticsQuery): Reads => ({
    period: periodOf(query, clock()),
    limit: query.limit ?? DEFAULT_LIST,
    filter: { integrationId: query.integrationId, hostname: query.hostname, alarmName: query.alarmName, severity: query.severity },
  });

  app.get('/incidents/analytics', {
    schema: {
      tags, ...access('viewer'),
      summary: 'The resolved incidents of a period of UTC days, in numbers: most frequent and slowest alarms (mean, p50, p90, max), MTTR by day, the share resolved by automation, the hosts with the most, and each alert rule before and after it was created',
      querystring: AnalyticsQuery, response: { 200: AnalyticsView, ...problems(400, 401, 403) },
    },
  }, async (request) => readIncidentAnalytics(db, dialect, request.principal.tenantId, readsOf(request.query)));

  app.get('/incidents/candidates', {
    schema: {
      tags, ...access('viewer'),
      summary: "Alarms worth automating: those of an integration that fired often in the period, took long to resolve and that no enabled rule acts on, the most incident time first, each with why and what the rule wizard fills in",
      querystring: CandidatesQuery, response: { 200: CandidatesView, ...problems(400, 401, 403) },
    },
  }, async (request) => {
    const query = readsOf(request.query);
    const items = await readAutomationCandidates(db, dialect, request.principal.tenantId, query, {
      minCount: request.query.minCount ?? 3,
      minMeanSeconds: request.query.minMeanSeconds ?? 300,
    });
    return { period: periodView(query.period), items };
  });
}
