import { Type } from 'typebox';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Kysely } from 'kysely';
import type { Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database, HostEnrolmentRow, HostRow } from '../store/schema.js';
import { isOutdated } from './agent-version.js';
import { countHosts, deleteHost, getHost, hostEnrolments, listHosts, updateHost, tagCounts } from './repository.js';

const Tag = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:/=-]+$' });

const HostFilterQuery = {
  tag: Type.Optional(Type.Array(Tag, { maxItems: 50, description: 'repeat for several: hosts carrying every one of them' })),
  hostname: Type.Optional(Type.String({ maxLength: 253 })),
};

export const HostView = Type.Object({
  id: Type.String(),
  hostname: Type.String(),
  tags: Type.Array(Type.String(), { description: 'effective: agentTags plus managedTags' }),
  agentTags: Type.Array(Type.String(), { description: "from the agent's --tags" }),
  managedTags: Type.Array(Type.String(), { description: 'set with PATCH /api/v1/hosts/{id}' }),
  status: Type.Enum(['online', 'offline']),
  lastSeenAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  enrolledAt: Type.String({ format: 'date-time' }),
  agentVersion: Type.String(),
  outdated: Type.Boolean({ description: "the agent is an older release than this service's: update it (GET /api/v1/agents/install gives the command); it keeps working meanwhile" }),
  os: Type.String(),
  arch: Type.String(),
  cloudInstanceId: Type.Union([Type.String(), Type.Null()], { description: 'its VM at its cloud, set with PATCH' }),
});

const EnrolmentView = Type.Object({
  id: Type.String(),
  kind: Type.Enum(['enrolled', 'replaced'], { description: 'enrolled: the host was new; replaced: an agent took over its name (--replace)' }),
  at: Type.String({ format: 'date-time' }),
  hostname: Type.String({ description: 'the name the agent enrolled with' }),
  apiKeyId: Type.String({ description: 'the API key it enrolled with' }),
  apiKeyName: Type.String({ description: "that key's name at the time" }),
  sourceIp: Type.String({ description: 'the address the enrolment came from' }),
  agentVersion: Type.String(),
  os: Type.String(),
  wasOnline: Type.Boolean({ description: "replaced: whether the previous agent was connected at the time" }),
});

export function registerHostRoutes(app: Api, db: Kysely<Database>): void {
  const tags = ['hosts'];

  app.get('/hosts', {
    schema: {
      tags, ...access('viewer'), summary: 'Hosts known through their agents',
      querystring: Type.Object({ ...PageQuery, ...HostFilterQuery }, { additionalProperties: false }),
      response: { 200: pageOf(HostView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const rows = await listHosts(db, request.principal.tenantId, { tags: request.query.tag, hostname: request.query.hostname }, page);
    return toPage(rows, page, presentHost);
  });

  app.get('/hosts/count', {
    schema: {
      tags, ...access('viewer'), summary: 'How many hosts match (e.g. the hosts a specific_tags target would run on), and how many are online',
      querystring: Type.Object(HostFilterQuery, { additionalProperties: false }),
      response: { 200: Type.Object({ count: Type.Integer(), online: Type.Integer() }), ...problems(400, 401) },
    },
  }, async (request) => countHosts(db, request.principal.tenantId, { tags: request.query.tag, hostname: request.query.hostname }));

  app.get('/hosts/tags', {
    schema: {
      tags, ...access('viewer'), summary: 'Every tag carried by a host, with how many hosts carry it',
      response: { 200: Type.Object({ items: Type.Array(Type.Object({ tag: Type.String(), hosts: Type.Integer() })) }), ...problems(401) },
    },
  }, async (request) => ({ items: await tagCounts(db, request.principal.tenantId) }));

  app.get('/hosts/:id', {
    schema: { tags, ...access('viewer'), summary: 'One host', params: IdParams, response: { 200: HostView, ...problems(400, 401, 404) } },
  }, async (request) => presentHost(await getHost(db, request.principal.tenantId, request.params.id)));

  app.get('/hosts/:id/history', {
    schema: {
      tags, ...access('viewer'), summary: "The host's enrolments, newest first: every agent that took its name, with which key and from where",
      params: IdParams, querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(EnrolmentView), ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await hostEnrolments(db, request.principal.tenantId, request.params.id, page), page, presentEnrolment);
  });

  app.patch('/hosts/:id', {
    schema: {
      tags, ...access('admin'), summary: "Set the host's tags managed in pitcrew (the agent's own --tags stay), or its cloud instance id",
      params: IdParams,
      body: Type.Object({
        tags: Type.Optional(Type.Array(Tag, { maxItems: 50, uniqueItems: true })),
        cloudInstanceId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_./:-]+$' }), Type.Null()], { description: "the host's VM at its cloud (an EC2 id i-…): a cloud action on an alert about this host acts on it; null forgets it" })),
      }, { additionalProperties: false, minProperties: 1 }),
      response: { 200: HostView, ...problems(400, 401, 404) },
    },
  }, async (request) => presentHost(await updateHost(db, request.principal.tenantId, request.params.id, request.body)));

  app.delete('/hosts/:id', {
    schema: {
      tags, ...access('admin'), summary: "Forget a host: its agent's credential stops working (its executions stay on record)",
      params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404) },
    },
  }, async (request, reply) => {
    await deleteHost(db, request.principal.tenantId, request.params.id);
    return reply.code(204).send(null);
  });
}

export function presentHost(row: HostRow) {
  return {
    id: row.id,
    hostname: row.hostname,
    tags: JSON.parse(row.tags) as string[],
    agentTags: JSON.parse(row.agent_tags) as string[],
    managedTags: JSON.parse(row.managed_tags) as string[],
    status: row.session_id ? ('online' as const) : ('offline' as const),
    lastSeenAt: row.last_seen_at === null ? null : new Date(row.last_seen_at).toISOString(),
    enrolledAt: new Date(row.enrolled_at).toISOString(),
    agentVersion: row.agent_version,
    outdated: isOutdated(row.agent_version),
    os: row.os,
    arch: row.arch,
    cloudInstanceId: row.cloud_instance_id,
  };
}

function presentEnrolment(row: HostEnrolmentRow) {
  return {
    id: row.id,
    kind: row.kind as 'enrolled' | 'replaced',
    at: new Date(row.at).toISOString(),
    hostname: row.hostname,
    apiKeyId: row.api_key_id,
    apiKeyName: row.api_key_name,
    sourceIp: row.source_ip,
    agentVersion: row.agent_version,
    os: row.os,
    wasOnline: row.was_online === 1,
  };
}
