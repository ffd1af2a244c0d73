import { createHash } from 'node:crypto';
import { policyFetch, type PolicyFetch } from '../../egress/fetch.js';
import type { EgressPolicy } from '../../egress/policy.js';
import type { TeamsBot } from './bot-settings.js';
import { BOT_CONNECTOR_SCOPE, type TeamsBotEndpoints } from './endpoints.js';

/*
 * The bot's calls to the Bot Connector (REST API v3), every one through the egress policy:
 * - its token: the OAuth 2.0 client-credentials grant at Microsoft Entra, https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-authentication ("Bot to connector");
 * - send, update: POST and PUT /v3/conversations/{conversationId}/activities[/{activityId}],
 *   https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference
 *   (Send to conversation answers a ResourceResponse {id}; Update activity);
 * - a member: GET /v3/conversations/{conversationId}/members/{userId}, which in Teams carries the
 *   person's email and userPrincipalName, https://learn.microsoft.com/en-us/microsoftteams/platform/bots/how-to/get-teams-context ("Get single member details").
 */

/** A refusal or an unreachable connector, its message free of the bot's password and token. */
export class ConnectorError extends Error {
  constructor(message: string, readonly status: number | null, readonly retryable: boolean) {
    super(message);
  }
}

export interface TeamsMember {
  id: string;
  name?: string;
  email?: string;
  userPrincipalName?: string;
}

interface CachedToken {
  token: string;
  until: number;
}

/** A token is asked for again this long before it expires. */
const TOKEN_MARGIN_MS = 5 * 60_000;
const CARD = 'application/vnd.microsoft.card.adaptive';

export class BotConnector {
  private readonly fetch: PolicyFetch;
  private readonly tokens = new Map<string, CachedToken>();

  constructor(egress: EgressPolicy, private readonly endpoints: TeamsBotEndpoints, private readonly timeoutMs: number) {
    this.fetch = policyFetch(egress);
  }

  /** Posts a card to the bot's conversation; returns the new activity's id. */
  async postCard(bot: TeamsBot, card: Record<string, unknown>): Promise<string> {
    const answer = await this.call(bot, 'POST', activitiesUrl(bot.serviceUrl, bot.conversationId), { type: 'message', attachments: [{ contentType: CARD, content: card }] });
    const id = (answer as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || id === '') throw new ConnectorError(`${host(bot.serviceUrl)} accepted the card but answered no activity id`, null, false);
    return id;
  }

  /** Replaces the card of an activity the bot posted. */
  async updateCard(bot: TeamsBot, ref: { serviceUrl: string; conversationId: string; activityId: string }, card: Record<string, unknown>): Promise<void> {
    const url = `${activitiesUrl(ref.serviceUrl, ref.conversationId)}/${encodeURIComponent(ref.activityId)}`;
    await this.call(bot, 'PUT', url, { type: 'message', id: ref.activityId, attachments: [{ contentType: CARD, content: card }] });
  }

  /** The conversation member who clicked, with the e-mail Teams knows them by; null when the connector knows no such member. */
  async member(bot: TeamsBot, serviceUrl: string, conversationId: string, userId: string): Promise<TeamsMember | null> {
    const url = `${base(serviceUrl)}/v3/conversations/${encodeURIComponent(conversationId)}/members/${encodeURIComponent(userId)}`;
    try {
      return (await this.call(bot, 'GET', url)) as TeamsMember;
    } catch (error) {
      if (error instanceof ConnectorError && error.status === 404) return null;
      throw error;
    }
  }

  private async call(bot: TeamsBot, method: string, url: string, body?: unknown): Promise<unknown> {
    const token = await this.token(bot);
    const secrets = [bot.appPassword, token];
    const response = await this.send(url, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }, secrets);
    const text = await response.text();
    if (response.status === 401) this.tokens.delete(tokenKey(this.endpoints, bot));
    if (!response.ok) throw refusal(url, response.status, text, secrets);
    return text ? (JSON.parse(text) as unknown) : null;
  }

  /** The bot's access token, from the client-credentials grant; kept until shortly before it expires. */
  private async token(bot: TeamsBot): Promise<string> {
    const key = tokenKey(this.endpoints, bot);
    const cached = this.tokens.get(key);
    if (cached && cached.until > Date.now()) return cached.token;
    const url = `${this.endpoints.loginUrl.replace(/\/+$/, '')}/${encodeURIComponent(bot.tenantId ?? 'botframework.com')}/oauth2/v2.0/token`;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: bot.appId, client_secret: bot.appPassword, scope: BOT_CONNECTOR_SCOPE });
    const response = await this.send(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() }, [bot.appPassword]);
    const text = await response.text();
    if (!response.ok) {
      const refused = refusal(url, response.status, text, [bot.appPassword]);
      throw new ConnectorError(`the bot's token was refused: ${refused.message}; check the app id, password and tenant of the channel's bot`, refused.status, refused.retryable);
    }
    const answer = JSON.parse(text) as { access_token?: string; expires_in?: number };
    if (!answer.access_token) throw new ConnectorError(`${host(url)} answered no access_token`, null, true);
    this.tokens.set(key, { token: answer.access_token, until: Date.now() + (answer.expires_in ?? 3600) * 1000 - TOKEN_MARGIN_MS });
    return answer.access_token;
  }

  private async send(url: string, init: { method: string; headers: Record<string, string>; body?: string }, secrets: string[]): Promise<Response> {
    try {
      return await this.fetch(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new ConnectorError(redact(`could not reach ${host(url)}: ${(error as Error).message}`, secrets), null, true);
    }
  }
}

function tokenKey(endpoints: TeamsBotEndpoints, bot: TeamsBot): string {
  // The password is part of the key (hashed): a channel given a new password gets a new token.
  return `${endpoints.loginUrl}|${bot.tenantId ?? ''}|${bot.appId}|${createHash('sha256').update(bot.appPassword).digest('hex')}`;
}

function refusal(url: string, status: number, text: string, secrets: readonly string[]): ConnectorError {
  const excerpt = text ? `: ${JSON.stringify(redact(text, secrets))}` : '';
  return new ConnectorError(`${host(url)} answered ${status}${excerpt}`, status, status === 408 || status === 429 || status >= 500);
}

function base(serviceUrl: string): string {
  return serviceUrl.replace(/\/+$/, '');
}

function activitiesUrl(serviceUrl: string, conversationId: string): string {
  return `${base(serviceUrl)}/v3/conversations/${encodeURIComponent(conversationId)}/activities`;
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the connector';
  }
}

const EXCERPT_CHARS = 200;

/**
 * The bot's password and token replaced in a text from a service, cut short (as senders/result.ts
 * scrub does for the senders; not imported, so that senders may use this folder).
 */
function redact(text: string, secrets: readonly string[]): string {
  let safe = text;
  for (const secret of secrets) if (secret.length >= 4) safe = safe.split(secret).join('[secret]');
  safe = safe.replace(/\s+/g, ' ').trim();
  return safe.length > EXCERPT_CHARS ? `${safe.slice(0, EXCERPT_CHARS)}…` : safe;
}
