import { Type, type Static } from 'typebox';
import { PageQuery } from '../http/schemas.js';
import { AlertView } from '../integrations/alert-log.js';
import { EventView } from '../events/presenter.js';
import { ExecutionView } from '../executions/presenter.js';
import { LISTED_EXECUTIONS } from './book.js';

const Time = Type.String({ format: 'date-time' });
const OrNull = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) => Type.Union([schema, Type.Null()], description ? { description } : {});

export const INCIDENT_STATES = ['open', 'resolved'] as const;
export const RESOLVERS = ['tool', 'automation', 'manual'] as const;

/** DESIGN.md §7 "Incidents": one occurrence of an alarm on a host (docs/incidents.md). */
export const IncidentView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: Type.Enum([...INCIDENT_STATES]),
  alarmName: Type.String(),
  severity: OrNull(Type.String()),
  hostname: OrNull(Type.String(), 'the host the tool named; null when it named none'),
  integrationId: OrNull(Type.String({ format: 'uuid' }), 'the integration whose alerts or import made it; null for an incident a webhook call opened'),
  fingerprint: Type.String({ description: 'the alarm on its host as the tool knows it (its incident key: docs/incidents.md, "Keys per tool")' }),
  openedAt: Time,
  resolvedAt: OrNull(Time),
  resolutionSeconds: OrNull(Type.Number({ minimum: 0 }), 'resolvedAt − openedAt'),
  occurrences: Type.Integer({ minimum: 1, description: 'its firings: the first, and each re-firing while open (a re-sent notification counts once)' }),
  resolvedBy: OrNull(Type.Enum([...RESOLVERS]), 'tool: the tool said resolved (or a webhook alarm went quiet); automation: resolved within the tenant\'s window after a pitcrew fix of it; manual: a person'),
  resolvedByUser: OrNull(Type.String(), 'the user who resolved it by hand'),
  lastSeenAt: Type.String({ format: 'date-time', description: 'when pitcrew last heard of it' }),
  ruleIds: Type.Array(Type.String({ format: 'uuid' }), { description: 'the rules its alerts or calls raised' }),
  executionIds: Type.Array(Type.String({ format: 'uuid' }), { maxItems: LISTED_EXECUTIONS, description: `the first ${LISTED_EXECUTIONS} executions of its events` }),
  executionCount: Type.Integer({ minimum: 0 }),
});
export type IncidentView = Static<typeof IncidentView>;

/** What an incident's page shows: the incident, and the newest of its alerts, events and executions. */
export const IncidentDetail = Type.Object({
  ...IncidentView.properties,
  alerts: Type.Array(AlertView, { description: `its integration's alerts that belong to it, newest first (the ${LISTED_EXECUTIONS} newest the alert log still keeps)` }),
  alertCount: Type.Integer({ minimum: 0, description: 'every alert it has had, those retention has deleted since included' }),
  events: Type.Array(EventView, { description: `the events it raised, newest first (the ${LISTED_EXECUTIONS} newest still kept)` }),
  eventCount: Type.Integer({ minimum: 0, description: 'every event it has had, those retention has deleted since included' }),
  executions: Type.Array(ExecutionView, { description: `newest first, the ${LISTED_EXECUTIONS} newest of the executions of the events listed and of the first ${LISTED_EXECUTIONS} it had (executionIds)` }),
});
export type IncidentDetail = Static<typeof IncidentDetail>;

export const IncidentQuery = Type.Object({
  ...PageQuery,
  state: Type.Optional(Type.Enum([...INCIDENT_STATES])),
  integrationId: Type.Optional(Type.String({ format: 'uuid' })),
  hostname: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'the host, without case' })),
  alarmName: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'the alarm name, exactly' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'opened at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'opened at or before' })),
}, { additionalProperties: false });
export type IncidentQuery = Static<typeof IncidentQuery>;
