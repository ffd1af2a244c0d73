import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Kysely } from 'kysely';
import type { Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { ApiKeyRow, Database, TenantRow } from '../store/schema.js';
import { allowlistErrors } from './allowlist.js';
import type { KeyDirectory } from './directory.js';
import {
  getTenant, incidentSettingsOf, issueApiKey, listApiKeys, narrowApiKeyScopes, parseAgentAllowlist, parseAllowlist, parseThrottle, revokeAndReplaceApiKey, updateTenantSettings,
} from './repository.js';
import { API_KEY_SCOPES, DEFAULT_SCOPES, parseScopes } from './scopes.js';

const Throttle = Type.Object(
  { ratePerSecond: Type.Integer({ minimum: 1, maximum: 10_000_000 }), burst: Type.Integer({ minimum: 1, maximum: 10_000_000 }) },
  { additionalProperties: false },
);
const IncidentSettingsView = Type.Object({
  automationWindowSeconds: Type.Integer({ minimum: 60, maximum: 604_800, description: 'an incident resolved within this long after a pitcrew fix of it ended is resolved by automation (default 3600)' }),
  quietSeconds: Type.Integer({ minimum: 60, maximum: 604_800, description: 'an incident a webhook call opened closes after this long without another call of its alarm (default 1800)' }),
}, { additionalProperties: false });
const TenantView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  ipAllowlist: Type.Array(Type.String()),
  agentAllowlist: Type.Array(Type.String(), { description: 'CIDRs agents may enrol from; empty: every address' }),
  throttle: Type.Union([Throttle, Type.Null()], { description: 'null: the service defaults' }),
  createdAt: Type.String({ format: 'date-time' }),
  incidents: IncidentSettingsView,
  retentionDays: Type.Union([Type.Integer(), Type.Null()], {
    description: "days this service keeps events, executions and notifications before deleting them (the operator's PITCREW_RETENTION_DAYS); null: kept for ever",
  }),
});
const TenantPatch = Type.Object(
  {
    ipAllowlist: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 500, description: 'IPv4/IPv6 CIDRs webhook calls may come from; empty allows every address' })),
    agentAllowlist: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 500, description: 'IPv4/IPv6 CIDRs agents may enrol from; empty allows every address' })),
    throttle: Type.Optional(Type.Union([Throttle, Type.Null()])),
    incidents: Type.Optional(Type.Partial(IncidentSettingsView, { additionalProperties: false, minProperties: 1 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
const Scopes = Type.Array(Type.Enum([...API_KEY_SCOPES]), {
  minItems: 1, maxItems: API_KEY_SCOPES.length, uniqueItems: true,
  description: 'webhook: fires webhook triggers (the key in URLs); enrol: enrols agents',
});
const ApiKeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Scopes,
  hint: Type.String({ description: 'last 4 characters of the key' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  replacedBy: Type.Union([Type.String(), Type.Null()]),
});
const IssuedKeyView = Type.Object({ ...ApiKeyView.properties, apiKey: Type.String({ description: 'shown once; store it now' }) });

/** retentionDays: PITCREW_RETENTION_DAYS, shown with the tenant's settings. */
export function registerTenantRoutes(app: Api, { db, directory, retentionDays }: { db: Kysely<Database>; directory: KeyDirectory; retentionDays: number | undefined }): void {

  app.get('/tenant', {
    schema: { tags: ['tenant'], ...access('viewer'), summary: 'The tenant of the token', response: { 200: TenantView, ...problems(401) } },
  }, async (request) => presentTenant(await getTenant(db, request.principal.tenantId), retentionDays));

  app.patch('/tenant', {
    schema: {
      tags: ['tenant'], ...access('admin'), summary: "Change the IP allowlist or throttle of ingress, the agent allowlist of enrolment, or the incidents' automation window and quiet period",
      body: TenantPatch, response: { 200: TenantView, ...problems(400, 401) },
    },
  }, async (request) => {
    const fieldErrors = [...allowlistErrors(request.body.ipAllowlist ?? []), ...allowlistErrors(request.body.agentAllowlist ?? [], 'agentAllowlist')];
    if (fieldErrors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', fieldErrors[0]!.message, { fieldErrors });
    const ipAllowlist = request.body.ipAllowlist?.map((cidr) => cidr.trim());
    const agentAllowlist = request.body.agentAllowlist?.map((cidr) => cidr.trim());
    const row = await updateTenantSettings(db, request.principal.tenantId, { ipAllowlist, agentAllowlist, throttle: request.body.throttle, incidents: request.body.incidents });
    directory.tenantChanged(row.id);
    return presentTenant(row, retentionDays);
  });

  app.get('/api-keys', {
    schema: {
      tags: ['api-keys'], ...access('viewer'), summary: "The tenant's API keys (never the keys themselves)",
      querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(ApiKeyView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await listApiKeys(db, request.principal.tenantId, page), page, presentKey);
  });

  app.post('/api-keys', {
    schema: {
      tags: ['api-keys'], ...access('admin'), summary: 'Issue a new API key (shown once); scopes default to ["webhook"]',
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), scopes: Type.Optional(Scopes) }, { additionalProperties: false }),
      response: { 201: IssuedKeyView, ...problems(400, 401) },
    },
  }, async (request, reply) => {
    const issued = await issueApiKey(db, request.principal.tenantId, request.body.name, request.body.scopes ?? DEFAULT_SCOPES);
    return reply.code(201).send({ ...presentKey(issued.row), apiKey: issued.apiKey });
  });

  app.patch('/api-keys/:id', {
    schema: {
      tags: ['api-keys'], ...access('admin'),
      summary: 'Narrow what a key may do: the scopes it keeps (a scope is never added; issue a new key for that)',
      params: IdParams,
      body: Type.Object({ scopes: Scopes }, { additionalProperties: false }),
      response: { 200: ApiKeyView, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    const row = await narrowApiKeyScopes(db, request.principal.tenantId, request.params.id, request.body.scopes);
    directory.tenantChanged(request.principal.tenantId);
    return presentKey(row);
  });

  app.post('/api-keys/:id/revoke', {
    schema: {
      tags: ['api-keys'], ...access('admin'),
      summary: 'Revoke a key and issue its replacement, with the same scopes: the old key fails from the next request on',
      params: IdParams, response: { 200: IssuedKeyView, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    const issued = await revokeAndReplaceApiKey(db, request.principal.tenantId, request.params.id);
    directory.tenantChanged(request.principal.tenantId);
    return { ...presentKey(issued.row), apiKey: issued.apiKey };
  });
}

function presentTenant(row: TenantRow, retentionDays: number | undefined) {
  return {
    id: row.id, name: row.name, ipAllowlist: parseAllowlist(row), agentAllowlist: parseAgentAllowlist(row), throttle: parseThrottle(row),
    createdAt: iso(row.created_at), incidents: incidentSettingsOf(row), retentionDays: retentionDays ?? null,
  };
}

function presentKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: parseScopes(row.scopes),
    hint: row.hint,
    createdAt: iso(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : iso(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : iso(row.revoked_at),
    replacedBy: row.replaced_by,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
