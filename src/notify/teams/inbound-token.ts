import type { JSONWebKeySet, JWK } from 'jose';
import type { PolicyFetch } from '../../egress/fetch.js';
import { BOT_CONNECTOR_ISSUER } from './endpoints.js';

/*
 * Checks the bearer token the Bot Connector sends with every activity, as Microsoft documents it:
 * https://learn.microsoft.com/en-us/azure/bot-service/rest-api/bot-framework-rest-connector-authentication
 * ("Connector to bot"): the keys come from the jwks_uri of the OpenID metadata; the token is signed
 * by one of them (RS256), its issuer is https://api.botframework.com, its audience the bot's app
 * id, it has not expired (5 minutes of clock skew allowed), the key is endorsed for the activity's
 * channel, and its serviceUrl claim is the activity's serviceUrl.
 */

/** Why a token is refused: said in the 401, never with the token. */
export class BotTokenRefused extends Error {}

type EndorsedKey = JWK & { endorsements?: string[] };

const CLOCK_SKEW_SECONDS = 300;
/** Microsoft: the keys change rarely, and are read again at least daily. */
const KEYS_FOR_MS = 24 * 3600_000;
/** A token signed by a key not (yet) listed reads the list again, at most this often. */
const REREAD_AFTER_MS = 5 * 60_000;

type Jose = typeof import('jose');

/**
 * jose, loaded by the first Teams activity: it took ~0.06 s of CPU at every start, before the
 * service listened (OpenID sign-ins load it too, with openid-client: identity/sso/oidc.ts).
 */
const jose = (): Promise<Jose> => import('jose');

export interface VerifiedBotToken {
  appId: string;
  serviceUrl: string;
}

export class BotTokenCheck {
  private keys: { set: EndorsedKey[]; at: number } | undefined;
  private reading: Promise<EndorsedKey[]> | undefined;

  constructor(private readonly fetch: PolicyFetch, private readonly metadataUrl: string, private readonly timeoutMs: number) {}

  /** The audience the token claims, unverified: which bot (channel) to check it for. */
  static async claimedAudience(token: string): Promise<string> {
    const { decodeJwt } = await jose();
    try {
      const aud = decodeJwt(token).aud;
      const one = Array.isArray(aud) ? aud[0] : aud;
      if (typeof one !== 'string' || one === '') throw new BotTokenRefused('the bearer token names no audience (aud)');
      return one;
    } catch (error) {
      if (error instanceof BotTokenRefused) throw error;
      throw new BotTokenRefused('the bearer token is not a JWT');
    }
  }

  /** Verifies the token for the bot `appId` and the activity's channel and serviceUrl; throws BotTokenRefused. */
  async verify(token: string, appId: string, activity: { channelId: string; serviceUrl: string }): Promise<VerifiedBotToken> {
    const { errors } = await jose();
    let keys = await this.keySet(false);
    let result;
    try {
      result = await this.check(token, appId, keys);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw refusal(error, errors);
      keys = await this.keySet(true);
      try {
        result = await this.check(token, appId, keys);
      } catch (again) {
        throw refusal(again, errors);
      }
    }
    const key = keys.find((k) => k.kid === result.protectedHeader.kid);
    if (key?.endorsements && !key.endorsements.includes(activity.channelId)) {
      throw new BotTokenRefused(`the token's signing key is not endorsed for the channel "${activity.channelId}"`);
    }
    // Microsoft's prose says serviceUrl; the tokens carry `serviceurl` (botbuilder-js
    // botframework-connector src/auth/authenticationConstants.ts, ServiceUrlClaim): either is read.
    const serviceUrl = Object.entries(result.payload).find(([name]) => name.toLowerCase() === 'serviceurl')?.[1];
    if (typeof serviceUrl !== 'string' || serviceUrl !== activity.serviceUrl) {
      throw new BotTokenRefused("the token's serviceUrl claim is not the activity's serviceUrl");
    }
    return { appId, serviceUrl };
  }

  private async check(token: string, appId: string, keys: EndorsedKey[]) {
    const { jwtVerify, createLocalJWKSet } = await jose();
    return jwtVerify(token, createLocalJWKSet({ keys } as JSONWebKeySet), { issuer: BOT_CONNECTOR_ISSUER, audience: appId, clockTolerance: CLOCK_SKEW_SECONDS, algorithms: ['RS256'] });
  }

  /** The connector's keys, read from its OpenID metadata's jwks_uri and kept a day. */
  private async keySet(reread: boolean): Promise<EndorsedKey[]> {
    const now = Date.now();
    const fresh = this.keys && now - this.keys.at < (reread ? REREAD_AFTER_MS : KEYS_FOR_MS);
    if (fresh) return this.keys!.set;
    this.reading ??= this.read().then((set) => {
      this.keys = { set, at: Date.now() };
      return set;
    }).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<EndorsedKey[]> {
    const metadata = await this.json(this.metadataUrl) as { jwks_uri?: unknown };
    if (typeof metadata.jwks_uri !== 'string') throw new Error(`the Bot Framework OpenID metadata at ${this.metadataUrl} has no jwks_uri`);
    const set = await this.json(metadata.jwks_uri) as { keys?: unknown };
    if (!Array.isArray(set.keys)) throw new Error(`the Bot Framework key set at ${metadata.jwks_uri} has no keys`);
    return set.keys as EndorsedKey[];
  }

  private async json(url: string): Promise<unknown> {
    const response = await this.fetch(url, { method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.timeoutMs) });
    if (!response.ok) throw new Error(`${new URL(url).host} answered ${response.status} for the Bot Framework's keys`);
    return response.json();
  }
}

function refusal(error: unknown, errors: Jose['errors']): BotTokenRefused {
  if (error instanceof errors.JWTExpired) return new BotTokenRefused('the bearer token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return new BotTokenRefused("the bearer token's audience is not this bot's app id");
    if (error.claim === 'iss') return new BotTokenRefused(`the bearer token's issuer is not ${BOT_CONNECTOR_ISSUER}`);
    return new BotTokenRefused(`the bearer token's ${error.claim} claim is not valid`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return new BotTokenRefused("the bearer token's signature does not verify");
  if (error instanceof errors.JWKSNoMatchingKey) return new BotTokenRefused("the bearer token is signed by a key not in the Bot Framework's key set");
  if (error instanceof errors.JOSEError) return new BotTokenRefused(`the bearer token is not valid (${error.code})`);
  return error instanceof BotTokenRefused ? error : new BotTokenRefused((error as Error).message);
}
