import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { problems } from '../http/schemas.js';
import type { Api, AppContext } from '../http/types.js';
import { enrolHost } from '../hosts/repository.js';
import { API_KEY_PATTERN } from '../tenants/secrets.js';

const Enrolment = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9_.:-]+$' }),
    tags: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:/=-]+$' }), { maxItems: 50 }),
    os: Type.String({ maxLength: 200 }),
    arch: Type.String({ maxLength: 50 }),
    version: Type.String({ maxLength: 50 }),
  },
  { additionalProperties: false },
);

/** Agent enrolment: the tenant API key buys a per-agent credential, used from then on. */
export function registerAgentRoutes(app: Api, ctx: AppContext): void {
  app.post('/agents/enrol', {
    schema: {
      tags: ['agents'],
      summary: 'Enrol an agent with the tenant API key (Authorization: Bearer <api key>); returns its own credential',
      security: [{ apiKey: [] }],
      body: Enrolment,
      response: {
        201: Type.Object({ hostId: Type.String(), tenantId: Type.String(), token: Type.String({ description: 'the agent credential, shown once' }) }),
        ...problems(400, 401),
      },
    },
  }, async (request, reply) => {
    const apiKey = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const caller = API_KEY_PATTERN.test(apiKey) ? await ctx.directory.resolve(apiKey) : undefined;
    if (!caller) {
      throw new PitcrewError('PITCREW_ERR_INVALID_API_KEY', 'enrol with a current tenant API key: start the agent with PITCREW_API_KEY set to it (GET /api/v1/api-keys lists them)');
    }
    const { host, token } = await enrolHost(ctx.store.db, caller.tenantId, request.body);
    request.log.info({ hostId: host.id, hostname: host.hostname }, 'agent enrolled');
    return reply.code(201).send({ hostId: host.id, tenantId: host.tenant_id, token });
  });
}
