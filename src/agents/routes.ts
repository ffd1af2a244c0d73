import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { enrolHost } from '../hosts/repository.js';
import type { Metrics } from '../metrics/registry.js';
import type { Database } from '../store/schema.js';
import type { CallerAccess, KeyDirectory } from '../tenants/directory.js';
import { missingScopeMessage, newKeyAdvice } from '../tenants/scopes.js';
import { API_KEY_PATTERN } from '../identity/secrets.js';
import { HOSTNAME_PATTERN } from './protocol.js';

const Enrolment = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 253, pattern: HOSTNAME_PATTERN }),
    tags: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:/=-]+$' }), { maxItems: 50 }),
    os: Type.String({ maxLength: 200 }),
    arch: Type.String({ maxLength: 50 }),
    version: Type.String({ maxLength: 50 }),
    replace: Type.Optional(Type.Boolean({
      description: 'take over an existing host of this name (pitcrew agent --replace): its previous agent\'s credential stops working; recorded in the host\'s history',
    })),
  },
  { additionalProperties: false },
);

interface AgentRouteDeps {
  db: Kysely<Database>;
  directory: KeyDirectory;
  metrics: Metrics;
}

/** Agent enrolment: an API key with the enrol scope buys a per-agent credential, used from then on. */
export function registerAgentRoutes(app: Api, deps: AgentRouteDeps): void {
  app.post('/agents/enrol', {
    schema: {
      tags: ['agents'],
      summary: 'Enrol an agent with a tenant API key that has the enrol scope (Authorization: Bearer <api key>); returns its own credential',
      security: [{ apiKey: [] }],
      body: Enrolment,
      response: {
        201: Type.Object({ hostId: Type.String(), tenantId: Type.String(), token: Type.String({ description: 'the agent credential, shown once' }) }),
        ...problems(400, 401, 403, 409, 429),
      },
    },
    // Before the body is read, as for webhooks: a refused caller costs no parsing.
    onRequest: async (request) => {
      request.caller = await admitAgent(deps, request.headers.authorization, request.ip);
    },
  }, async (request, reply) => {
    const { replace = false, ...facts } = request.body;
    const by = { keyId: request.caller.keyId, keyName: request.caller.keyName, sourceIp: request.ip };
    const { host, token } = await enrolHost(deps.db, request.caller.tenantId, facts, by, { replace });
    request.log.info({ hostId: host.id, hostname: host.hostname, replace, keyId: by.keyId, sourceIp: by.sourceIp }, replace ? 'agent enrolled, replacing the host\'s previous agent' : 'agent enrolled');
    return reply.code(201).send({ hostId: host.id, tenantId: host.tenant_id, token });
  });
}

/** The key, its enrol scope, the tenant's agent allowlist and its throttle, in that order. */
async function admitAgent({ directory, metrics }: AgentRouteDeps, authorization: string | undefined, ip: string): Promise<CallerAccess> {
  const apiKey = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const caller = API_KEY_PATTERN.test(apiKey) ? await directory.resolve(apiKey) : undefined;
  if (!caller) {
    throw new PitcrewError('PITCREW_ERR_INVALID_API_KEY', `the API key is unknown or revoked; ${newKeyAdvice('enrol', 'start the agent with it: npx pitcrew agent --api-key <key>')}`);
  }
  if (!caller.scopes.includes('enrol')) throw new PitcrewError('PITCREW_ERR_KEY_SCOPE', missingScopeMessage('enrol', caller.keyName));
  if (!caller.allowsAgent(ip)) {
    throw new PitcrewError('PITCREW_ERR_IP_NOT_ALLOWED', `agents may not enrol from ${ip}: it is not on this tenant's agent allowlist; add the address to agentAllowlist with PATCH /api/v1/tenant (or on the settings page)`);
  }
  const take = caller.bucket.take();
  if (!take.ok) {
    metrics.throttled.inc({ tenant: caller.tenantId });
    throw new PitcrewError('PITCREW_ERR_THROTTLED', `this tenant sends more calls than its throttle allows; retry the enrolment after ${take.retryAfterSeconds} s or raise the throttle with PATCH /api/v1/tenant`, {
      headers: { 'Retry-After': String(take.retryAfterSeconds) },
    });
  }
  return caller;
}
