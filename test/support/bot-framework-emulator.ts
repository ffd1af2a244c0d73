import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';

/**
 * An emulator of the parts of Microsoft's Bot Framework a Teams bot meets, for tests of pitcrew's
 * approvals from Teams. Built from Microsoft's documentation:
 *
 * - OpenID metadata and keys (https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-authentication,
 *   "Connector to bot"): GET /v1/.well-known/openidconfiguration answers {issuer, jwks_uri, …};
 *   jwks_uri lists RSA keys {kty, use: sig, kid, x5t, n, e, endorsements: [channel ids]}.
 * - The connector's token to a bot: an RS256 JWT whose header names the key (kid), with iss
 *   https://api.botframework.com, aud the bot's app id, nbf/exp, and the serviceurl claim
 *   (lower case, as the real tokens and botbuilder's AuthenticationConstants.ServiceUrlClaim
 *   have it), sent as `Authorization: Bearer`. signActivity() signs as the connector does, or
 *   as told otherwise (another key, expired, another audience) for the refusals.
 * - The bot's token (same page, "Bot to connector"): POST {login}/{tenant}/oauth2/v2.0/token,
 *   form grant_type=client_credentials, client_id, client_secret, scope=https://api.botframework.com/.default;
 *   tenant botframework.com for a multi-tenant bot, the bot's own for a single-tenant one. Answers
 *   {token_type: Bearer, expires_in, ext_expires_in, access_token}; a wrong secret 401
 *   {error: invalid_client, error_description: "AADSTS7000215: Invalid client secret provided. …"}.
 * - The connector (https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference):
 *   POST {serviceUrl}v3/conversations/{conversationId}/activities answers 201 ResourceResponse {id};
 *   PUT …/activities/{activityId} replaces an activity (200 {id}); GET …/members/{userId} answers the
 *   Teams member {id, name, aadObjectId, email, userPrincipalName, tenantId, userRole}
 *   (https://learn.microsoft.com/en-us/microsoftteams/platform/bots/how-to/get-teams-context,
 *   "Get single member details"), 404 for one not in the conversation. Every connector call needs
 *   a bot token this emulator issued, else 401 {"message": "Authorization has been denied for this request."}.
 * - The invoke a click sends (https://learn.microsoft.com/en-us/microsoftteams/platform/task-modules-and-cards/cards/universal-actions-for-adaptive-cards/work-with-universal-actions-for-adaptive-cards):
 *   type invoke, name adaptiveCard/action, value {action: {type: Action.Execute, verb, data}, trigger: manual}.
 *
 * The emulator's own choices: one conversation per registered bot; access tokens are opaque.
 */

export interface EmulatedBot {
  appId: string;
  appPassword: string;
  tenantId: string | null;
  conversationId: string;
}

export interface TeamsMemberRecord {
  id: string;
  name: string;
  email: string;
}

export interface PostedActivity {
  id: string;
  conversationId: string;
  appId: string;
  body: { type: string; attachments: Array<{ contentType: string; content: Record<string, unknown> }> };
  /** Each PUT that replaced it, in order. */
  updates: Array<PostedActivity['body']>;
}

export interface BotFrameworkEmulator {
  /** The base URL: metadata at /v1/.well-known/openidconfiguration, the login service at /, the connector at /amer/. */
  url: string;
  metadataUrl: string;
  loginUrl: string;
  serviceUrl: string;
  register(bot: Omit<EmulatedBot, 'conversationId'>): EmulatedBot;
  addMember(member: TeamsMemberRecord): void;
  activities: PostedActivity[];
  tokenRequests: number;
  /** A token as the connector signs one for `appId`; overrides make the bad ones. */
  signActivity(appId: string, overrides?: { expiresInSeconds?: number; audience?: string; serviceUrl?: string; foreignKey?: boolean }): Promise<string>;
  /** The invoke a click on Action.Execute sends the bot. */
  invoke(bot: EmulatedBot, fromId: string, verb: string, data: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startBotFrameworkEmulator(): Promise<BotFrameworkEmulator> {
  const key = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const kid = randomBytes(12).toString('base64url');
  const jwk = { ...(await exportJWK(key.publicKey)), use: 'sig', kid, x5t: kid, endorsements: ['msteams', 'skype'] };
  const bots = new Map<string, EmulatedBot>();
  const accessTokens = new Map<string, string>();
  const members = new Map<string, TeamsMemberRecord>();
  const activities: PostedActivity[] = [];
  let url = '';
  const state = { tokenRequests: 0 };

  const server = http.createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (raw += chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify(body));
      };
      const path = (request.url ?? '').split('?')[0]!;
      if (request.method === 'GET' && path === '/v1/.well-known/openidconfiguration') {
        return answer(200, { issuer: 'https://api.botframework.com', authorization_endpoint: 'https://invalid.botframework.com', jwks_uri: `${url}/v1/.well-known/keys`, id_token_signing_alg_values_supported: ['RS256'], token_endpoint_auth_methods_supported: ['private_key_jwt'] });
      }
      if (request.method === 'GET' && path === '/v1/.well-known/keys') return answer(200, { keys: [jwk] });
      const tokenPath = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
      if (request.method === 'POST' && tokenPath) return token(decodeURIComponent(tokenPath[1]!), new URLSearchParams(raw), answer);
      const connector = /^\/amer\/v3\/conversations\/([^/]+)\/(activities|members)(?:\/([^/]+))?$/.exec(path);
      if (connector) return connectorCall(request, decodeURIComponent(connector[1]!), connector[2]!, connector[3] ? decodeURIComponent(connector[3]) : undefined, raw, answer);
      answer(404, { error: { code: 'NotFound', message: `no route ${request.method} ${path}` } });
    });
  });

  function token(tenant: string, form: URLSearchParams, answer: (status: number, body: unknown) => void): void {
    state.tokenRequests += 1;
    const bot = bots.get(form.get('client_id') ?? '');
    if (form.get('grant_type') !== 'client_credentials') return answer(400, { error: 'unsupported_grant_type', error_description: 'AADSTS70003: The app requested an unsupported grant type.' });
    if (form.get('scope') !== 'https://api.botframework.com/.default') return answer(400, { error: 'invalid_scope', error_description: 'AADSTS70011: The provided value for the input parameter scope is not valid.' });
    if (!bot) return answer(400, { error: 'unauthorized_client', error_description: `AADSTS700016: Application with identifier '${form.get('client_id')}' was not found in the directory.` });
    if (tenant !== (bot.tenantId ?? 'botframework.com')) return answer(400, { error: 'invalid_request', error_description: `AADSTS90002: Tenant '${tenant}' not found.` });
    if (form.get('client_secret') !== bot.appPassword) return answer(401, { error: 'invalid_client', error_description: `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${bot.appId}'.` });
    const accessToken = randomBytes(32).toString('base64url');
    accessTokens.set(accessToken, bot.appId);
    answer(200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: accessToken });
  }

  function connectorCall(request: http.IncomingMessage, conversationId: string, kind: string, itemId: string | undefined, raw: string, answer: (status: number, body: unknown) => void): void {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const appId = bearer ? accessTokens.get(bearer) : undefined;
    const bot = appId ? bots.get(appId) : undefined;
    if (!bot) return answer(401, { message: 'Authorization has been denied for this request.' });
    // A channel's thread id may carry the message it started from (`;messageid=…`), as a click's conversation.id does.
    if (bot.conversationId !== conversationId.split(';')[0]) return answer(403, { error: { code: 'BotNotInConversationRoster', message: 'The bot is not part of the conversation roster.' } });
    if (kind === 'members' && request.method === 'GET' && itemId) {
      const member = members.get(itemId);
      if (!member) return answer(404, { error: { code: 'MemberNotFoundInConversation', message: 'The member was not found in the conversation.' } });
      return answer(200, { id: member.id, name: member.name, aadObjectId: randomUUID(), givenName: member.name, email: member.email, userPrincipalName: member.email, tenantId: 'contoso-tenant', userRole: 'user' });
    }
    if (kind !== 'activities') return answer(405, { error: { code: 'BadArgument', message: 'method not allowed' } });
    const body = JSON.parse(raw) as PostedActivity['body'];
    if (body.type !== 'message' || !Array.isArray(body.attachments)) return answer(400, { error: { code: 'BadArgument', message: 'Activity type and attachments are required' } });
    if (request.method === 'POST' && !itemId) {
      const posted: PostedActivity = { id: `1:${randomBytes(8).toString('hex')}`, conversationId, appId: bot.appId, body, updates: [] };
      activities.push(posted);
      return answer(201, { id: posted.id });
    }
    if (request.method === 'PUT' && itemId) {
      const posted = activities.find((a) => a.id === itemId && a.conversationId === conversationId);
      if (!posted) return answer(404, { error: { code: 'ActivityNotFoundInConversation', message: 'The activity was not found.' } });
      posted.updates.push(body);
      return answer(200, { id: posted.id });
    }
    answer(405, { error: { code: 'BadArgument', message: 'method not allowed' } });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serviceUrl = `${url}/amer/`;

  const sign = (signingKey: CryptoKey, claims: Record<string, unknown>, audience: string, expiresInSeconds: number) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, x5t: kid, typ: 'JWT' })
      .setIssuer('https://api.botframework.com').setAudience(audience).setNotBefore(now - 300).setExpirationTime(now + expiresInSeconds).sign(signingKey);
  };

  return {
    url,
    metadataUrl: `${url}/v1/.well-known/openidconfiguration`,
    loginUrl: url,
    serviceUrl,
    register: (bot) => {
      const registered = { ...bot, conversationId: `19:${randomBytes(10).toString('hex')}@thread.tacv2` };
      bots.set(bot.appId, registered);
      return registered;
    },
    addMember: (member) => members.set(member.id, member),
    activities,
    get tokenRequests() {
      return state.tokenRequests;
    },
    signActivity: (appId, overrides = {}) =>
      sign(overrides.foreignKey ? foreign.privateKey : key.privateKey, { serviceurl: overrides.serviceUrl ?? serviceUrl }, overrides.audience ?? appId, overrides.expiresInSeconds ?? 3600),
    invoke: (bot, fromId, verb, data) => ({
      type: 'invoke', name: 'adaptiveCard/action', id: `f:${randomBytes(8).toString('hex')}`, timestamp: new Date().toISOString(), localTimestamp: new Date().toISOString(),
      serviceUrl, channelId: 'msteams',
      from: { id: fromId, name: members.get(fromId)?.name ?? 'someone', aadObjectId: randomUUID() },
      conversation: { isGroup: true, conversationType: 'channel', tenantId: 'contoso-tenant', id: `${bot.conversationId};messageid=1` },
      recipient: { id: `28:${bot.appId}`, name: 'pitcrew' },
      entities: [{ locale: 'en-US', country: 'US', platform: 'Web', type: 'clientInfo' }],
      channelData: { channel: { id: bot.conversationId }, tenant: { id: 'contoso-tenant' }, source: { name: 'message' } },
      value: { action: { type: 'Action.Execute', verb, data }, trigger: 'manual' },
      locale: 'en-US',
    }),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
