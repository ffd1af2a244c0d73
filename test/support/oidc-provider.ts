import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (the `oidc-provider` package, certified by the OpenID Foundation) on a
 * loopback port, for the SSO tests: discovery, authorization code flow with PKCE, ID tokens signed
 * with an RSA key made here, userinfo, and its development login screens (devInteractions) that
 * take any account id. `misbehave` lets a test make it issue ID tokens pitcrew must refuse.
 */
export interface TestIdp {
  issuer: string;
  /** Changes the next ID tokens' claims (re-signed with the IdP's own key), e.g. another audience. */
  misbehave(change: Change | undefined): void;
  /**
   * Signs the next ID tokens with another key: `rotated` is a key rotation as providers do it, the
   * new key published at a new jwks_uri that the discovery document names from then on (the old
   * key set stays as it was); `unpublished` is a key published nowhere.
   */
  signWith(key: 'rotated' | 'unpublished' | undefined): void;
  /** How many requests reached this path (e.g. `/.well-known/openid-configuration`). */
  requests(path: string): number;
  close(): Promise<void>;
}

export interface TestClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
}

export type TestAccounts = Record<string, Record<string, unknown>>;

/**
 * `clients` may be a function: it is asked at the IdP's first request, for a test that registers
 * pitcrew's redirect URI as a person does, after reading it from pitcrew (it names the provider's id).
 */
export async function startTestIdp(clients: readonly TestClient[] | (() => readonly TestClient[]), accounts: TestAccounts): Promise<TestIdp> {
  // The issuer names the port, so the server listens before the provider exists.
  let handler: Handler | undefined;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let change: Change | undefined;
  let signing: Signing | undefined;
  const others = { rotated: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, unpublished: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey };
  const counts = new Map<string, number>();
  const build = () => providerAt(issuer, typeof clients === 'function' ? clients() : clients, accounts, privateKey, () => ({ change, signing }));
  server.on('request', (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    (handler ??= build())(req, res);
  });
  return {
    issuer,
    misbehave: (next) => { change = next; },
    signWith: (key) => { signing = key ? { kid: `${key}-key`, key: others[key], published: key === 'rotated' } : undefined; },
    requests: (path) => counts.get(path) ?? 0,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

type Change = (claims: Record<string, unknown>) => Record<string, unknown>;
interface Signing { kid: string; key: KeyObject; published: boolean }
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function providerAt(issuer: string, clients: readonly TestClient[], accounts: TestAccounts, privateKey: KeyObject, behaviour: () => { change: Change | undefined; signing: Signing | undefined }): Handler {
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: clients.map((client) => ({
      ...client,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: client.client_secret ? 'client_secret_basic' : 'none',
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: ['sso-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    ttl: { IdToken: 300, AccessToken: 300, AuthorizationCode: 60, Interaction: 300, Session: 300, Grant: 300 },
    findAccount: (_ctx: unknown, id: string) => (accounts[id] ? { accountId: id, claims: () => ({ sub: id, ...accounts[id] }) } : undefined),
  });
  // A koa middleware (oidc-provider's documented `provider.use`) that rewrites the token
  // endpoint's ID token when a test asks it to misbehave: the claims changed, signed again with
  // this IdP's key, so only the claim checks (not the signature) can catch it.
  // A rotated key is served at a path of its own, which the discovery document names instead of /jwks.
  provider.use(async (ctx, next) => {
    const { change, signing } = behaviour();
    if (signing?.published && ctx.path === ROTATED_JWKS) {
      ctx.body = { keys: [{ ...createPublicKey(signing.key).export({ format: 'jwk' }), kid: signing.kid, alg: 'RS256', use: 'sig' }] };
      return;
    }
    await next();
    if (signing?.published && ctx.path === '/.well-known/openid-configuration' && ctx.status === 200) ctx.body = { ...(ctx.body as object), jwks_uri: `${issuer}${ROTATED_JWKS}` };
    const body = ctx.body as { id_token?: string } | undefined;
    if ((change || signing) && ctx.path === '/token' && ctx.status === 200 && body?.id_token) {
      ctx.body = { ...body, id_token: resign(body.id_token, change ?? ((claims) => claims), signing?.key ?? privateKey, signing?.kid) };
    }
  });
  return provider.callback();
}

const ROTATED_JWKS = '/jwks-rotated';

function resign(token: string, change: Change, key: KeyObject, kid?: string): string {
  const [encodedHeader = '', payload = ''] = token.split('.');
  const header = kid ? Buffer.from(JSON.stringify({ ...(JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as object), kid })).toString('base64url') : encodedHeader;
  const claims = change(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>);
  const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signingInput}.${sign('sha256', Buffer.from(signingInput), createPrivateKey(key.export({ format: 'pem', type: 'pkcs8' }))).toString('base64url')}`;
}

/**
 * A browser's part of the flow, by hand: follows redirects from `url` with a cookie jar, answers
 * the IdP's login screen as `accountId` and its consent screen, and stops at the first redirect
 * to `stopAt` (pitcrew's callback), returning that URL.
 */
export async function signInAtIdp(url: string, accountId: string, stopAt: string): Promise<URL> {
  const jar = new Map<string, string>();
  let next: { url: string; init: RequestInit } = { url, init: { method: 'GET' } };
  for (let hop = 0; hop < 20; hop += 1) {
    const response = await fetch(next.url, { ...next.init, redirect: 'manual', headers: { ...(next.init.headers as Record<string, string> | undefined), cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (location) {
      const target = new URL(location, next.url);
      if (target.href.startsWith(stopAt)) return target;
      next = { url: target.href, init: { method: 'GET' } };
      continue;
    }
    const page = await response.text();
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    if (response.status !== 200 || !prompt) throw new Error(`the IdP answered ${response.status} without a form: ${page.slice(0, 500)}`);
    const form: Record<string, string> = prompt === 'login' ? { prompt, login: accountId, password: 'any' } : { prompt };
    next = { url: next.url, init: { method: 'POST', body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } } };
  }
  throw new Error('too many redirects at the IdP');
}
