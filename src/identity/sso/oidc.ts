import type * as client from 'openid-client';
import type { Claims } from './role-mapping.js';
import { isLoopbackUrl } from './urls.js';

type OpenidClient = typeof import('openid-client');
/** Set by the first sign-in that loads openid-client: no error of it can exist before. */
let loaded: OpenidClient | undefined;

/**
 * openid-client, and jose with it, loaded by the first OpenID sign-in: they took ~0.1 s of CPU at
 * every start, before the service listened, for tenants most of which have no OpenID provider.
 */
async function openidClient(): Promise<OpenidClient> {
  return (loaded ??= await import('openid-client'));
}

/** An OpenID provider as a tenant configured it (the client secret opened, when it has one). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret?: string | undefined;
  scopes: readonly string[];
}

export interface OidcDeps {
  /** pitcrew's clock: ID token times (exp, iat) are judged by it, not by the process's own. */
  now: () => number;
  /** How the service reaches the provider (the egress policy's fetch in the server); the global fetch when absent. */
  fetch?: client.CustomFetch | undefined;
}

/** egress/fetch.ts's PolicyFetch, by shape: identity/ sits below egress/ and imports nothing of it. */
type PolicyFetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<Response>;

/**
 * openid-client's requests (discovery, JWKS, token, userinfo) through the egress policy: an
 * issuer a tenant owner types must not make the service call into its own network, unless the
 * operator opened that network (PITCREW_EGRESS_ALLOW_NETWORKS) for an identity provider there.
 */
export function oidcFetch(fetch: PolicyFetchLike): client.CustomFetch {
  return (url, options) => fetch(url, {
    method: options.method,
    headers: options.headers,
    ...(options.body === undefined || options.body === null ? {} : { body: String(options.body) }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** What the callback checks the provider's answer against; saved at the start, used once. */
export interface OidcPending {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * What one sign-in may reuse of an earlier one with the same provider (identity/sso/discovery.ts
 * keeps it): the discovery document as the provider sent it, and its keys as last fetched. The
 * token endpoint's answer is only ever a sign-in's own, checked a second time (a code is good once).
 */
export interface DiscoveryMemo {
  document?: string | undefined;
  jwks?: client.ExportedJWKSCache | undefined;
  tokenAnswer?: RecordedAnswer | undefined;
}

/** An HTTP answer kept to be read again: the token endpoint's, for the one sign-in it belongs to. */
export interface RecordedAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

export interface Discovered {
  config: client.Configuration;
  /** The discovery document this configuration was made from. */
  document: string;
  /** Whether anything came from the memo (the document or the keys), rather than from the provider just now. */
  reused: boolean;
  /** The token endpoint's answer, once the code was exchanged (to check again with fresh keys). */
  tokenAnswer(): RecordedAnswer | undefined;
  /** The provider's keys as fetched so far, to keep for the next sign-in. */
  jwks(): client.ExportedJWKSCache | undefined;
}

const DISCOVERY_PATH = '/.well-known/openid-configuration';

/**
 * The provider's configuration, from its discovery document at `issuer` (which must name the same
 * issuer: openid-client checks it, on a remembered document too). Plain HTTP only to a loopback
 * issuer (a provider on this machine, as in development and the tests); anywhere else tokens
 * travel over TLS. openid-client makes every request through one fetch: a document in the memo is
 * answered from there, and the token endpoint's answer is recorded (or, given, replayed).
 */
export async function discover(settings: OidcSettings, deps: OidcDeps, memo: DiscoveryMemo = {}): Promise<Discovered> {
  const client = await openidClient();
  const metadata: Partial<client.ClientMetadata> = { [client.clockSkew]: Math.round((deps.now() - Date.now()) / 1000) };
  if (settings.clientSecret) metadata.client_secret = settings.clientSecret;
  const authentication = settings.clientSecret ? client.ClientSecretBasic(settings.clientSecret) : client.None();
  const network: client.CustomFetch = deps.fetch ?? ((url, options) => fetch(url, options as RequestInit));
  let document = memo.document;
  let tokenAnswer = memo.tokenAnswer;
  // Known once the document is read: requests before then are discovery's own.
  const endpoints: { token?: string | undefined } = {};
  const through: client.CustomFetch = async (url, options) => {
    if (options.method === 'GET' && new URL(url).pathname.endsWith(DISCOVERY_PATH)) {
      if (document !== undefined) return new Response(document, { status: 200, headers: { 'content-type': 'application/json' } });
      const response = await network(url, options);
      if (response.status === 200) document = await response.clone().text();
      return response;
    }
    if (options.method === 'POST' && url === endpoints.token) {
      if (memo.tokenAnswer) return new Response(memo.tokenAnswer.body, { status: memo.tokenAnswer.status, headers: memo.tokenAnswer.headers });
      const response = await network(url, options);
      tokenAnswer = { status: response.status, headers: [...response.headers], body: await response.clone().text() };
      return response;
    }
    return network(url, options);
  };
  const config = await client.discovery(new URL(settings.issuer), settings.clientId, metadata, authentication, {
    // The ID token's signature is checked with the provider's published keys, though it comes
    // straight from the token endpoint (OpenID Connect Core 3.1.3.7 lets a client rely on TLS
    // instead; openid-client does unless told): a provider reached over plain HTTP on loopback,
    // or through a TLS-intercepting proxy, proves its answers the same way.
    execute: [...(isLoopbackUrl(settings.issuer) ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks],
    [client.customFetch]: through,
  });
  endpoints.token = config.serverMetadata().token_endpoint;
  if (memo.jwks) client.setJwksCache(config, memo.jwks);
  return { config, document: document!, reused: memo.document !== undefined || memo.jwks !== undefined, tokenAnswer: () => tokenAnswer, jwks: () => client.getJwksCache(config) };
}

/** openid-client's refusal of an ID token signed with a key the provider's key set (as known) does not hold. */
export function signedWithUnknownKey(error: unknown): boolean {
  return loaded !== undefined && error instanceof loaded.ClientError && error.code === 'OAUTH_KEY_SELECTION_FAILED';
}

/** Where to send the browser: the authorization code flow with PKCE (S256), a fresh state and nonce. */
export async function authorizationRequest(config: client.Configuration, settings: OidcSettings, redirectUri: string): Promise<{ url: string; pending: OidcPending }> {
  const client = await openidClient();
  const pending = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: settings.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { url: url.href, pending };
}

/**
 * The claims of the person the provider signed in: the code exchanged (with the PKCE verifier),
 * the ID token checked by openid-client (signature, issuer, audience, expiry, nonce), and the
 * userinfo added for claims the ID token leaves out (many providers put e-mail and groups there
 * only). The ID token's own claims win over userinfo's.
 */
export async function finishSignIn(config: client.Configuration, callbackUrl: URL, pending: OidcPending): Promise<Claims> {
  const client = await openidClient();
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: pending.codeVerifier,
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    idTokenExpected: true,
  });
  const idClaims = tokens.claims();
  if (!idClaims) throw new Error('the identity provider sent no ID token');
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
  return { ...userinfo, ...idClaims };
}

/**
 * A failed sign-in told so an administrator knows what to fix: the claim that did not match and
 * both values, or the provider's own error. Never the tokens, the code or the client secret.
 */
export function explainOidcFailure(error: unknown, settings: OidcSettings): string {
  const client = loaded;
  if (client && error instanceof client.AuthorizationResponseError) {
    return `the identity provider refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  }
  if (client && error instanceof client.ResponseBodyError) {
    const hint = error.error === 'invalid_client' ? '; check the client id and secret' : '';
    return `the identity provider refused the code exchange: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}${hint}`;
  }
  if (client && error instanceof client.ClientError) {
    // openid-client wraps oauth4webapi's error, whose own cause names the failed claim.
    const inner = error.cause instanceof Error ? error.cause : undefined;
    if (isClaimFailure(inner?.cause)) return explainClaim(inner.cause, settings);
    if (signedWithUnknownKey(error)) {
      const kid = (inner?.cause as { header?: { kid?: unknown } } | undefined)?.header?.kid;
      return `the ID token is signed with a key${typeof kid === 'string' ? ` (kid ${JSON.stringify(kid)})` : ''} that is not among the keys the identity provider publishes now (its jwks_uri): check its signing keys`;
    }
    return `the identity provider's answer was refused: ${inner?.message ?? error.message}`;
  }
  return `the identity provider at ${settings.issuer} could not be reached or gave an answer pitcrew cannot read (${error instanceof Error ? error.message : 'unknown error'})`;
}

interface ClaimFailure { claim: string; expected?: unknown; claims?: Record<string, unknown> }

function isClaimFailure(cause: unknown): cause is ClaimFailure {
  return typeof cause === 'object' && cause !== null && typeof (cause as { claim?: unknown }).claim === 'string';
}

function explainClaim(failure: ClaimFailure, settings: OidcSettings): string {
  const got = failure.claims?.[failure.claim];
  switch (failure.claim) {
    case 'aud':
      return `the ID token was issued for client ${JSON.stringify(got)}, this provider is configured with client ${JSON.stringify(settings.clientId)}: check the client id`;
    case 'iss':
      return `the ID token was issued by ${JSON.stringify(got)}, this provider is configured with issuer ${JSON.stringify(settings.issuer)}: check the issuer URL`;
    case 'nonce':
      return 'the ID token does not carry the nonce of this sign-in (a replayed or injected answer); start the sign-in again';
    case 'exp':
      return 'the ID token has expired; if this repeats, check the clocks of pitcrew and the identity provider';
    case 'iat':
    case 'nbf':
      return `the ID token's ${failure.claim} time is out of range; check the clocks of pitcrew and the identity provider`;
    default:
      return `the ID token's "${failure.claim}" claim does not match what this sign-in expected`;
  }
}
