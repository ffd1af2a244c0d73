import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { PitcrewError } from '../../errors/catalogue.js';
import { IdParams, problems } from '../../http/schemas.js';
import { access } from '../../identity/access.js';
import type { Api } from '../../http/types.js';
import type { SecretBox } from '../../identity/secret-box.js';
import type { Database, IntegrationRow } from '../../store/schema.js';
import { getIntegration, openSecret, updateIntegration } from '../repository.js';
import { issueToken, maskedAddress, MonascaApiError, MonascaClient, pitcrewAddress, type FetchLike, type KeystoneCredentials } from './keystone.js';

const tags = ['integrations'];
const Text = (description: string) => Type.String({ minLength: 1, maxLength: 500, description });

const KeystoneLogin = Type.Object({
  version: Type.Enum(['v3', 'v2.0'], { description: 'the Keystone API: v3 (POST /v3/auth/tokens) or v2.0 (POST /v2.0/tokens)' }),
  identityUrl: Text("Keystone's root, e.g. http://keystone:5000"),
  username: Text('the OpenStack user'),
  password: Type.String({ minLength: 1, maxLength: 1000, description: 'used once to get the token, never stored' }),
  project: Text('the project (v2.0: tenant) whose alarm definitions pitcrew reads'),
  userDomainName: Type.Optional(Text('v3: the user’s domain (default "Default")')),
  projectDomainName: Type.Optional(Text('v3: the project’s domain (default "Default")')),
}, { additionalProperties: false });

const Coverage = Type.Object({
  notificationMethods: Type.Array(Type.Object({
    id: Type.String(), name: Type.String(), address: Type.String({ description: 'with the API key masked as <api_key>' }),
  }), { description: "the tenant's Webhook notifications that point at this integration" }),
  alarmDefinitions: Type.Array(Type.Object({
    id: Type.String(), name: Type.String(), severity: Type.Union([Type.String(), Type.Null()]), actionsEnabled: Type.Boolean(),
    onAlarm: Type.Boolean({ description: 'notifies pitcrew when it goes to ALARM: rules act on it' }),
    onOk: Type.Boolean({ description: 'notifies pitcrew when it goes back to OK (rules with on: resolved or both)' }),
    onUndetermined: Type.Boolean(),
  })),
  covered: Type.Integer({ minimum: 0, description: 'how many alarm definitions notify pitcrew on ALARM' }),
});

/**
 * The Monasca side of a `monasca` integration (docs/integrations/monasca.md): a token from
 * Keystone, kept as the integration's secret, and which alarm definitions notify pitcrew, read from
 * the Monasca API with that token. Calls go out under the egress policy (`fetch`).
 */
export function registerMonascaRoutes(app: Api, { db, box, fetch }: { db: Kysely<Database>; box: SecretBox; fetch: FetchLike }): void {
  app.post('/integrations/:id/monasca/token', {
    schema: {
      tags, ...access('admin'),
      summary: 'Get a token from Keystone with these credentials and keep it as the integration’s secret; the password is used once and not stored',
      params: IdParams, body: KeystoneLogin,
      response: { 200: Type.Object({ expiresAt: Type.Union([Type.String(), Type.Null()], { description: 'when Keystone says the token expires' }) }), ...problems(400, 401, 404, 502, 503) },
    },
  }, async (request) => {
    const integration = await monascaIntegration(db, request.principal.tenantId, request.params.id);
    const token = await monascaCall(() => issueToken(credentials(request.body), { fetch }));
    await updateIntegration(db, box, integration, { secret: token.id });
    return { expiresAt: token.expiresAt ?? null };
  });

  app.get('/integrations/:id/monasca/alarm-definitions', {
    schema: {
      tags, ...access('viewer'),
      summary: 'The alarm definitions of the token’s project, and which of them notify this integration (read from the Monasca API with the token)',
      params: IdParams, response: { 200: Coverage, ...problems(400, 401, 404, 502, 503) },
    },
  }, async (request) => {
    const integration = await monascaIntegration(db, request.principal.tenantId, request.params.id);
    const monascaUrl = (JSON.parse(integration.config) as { monascaUrl?: string }).monascaUrl;
    const token = openSecret(box, integration);
    if (!monascaUrl || !token) {
      const missing = !monascaUrl ? 'config.monascaUrl (the Monasca API, e.g. http://monasca:8070)' : 'a token (POST …/monasca/token, or the token itself as secret)';
      throw new PitcrewError('PITCREW_ERR_VALIDATION', `the integration needs ${missing} before pitcrew can read its alarm definitions`);
    }
    const { methods, definitions } = await monascaCall(() => new MonascaClient({ monascaUrl, token, fetch }).coverage(pitcrewAddress(integration.id)));
    return {
      notificationMethods: methods.map((m) => ({ id: m.id, name: m.name, address: maskedAddress(m.address) })),
      alarmDefinitions: definitions.map(({ definition: d, onAlarm, onOk, onUndetermined }) => ({
        id: d.id, name: d.name, severity: d.severity ?? null, actionsEnabled: d.actionsEnabled, onAlarm, onOk, onUndetermined,
      })),
      covered: definitions.filter((d) => d.onAlarm).length,
    };
  });
}

async function monascaIntegration(db: Kysely<Database>, tenantId: string, id: string): Promise<IntegrationRow> {
  const integration = await getIntegration(db, tenantId, id);
  if (integration.type !== 'monasca') throw new PitcrewError('PITCREW_ERR_VALIDATION', `integration ${id} is of type ${integration.type}, not monasca`);
  return integration;
}

function credentials(body: Static<typeof KeystoneLogin>): KeystoneCredentials {
  const { version, identityUrl, username, password, project } = body;
  if (version === 'v2.0') return { version, identityUrl, username, password, tenantName: project };
  return { version, identityUrl, username, password, projectName: project, userDomainName: body.userDomainName, projectDomainName: body.projectDomainName };
}

/** A Keystone or Monasca failure as an answer a person can act on: unreachable is 503, anything else the tool said is 502. */
async function monascaCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof MonascaApiError)) throw error;
    if (error.kind === 'unreachable') throw new PitcrewError('PITCREW_ERR_TOOL_UNAVAILABLE', error.message, { headers: { 'Retry-After': '5' } });
    throw new PitcrewError('PITCREW_ERR_TOOL_REFUSED', error.message);
  }
}
