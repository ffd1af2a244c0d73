import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../src/identity/secret-box.js';
import { OidcDiscoveryCache } from '../src/identity/sso/discovery.js';
import { createProvider, type SsoProviderRow } from '../src/identity/sso/providers.js';
import { finishOidcSignIn, oidcCallbackUrl, startSignIn, type SsoDeps } from '../src/identity/sso/sign-in.js';
import type { Store } from '../src/store/database.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { signInAtIdp, startTestIdp, type TestIdp } from './support/oidc-provider.js';

// pitcrew's address as the IdP knows it (the registered redirect URI); the test plays the browser,
// so the callback is handed to pitcrew's sign-in code rather than fetched.
const BASE = 'http://127.0.0.1:9';
const SECRET = 'enterprise-client-secret';

describe.each(testDialects())('OpenID Connect sign-in through a real OpenID provider (%s)', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  let idp: TestIdp;
  const box = new SecretBox(randomBytes(32));
  const discovery = new OidcDiscoveryCache(() => Date.now());
  const deps = (): SsoDeps => ({ db: store.db, box, now: () => Date.now(), discovery });
  let publicProvider: SsoProviderRow;
  let enterpriseProvider: SsoProviderRow;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    store = database.open();
    const ids = { public: 'will-be-set', enterprise: 'will-be-set' };
    // Provider ids are made at creation and the redirect URIs carry them; the IdP accepts the
    // callback of any provider id under BASE by registering both after they exist.
    publicProvider = await createProvider(store.db, box, 'tenant-1', { type: 'oidc', name: 'Google-style', issuer: 'http://127.0.0.1:1', clientId: 'pitcrew-public', roleMapping: { domains: { 'example.com': 'operator' } } });
    enterpriseProvider = await createProvider(store.db, box, 'tenant-1', {
      type: 'oidc', name: 'Keycloak-style', issuer: 'http://127.0.0.1:1', clientId: 'pitcrew-enterprise', clientSecret: SECRET, scopes: ['openid', 'email', 'groups'],
      roleMapping: { claim: 'groups', groups: { 'sre-admins': 'admin', sre: 'operator' } },
    });
    ids.public = publicProvider.id;
    ids.enterprise = enterpriseProvider.id;
    idp = await startTestIdp([
      { client_id: 'pitcrew-public', redirect_uris: [oidcCallbackUrl(BASE, ids.public)] },
      { client_id: 'pitcrew-enterprise', client_secret: SECRET, redirect_uris: [oidcCallbackUrl(BASE, ids.enterprise)] },
    ], {
      ann: { email: 'ann@example.com', email_verified: true },
      mallory: { email: 'mallory@example.com', email_verified: false },
      cy: { email: 'cy@corp.test', email_verified: true, groups: ['sre', 'sre-admins'] },
    });
    for (const row of [publicProvider, enterpriseProvider]) {
      const config = JSON.parse(row.config) as Record<string, unknown>;
      row.config = JSON.stringify({ ...config, issuer: idp.issuer });
      await store.db.updateTable('sso_providers').set({ config: row.config }).where('id', '=', row.id).execute();
    }
  });

  afterAll(async () => {
    await idp?.close();
    await store?.close();
    await database?.drop();
  });

  async function signIn(provider: SsoProviderRow, account: string, tamper: (url: URL) => void = () => undefined) {
    const start = new URL(await startSignIn(deps(), provider, BASE, { returnTo: '/rules', test: false }));
    tamper(start);
    const callback = await signInAtIdp(start.href, account, oidcCallbackUrl(BASE, provider.id));
    return { callback, query: Object.fromEntries(callback.searchParams) };
  }

  it('signs in with a public provider: the verified e-mail\'s domain gives the role, with PKCE, state and nonce sent', async () => {
    const start = new URL(await startSignIn(deps(), publicProvider, BASE, { returnTo: '/rules', test: false }));
    expect(start.searchParams.get('code_challenge_method')).toBe('S256');
    expect(start.searchParams.get('state')).toMatch(/.{20,}/);
    expect(start.searchParams.get('nonce')).toMatch(/.{20,}/);
    const { query } = await signIn(publicProvider, 'ann');
    const outcome = await finishOidcSignIn(deps(), publicProvider, BASE, query);
    expect(outcome).toMatchObject({ ok: true, email: 'ann@example.com', role: 'operator', returnTo: '/rules' });
  });

  it('signs in with an enterprise provider (client secret, group claim): the highest mapped group gives the role', async () => {
    const { query } = await signIn(enterpriseProvider, 'cy');
    const outcome = await finishOidcSignIn(deps(), enterpriseProvider, BASE, query);
    expect(outcome).toMatchObject({ ok: true, email: 'cy@corp.test', role: 'admin' });
  });

  it('refuses an unverified e-mail at a public provider', async () => {
    const { query } = await signIn(publicProvider, 'mallory');
    const outcome = await finishOidcSignIn(deps(), publicProvider, BASE, query);
    expect(outcome).toMatchObject({ ok: false, reason: 'the identity provider has not verified the e-mail mallory@example.com' });
  });

  it('refuses a replayed state: the second use of the same answer finds no sign-in', async () => {
    const { query } = await signIn(enterpriseProvider, 'cy');
    expect(await finishOidcSignIn(deps(), enterpriseProvider, BASE, query)).toMatchObject({ ok: true });
    const replay = await finishOidcSignIn(deps(), enterpriseProvider, BASE, query);
    expect(replay).toMatchObject({ ok: false, reason: 'this sign-in answer was already used, has expired, or was not started here: start the sign-in again' });
  });

  it('refuses an ID token whose nonce is not the one this sign-in sent', async () => {
    // The nonce is swapped on the way to the IdP (as by an attacker injecting a code obtained for
    // another sign-in); the state and PKCE verifier stay right, so only the nonce check can refuse.
    const { query } = await signIn(enterpriseProvider, 'cy', (url) => url.searchParams.set('nonce', 'a-nonce-pitcrew-never-sent'));
    const outcome = await finishOidcSignIn(deps(), enterpriseProvider, BASE, query);
    expect(outcome).toMatchObject({ ok: false, reason: 'the ID token does not carry the nonce of this sign-in (a replayed or injected answer); start the sign-in again' });
  });

  it('refuses an ID token issued for another client (wrong audience), naming both client ids', async () => {
    idp.misbehave((claims) => ({ ...claims, aud: 'another-app' }));
    try {
      const { query } = await signIn(enterpriseProvider, 'cy');
      const outcome = await finishOidcSignIn(deps(), enterpriseProvider, BASE, query);
      expect(outcome).toMatchObject({ ok: false, reason: 'the ID token was issued for client "another-app", this provider is configured with client "pitcrew-enterprise": check the client id' });
      expect(JSON.stringify(outcome)).not.toContain(SECRET);
    } finally {
      idp.misbehave(undefined);
    }
  });

  it('refuses an expired ID token', async () => {
    // The IdP signs an ID token that expired 5 minutes ago (issued 10 minutes ago): past the
    // verifier's 30 s clock tolerance, and younger than the hour after which iat alone refuses it.
    idp.misbehave((claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 300 }));
    try {
      const { query } = await signIn(enterpriseProvider, 'cy');
      const outcome = await finishOidcSignIn(deps(), enterpriseProvider, BASE, query);
      expect(outcome).toMatchObject({ ok: false, reason: 'the ID token has expired; if this repeats, check the clocks of pitcrew and the identity provider' });
    } finally {
      idp.misbehave(undefined);
    }
  });
});
