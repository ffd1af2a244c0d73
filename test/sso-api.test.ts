import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCOVERY_TTL_MS } from '../src/identity/sso/discovery.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { signInAtIdp, startTestIdp, type TestIdp } from './support/oidc-provider.js';
import { invite, signIn } from './support/people.js';
import { requestIdOf, startTestSamlIdp } from './support/saml-idp.js';

function sessionCookieOf(reply: LightMyRequestResponse): string {
  return [reply.headers['set-cookie']].flat().map(String).find((cookie) => cookie.startsWith('pitcrew_session='))!.split(';')[0]!;
}

// pitcrew's public URL: the redirect URIs registered at the IdP. The test plays the browser and
// hands each redirect to pitcrew with inject, so nothing listens there.
const PUBLIC_URL = 'http://pitcrew.test';
const SECRET = 'an-enterprise-client-secret';

describe.each(testDialects())('single sign-on through the API (%s)', (dialect) => {
  let env: TestEnv;
  let idp: TestIdp;
  let enterpriseId: string;
  let publicId: string;

  /** How far pitcrew's clock runs ahead of the real one: a test moves it past the discovery cache's lifetime. */
  let ahead = 0;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { publicUrl: PUBLIC_URL, clock: () => Date.now() + ahead });
    const placeholder = 'http://127.0.0.1:1';
    const enterprise = await env.api('POST', '/api/v1/sso-providers', {
      type: 'oidc', name: 'Keycloak', issuer: placeholder, clientId: 'pitcrew-enterprise', clientSecret: SECRET, scopes: ['openid', 'email', 'groups'],
      roleMapping: { claim: 'groups', groups: { sre: 'operator', 'sre-admins': 'admin' } }, jit: true,
    });
    expect(enterprise.statusCode, enterprise.body).toBe(201);
    enterpriseId = (enterprise.json() as { id: string }).id;
    const google = await env.api('POST', '/api/v1/sso-providers', { type: 'oidc', name: 'Google', issuer: placeholder, clientId: 'pitcrew-public', roleMapping: { domains: { 'example.com': 'viewer' } }, jit: false });
    publicId = (google.json() as { id: string }).id;
    idp = await startTestIdp([
      { client_id: 'pitcrew-enterprise', client_secret: SECRET, redirect_uris: [`${PUBLIC_URL}/api/v1/auth/sso/${enterpriseId}/callback`] },
      { client_id: 'pitcrew-public', redirect_uris: [`${PUBLIC_URL}/api/v1/auth/sso/${publicId}/callback`] },
    ], {
      cy: { email: 'cy@corp.test', email_verified: true, groups: ['sre'] },
      ann: { email: 'ann@example.com', email_verified: true },
      zed: { email: 'Zed@example.com', email_verified: true },
      out: { email: 'out@elsewhere.test', email_verified: true },
    });
    for (const id of [enterpriseId, publicId]) expect((await env.api('PATCH', `/api/v1/sso-providers/${id}`, { issuer: idp.issuer })).statusCode).toBe(200);
  });

  afterAll(async () => {
    await idp?.close();
    await env?.close();
  });

  const get = (url: string, cookie?: string, remoteAddress = '127.0.0.1') => env.app.server.inject({ method: 'GET', url, remoteAddress, headers: cookie ? { cookie } : {} });

  /** GET start, through the IdP as `account`, then GET pitcrew's callback: its reply. */
  async function ssoSignIn(providerId: string, account: string, query = ''): Promise<LightMyRequestResponse> {
    const { callback, browser } = await throughIdp(providerId, account, query);
    return get(callback, browser);
  }

  /** GET start and through the IdP: pitcrew's callback path, and the cookie start gave the browser. */
  async function throughIdp(providerId: string, account: string, query = ''): Promise<{ callback: string; browser: string }> {
    const start = await get(`/api/v1/auth/sso/${providerId}/start${query}`);
    expect(start.statusCode, start.body).toBe(302);
    const callback = await signInAtIdp(String(start.headers.location), account, `${PUBLIC_URL}/api/v1/auth/sso/${providerId}/callback`);
    return { callback: `${callback.pathname}${callback.search}`, browser: String(start.headers['set-cookie']).split(';')[0]! };
  }

  it('lists the providers for the sign-in page, publicly', async () => {
    const listed = await get('/api/v1/auth/providers?tenant=default');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      passwordSignIn: true,
      items: expect.arrayContaining([{ id: enterpriseId, name: 'Keycloak', type: 'oidc', startUrl: `/api/v1/auth/sso/${enterpriseId}/start` }]),
    });
  });

  it('never returns the client secret, and shows the redirect URI to register', async () => {
    const shown = await env.api('GET', `/api/v1/sso-providers/${enterpriseId}`);
    expect(shown.json()).toMatchObject({ clientSecretSet: true, callbackUrl: `${PUBLIC_URL}/api/v1/auth/sso/${enterpriseId}/callback` });
    expect(shown.body).not.toContain(SECRET);
    const row = await env.store.db.selectFrom('sso_providers').select('client_secret').where('id', '=', enterpriseId).executeTakeFirstOrThrow();
    expect(row.client_secret).not.toContain(SECRET);
  });

  it('signs a new person in (just in time) with the mapped role, and lands on returnTo', async () => {
    const reply = await ssoSignIn(enterpriseId, 'cy', '?returnTo=%2Frules%3Fx%3D1');
    expect(reply.statusCode, reply.body).toBe(302);
    expect(reply.headers.location).toBe('/rules?x=1');
    const cookies = [reply.headers['set-cookie']].flat().map(String);
    expect(cookies.some((cookie) => cookie.startsWith('pitcrew_sso=;') && cookie.includes('Max-Age=0'))).toBe(true);
    const session = cookies.find((cookie) => cookie.startsWith('pitcrew_session='))!.split(';')[0]!;
    const me = await get('/api/v1/me', session);
    expect(me.json()).toMatchObject({ user: { email: 'cy@corp.test' }, role: 'operator', via: 'oidc' });
  });

  it('keeps returnTo on this site: another origin lands on /', async () => {
    const reply = await ssoSignIn(enterpriseId, 'cy', '?returnTo=%2F%2Fevil.test%2F');
    expect(reply.headers.location).toBe('/');
  });

  it('a test sign-in shows the claims and the role, and starts no session', async () => {
    const reply = await ssoSignIn(enterpriseId, 'cy', '?test=1');
    expect(reply.statusCode).toBe(200);
    expect(String(reply.headers['set-cookie'])).not.toContain('pitcrew_session');
    expect(reply.json()).toMatchObject({ test: true, ok: true, email: 'cy@corp.test', role: 'operator', claims: { groups: ['sre'], iss: idp.issuer } });
  });

  it('without just-in-time creation refuses a person who is not a member, saying so on the sign-in page', async () => {
    const reply = await ssoSignIn(publicId, 'ann');
    expect(reply.statusCode).toBe(302);
    expect(decodeURIComponent(String(reply.headers.location))).toBe('/signin?error=ann@example.com is not a member of this tenant, and this provider creates no users (just-in-time creation is off): ask an admin to invite ann@example.com, or turn on jit for the provider');
  });

  it('without just-in-time creation signs in an invited member', async () => {
    await invite(env, 'ann@example.com', 'operator');
    const reply = await ssoSignIn(publicId, 'ann');
    expect(reply.headers.location).toBe('/');
    const me = await get('/api/v1/me', sessionCookieOf(reply));
    expect(me.json()).toMatchObject({ user: { email: 'ann@example.com' }, role: 'viewer', via: 'oidc' });
  });

  it('a replayed callback goes to the sign-in page with the reason', async () => {
    const { callback, browser } = await throughIdp(enterpriseId, 'cy');
    expect((await get(callback, browser)).headers.location).toBe('/');
    const replay = await get(callback, browser);
    expect(decodeURIComponent(String(replay.headers.location))).toContain('/signin?error=this sign-in answer was already used');
  });

  it('refuses an answer brought back by another browser than the one that started the sign-in (login CSRF)', async () => {
    // Someone starts a sign-in to their own account and sends the callback link to a victim.
    const { callback } = await throughIdp(enterpriseId, 'cy');
    const victim = await get(callback);
    expect(String(victim.headers['set-cookie'] ?? '')).not.toContain('pitcrew_session');
    expect(decodeURIComponent(String(victim.headers.location))).toBe('/signin?error=this sign-in was started in another browser, or this browser did not keep its cookie: start the sign-in again here');
  });

  it('SSO required: password sign-in is refused naming the button, and password sessions end', async () => {
    const member = await invite(env, 'dan@corp.test', 'operator');
    expect((await member.call('GET', '/api/v1/me')).statusCode).toBe(200);
    expect((await env.api('PATCH', `/api/v1/sso-providers/${enterpriseId}`, { required: true })).statusCode).toBe(200);
    try {
      expect((await member.call('GET', '/api/v1/me')).statusCode).toBe(401);
      const refused = await signIn(env, 'dan@corp.test');
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'PITCREW_ERR_SSO_REQUIRED', detail: 'tenant default requires single sign-on, so password sign-in is off: use the "Sign in with Keycloak" button on the sign-in page' });
      const recorded = (await env.api('GET', `/api/v1/audit?action=session.refused&actor=${member.userId}`)).json() as { items: unknown[] };
      expect(recorded.items).toEqual([expect.objectContaining({ actor: { type: 'user', id: member.userId, email: 'dan@corp.test' }, via: 'password', after: { reason: 'password sign-in is off: the tenant requires single sign-on' } })]);
      expect((await get('/api/v1/auth/providers')).json()).toMatchObject({ passwordSignIn: false });
      // Personal access tokens (the API, the CLI) go on working: an owner can always undo it.
      expect((await env.api('GET', '/api/v1/sso-providers')).statusCode).toBe(200);
    } finally {
      await env.api('PATCH', `/api/v1/sso-providers/${enterpriseId}`, { required: false });
    }
    expect((await signIn(env, 'dan@corp.test')).statusCode).toBe(200);
  });

  it("reads a provider's discovery document once for many sign-ins, again once the provider changed (here or on another node) and after ten minutes", async () => {
    const discoveries = () => idp.requests('/.well-known/openid-configuration');
    const signsIn = async () => expect((await ssoSignIn(enterpriseId, 'cy')).headers.location).toBe('/');
    expect((await env.api('PATCH', `/api/v1/sso-providers/${enterpriseId}`, { name: 'Keycloak' })).statusCode).toBe(200);
    const before = discoveries();
    await signsIn();
    await signsIn();
    await signsIn();
    expect(discoveries()).toBe(before + 1);
    expect((await env.api('PATCH', `/api/v1/sso-providers/${enterpriseId}`, { scopes: ['openid', 'email', 'groups'] })).statusCode).toBe(200);
    await signsIn();
    expect(discoveries()).toBe(before + 2);
    // Another node changed the provider: this node sees its row's updated_at move.
    const row = await env.store.db.selectFrom('sso_providers').select('updated_at').where('id', '=', enterpriseId).executeTakeFirstOrThrow();
    await env.store.db.updateTable('sso_providers').set({ updated_at: row.updated_at + 1 }).where('id', '=', enterpriseId).execute();
    await signsIn();
    await signsIn();
    expect(discoveries()).toBe(before + 3);
    // Past the cache's lifetime by pitcrew's clock (only the start: the ID token would be judged by that clock too).
    ahead = DISCOVERY_TTL_MS;
    try {
      expect((await get(`/api/v1/auth/sso/${enterpriseId}/start`)).statusCode).toBe(302);
      expect(discoveries()).toBe(before + 4);
      expect((await get(`/api/v1/auth/sso/${enterpriseId}/start`)).statusCode).toBe(302);
      expect(discoveries()).toBe(before + 4);
    } finally {
      ahead = 0;
    }
  });

  it('reads the configuration again, once, when an answer is signed with a key it does not hold, and signs in after a key rotation', async () => {
    const discoveries = () => idp.requests('/.well-known/openid-configuration');
    await ssoSignIn(enterpriseId, 'cy');
    const before = discoveries();
    try {
      // A key published nowhere: read again once, then refused saying which key.
      idp.signWith('unpublished');
      const refused = await ssoSignIn(enterpriseId, 'cy');
      expect(decodeURIComponent(String(refused.headers.location))).toBe('/signin?error=the ID token is signed with a key (kid "unpublished-key") that is not among the keys the identity provider publishes now (its jwks_uri): check its signing keys');
      expect(discoveries()).toBe(before + 1);
      // The provider rotates to a new key at a new jwks_uri: the first answer signed with it is checked against the configuration read again.
      idp.signWith('rotated');
      expect((await ssoSignIn(enterpriseId, 'cy')).headers.location).toBe('/');
      expect(discoveries()).toBe(before + 2);
      expect(idp.requests('/jwks-rotated')).toBe(1);
      expect((await ssoSignIn(enterpriseId, 'cy')).headers.location).toBe('/');
      expect(discoveries()).toBe(before + 2);
    } finally {
      idp.signWith(undefined);
    }
    // And back: the next answer, signed with the first key again, reads it once more.
    expect((await ssoSignIn(enterpriseId, 'cy')).headers.location).toBe('/');
    expect(discoveries()).toBe(before + 3);
  });

  it("records each refused sign-in in the provider's tenant: provider, reason, the e-mail claimed, the address; never a token or a code", async () => {
    const refusals = async () => ((await env.api('GET', '/api/v1/audit?action=session.refused&limit=1000')).json() as { items: Array<Record<string, unknown>> }).items;
    const before = (await refusals()).length;
    const refusedAt = async (providerId: string, account: string, ip: string) => {
      const { callback, browser } = await throughIdp(providerId, account);
      const reply = await get(callback, browser, ip);
      expect(decodeURIComponent(String(reply.headers.location))).toMatch(/^\/signin\?error=/);
      return new URL(callback, PUBLIC_URL).searchParams.get('code')!;
    };
    const codes = [await refusedAt(publicId, 'zed', '198.51.100.31'), await refusedAt(publicId, 'out', '198.51.100.32')];
    idp.misbehave((claims) => ({ ...claims, aud: 'another-app' }));
    try {
      codes.push(await refusedAt(enterpriseId, 'cy', '198.51.100.33'));
    } finally {
      idp.misbehave(undefined);
    }
    const { callback, browser } = await throughIdp(enterpriseId, 'cy');
    expect((await get(callback, browser)).headers.location).toBe('/');
    expect(decodeURIComponent(String((await get(callback, browser, '198.51.100.34')).headers.location))).toMatch(/already used/);

    const google = { id: publicId, name: 'Google', type: 'oidc' };
    const keycloak = { id: enterpriseId, name: 'Keycloak', type: 'oidc' };
    const entries = (await refusals()).slice(0, (await refusals()).length - before).reverse();
    expect(entries).toEqual([
      expect.objectContaining({
        actor: { type: 'anonymous', email: 'zed@example.com' }, via: 'oidc', ip: '198.51.100.31', action: 'session.refused', targetType: 'session', targetId: null,
        after: { provider: google, email: 'zed@example.com', reason: 'zed@example.com is not a member of this tenant, and this provider creates no users (just-in-time creation is off): ask an admin to invite zed@example.com, or turn on jit for the provider' },
      }),
      expect.objectContaining({ actor: { type: 'anonymous', email: 'out@elsewhere.test' }, ip: '198.51.100.32', after: { provider: google, email: 'out@elsewhere.test', reason: 'the e-mail domain elsewhere.test is not mapped to a role for this provider' } }),
      expect.objectContaining({ actor: { type: 'anonymous', email: null }, ip: '198.51.100.33', after: { provider: keycloak, reason: expect.stringMatching(/^the ID token was issued for client "another-app"/) } }),
      expect.objectContaining({ actor: { type: 'anonymous', email: null }, ip: '198.51.100.34', after: { provider: keycloak, reason: expect.stringMatching(/^this sign-in answer was already used/) } }),
    ]);
    // Found by the e-mail they claimed, or all of nobody known at once.
    expect(((await env.api('GET', '/api/v1/audit?actor=zed@example.com')).json() as { items: unknown[] }).items).toHaveLength(1);
    expect(((await env.api('GET', '/api/v1/audit?actor=anonymous&action=session.refused')).json() as { items: unknown[] }).items.length).toBeGreaterThanOrEqual(4);
    const stored = JSON.stringify(await env.store.db.selectFrom('audit_log').selectAll().execute());
    for (const secret of [...codes, SECRET, 'eyJ']) expect(stored).not.toContain(secret);
  });

  it('an identity provider that does not answer sends the browser to the sign-in page saying so', async () => {
    const created = await env.api('POST', '/api/v1/sso-providers', { type: 'oidc', name: 'Gone', issuer: 'http://127.0.0.1:1', clientId: 'x', roleMapping: { domains: { 'example.com': 'viewer' } } });
    const { id } = created.json() as { id: string };
    try {
      const start = await get(`/api/v1/auth/sso/${id}/start`);
      expect(start.statusCode).toBe(302);
      expect(decodeURIComponent(String(start.headers.location))).toBe('/signin?error=the identity provider "Gone" could not be reached or did not answer as an OpenID provider at its issuer URL; ask an admin to check the provider\'s settings');
    } finally {
      expect((await env.api('DELETE', `/api/v1/sso-providers/${id}`)).statusCode).toBe(204);
    }
  });

  it('refuses settings that cannot work, before they are saved', async () => {
    const samlMapping = await env.api('POST', '/api/v1/sso-providers', { type: 'oidc', name: 'Bad', issuer: 'http://idp.example.com', clientId: 'x', roleMapping: { attribute: 'groups', values: {} } });
    expect(samlMapping.statusCode).toBe(400);
    expect(samlMapping.json()).toMatchObject({ code: 'PITCREW_ERR_VALIDATION', detail: expect.stringContaining('issuer must be https (plain http only to localhost)') });
    const badMetadata = await env.api('POST', '/api/v1/sso-providers', { type: 'saml', name: 'Bad', metadataXml: '<nope/>', roleMapping: { attribute: 'groups', values: {} } });
    expect(badMetadata.json()).toMatchObject({ code: 'PITCREW_ERR_VALIDATION', detail: expect.stringContaining('metadataXml the metadata has no EntityDescriptor') });
  });

  it('only an owner changes providers; an admin reads them', async () => {
    const admin = await invite(env, 'eve@corp.test', 'admin');
    expect((await admin.call('GET', '/api/v1/sso-providers')).statusCode).toBe(200);
    expect((await admin.call('PATCH', `/api/v1/sso-providers/${enterpriseId}`, { name: 'Renamed' })).statusCode).toBe(403);
    const operator = await invite(env, 'fay@corp.test', 'operator');
    expect((await operator.call('GET', '/api/v1/sso-providers')).statusCode).toBe(403);
  });

  it('SAML: serves SP metadata, accepts a signed assertion at the ACS as a form post, and signs in', async () => {
    const samlIdp = await startTestSamlIdp();
    const created = await env.api('POST', '/api/v1/sso-providers', { type: 'saml', name: 'Entra SAML', metadataXml: samlIdp.metadataXml, roleMapping: { attribute: 'groups', values: { sre: 'operator' } } });
    expect(created.statusCode, created.body).toBe(201);
    const { id, metadataUrl, callbackUrl } = created.json() as { id: string; metadataUrl: string; callbackUrl: string };
    const metadata = await get(`/api/v1/auth/saml/${id}/metadata`);
    expect(metadata.headers['content-type']).toContain('application/samlmetadata+xml');
    expect(metadata.body).toContain(`entityID="${metadataUrl}"`);
    expect(metadata.body).toContain('WantAssertionsSigned="true"');
    const start = await get(`/api/v1/auth/sso/${id}/start`);
    const SAMLResponse = samlIdp.response({ requestId: requestIdOf(String(start.headers.location)), audience: metadataUrl, recipient: callbackUrl, nameId: 'gus@corp.test', attributes: { groups: ['sre'] } });
    const acs = await env.app.server.inject({ method: 'POST', url: `/api/v1/auth/saml/${id}/acs`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ SAMLResponse }).toString() });
    expect(acs.statusCode, acs.body).toBe(302);
    expect(acs.headers.location).toBe('/');
    const me = await get('/api/v1/me', sessionCookieOf(acs));
    expect(me.json()).toMatchObject({ user: { email: 'gus@corp.test' }, role: 'operator', via: 'saml' });

    // A test sign-in whose assertion is refused (unsigned) shows the refusal, not the sign-in page.
    const test = await get(`/api/v1/auth/sso/${id}/start?test=1`);
    const unsigned = samlIdp.response({ requestId: requestIdOf(String(test.headers.location)), audience: metadataUrl, recipient: callbackUrl, nameId: 'gus@corp.test', sign: false });
    const shown = await env.app.server.inject({ method: 'POST', url: `/api/v1/auth/saml/${id}/acs`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ SAMLResponse: unsigned }).toString() });
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toMatchObject({ test: true, ok: false, reason: expect.stringContaining("is not signed by the identity provider's certificate") });
    // A test sign-in records nothing; a real one refused is in the log.
    expect((await env.api('GET', `/api/v1/audit?action=session.refused&target=session`)).json().items.filter((e: { via: string }) => e.via === 'saml')).toEqual([]);
    const real = await get(`/api/v1/auth/sso/${id}/start`);
    const unsignedReal = samlIdp.response({ requestId: requestIdOf(String(real.headers.location)), audience: metadataUrl, recipient: callbackUrl, nameId: 'gus@corp.test', sign: false });
    const refused = await env.app.server.inject({ method: 'POST', url: `/api/v1/auth/saml/${id}/acs`, remoteAddress: '198.51.100.40', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ SAMLResponse: unsignedReal }).toString() });
    expect(refused.statusCode).toBe(302);
    const saml = (await env.api('GET', '/api/v1/audit?action=session.refused')).json().items.filter((e: { via: string }) => e.via === 'saml');
    expect(saml).toEqual([expect.objectContaining({
      actor: { type: 'anonymous', email: null }, ip: '198.51.100.40', after: { provider: { id, name: 'Entra SAML', type: 'saml' }, reason: expect.stringContaining("is not signed by the identity provider's certificate") },
    })]);
    expect(JSON.stringify(saml)).not.toContain(unsignedReal.slice(0, 40));
  });
});

describe('single sign-on under the egress policy', () => {
  it('does not reach an OpenID provider on a network the operator did not open (the issuer is a tenant owner\'s input)', async () => {
    const idp = await startTestIdp([{ client_id: 'c', redirect_uris: [`${PUBLIC_URL}/cb`] }], {});
    const env = await startTestEnv('sqlite', { publicUrl: PUBLIC_URL, egressAllowNetworks: [] });
    try {
      const created = await env.api('POST', '/api/v1/sso-providers', { type: 'oidc', name: 'Internal', issuer: idp.issuer, clientId: 'c', roleMapping: { domains: { 'example.com': 'viewer' } } });
      const start = await env.app.server.inject({ method: 'GET', url: `/api/v1/auth/sso/${(created.json() as { id: string }).id}/start` });
      expect(decodeURIComponent(String(start.headers.location))).toMatch(/^\/signin\?error=the identity provider "Internal" could not be reached/);
      expect(env.logs.join('')).toContain('is a private, loopback or link-local address');
    } finally {
      await env.close();
      await idp.close();
    }
  });
});
