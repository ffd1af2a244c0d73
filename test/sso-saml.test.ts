import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../src/identity/secret-box.js';
import { OidcDiscoveryCache } from '../src/identity/sso/discovery.js';
import { createProvider, type SsoProviderRow } from '../src/identity/sso/providers.js';
import { serviceProviderFor } from '../src/identity/sso/saml.js';
import { finishSamlSignIn, startSignIn, type SsoDeps } from '../src/identity/sso/sign-in.js';
import type { Store } from '../src/store/database.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { requestIdOf, startTestSamlIdp, type AssertionOptions, type TestSamlIdp } from './support/saml-idp.js';

const BASE = 'http://127.0.0.1:9';

describe.each(testDialects())('SAML 2.0 sign-in with an IdP that signs real assertions (%s)', (dialect) => {
  let database: TestDatabase;
  let store: Store;
  let idp: TestSamlIdp;
  let provider: SsoProviderRow;
  const box = new SecretBox(randomBytes(32));
  const discovery = new OidcDiscoveryCache(() => Date.now());
  const deps = (): SsoDeps => ({ db: store.db, box, now: () => Date.now(), discovery });

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    store = database.open();
    idp = await startTestSamlIdp();
    provider = await createProvider(store.db, box, 'tenant-1', {
      type: 'saml', name: 'Corporate SAML', metadataXml: idp.metadataXml,
      roleMapping: { attribute: 'groups', values: { 'sre-admins': 'admin', sre: 'operator' } },
    });
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  /** Starts a sign-in at pitcrew, then posts the IdP's answer to it, built from `options`. */
  async function answer(options: Partial<AssertionOptions> = {}) {
    const sp = serviceProviderFor(BASE, provider.id);
    const url = await startSignIn(deps(), provider, BASE, { returnTo: '/', test: false });
    expect(url.startsWith('https://idp.test/sso?SAMLRequest=')).toBe(true);
    const SAMLResponse = idp.response({ requestId: requestIdOf(url), audience: sp.entityId, recipient: sp.acsUrl, nameId: 'dee@corp.test', attributes: { groups: ['sre', 'sre-admins'] }, ...options });
    return { body: { SAMLResponse }, outcome: await finishSamlSignIn(deps(), provider, BASE, { SAMLResponse }) };
  }

  it('accepts a signed assertion for this service provider, and maps the group attribute to a role', async () => {
    const { outcome } = await answer();
    expect(outcome).toMatchObject({ ok: true, email: 'dee@corp.test', role: 'admin' });
  });

  it('refuses the same answer posted twice (replay)', async () => {
    const { body, outcome } = await answer();
    expect(outcome.ok).toBe(true);
    const replay = await finishSamlSignIn(deps(), provider, BASE, body);
    expect(replay.ok).toBe(false);
    expect(replay).toMatchObject({ reason: expect.stringContaining('start the sign-in from pitcrew again') });
  });

  it('refuses a tampered assertion (a group added after signing)', async () => {
    const { outcome } = await answer({ attributes: { groups: ['sre'] }, tamper: (xml) => xml.replace('<saml:AttributeValue>sre</saml:AttributeValue>', '<saml:AttributeValue>sre-admins</saml:AttributeValue>') });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining("is not signed by the identity provider's certificate") });
  });

  it('refuses an unsigned assertion', async () => {
    const { outcome } = await answer({ sign: false });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining("is not signed by the identity provider's certificate") });
  });

  it('refuses an expired assertion (past NotOnOrAfter)', async () => {
    const { outcome } = await answer({ notOnOrAfter: new Date(Date.now() - 5 * 60_000) });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining('the assertion is expired or not yet valid') });
  });

  it('refuses an assertion for another audience', async () => {
    const { outcome } = await answer({ audience: 'https://another-sp.test/metadata' });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining('the assertion is for another service provider') });
  });

  it('refuses an assertion made for another recipient (ACS URL)', async () => {
    const { outcome } = await answer({ recipient: 'https://another-sp.test/acs' });
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining("this provider's ACS URL is") });
  });

  it('refuses a person whose groups map to no role', async () => {
    const { outcome } = await answer({ attributes: { groups: ['finance'] } });
    expect(outcome).toMatchObject({ ok: false, reason: 'dee@corp.test has "groups" values "finance", and none of them is mapped to a role (nor is there a default role)' });
  });
});
