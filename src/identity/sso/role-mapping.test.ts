import { describe, expect, it } from 'vitest';
import { mapIdentity, type Claims, type RoleMapping } from './role-mapping.js';

const publicMapping: RoleMapping = { domains: { 'example.com': 'operator', 'Ops.Example.org': 'admin' } };
const groupMapping: RoleMapping = { claim: 'groups', groups: { 'sre-admins': 'admin', sre: 'operator' } };
const attributeMapping: RoleMapping = { attribute: 'memberOf', values: { viewers: 'viewer' }, default: 'viewer' };

describe('mapIdentity', () => {
  it.each<[string, RoleMapping, Claims, ReturnType<typeof mapIdentity>]>([
    ['a verified e-mail in a mapped domain', publicMapping, { email: 'Ann@Example.com', email_verified: true }, { ok: true, email: 'ann@example.com', role: 'operator' }],
    ['domains match without regard to case', publicMapping, { email: 'bo@ops.example.org', email_verified: true }, { ok: true, email: 'bo@ops.example.org', role: 'admin' }],
    ['an unverified e-mail', publicMapping, { email: 'ann@example.com', email_verified: false }, { ok: false, reason: 'the identity provider has not verified the e-mail ann@example.com' }],
    ['an e-mail whose verification is not said', publicMapping, { email: 'ann@example.com' }, { ok: false, reason: 'the identity provider has not verified the e-mail ann@example.com' }],
    ['a domain not mapped', publicMapping, { email: 'eve@example.net', email_verified: true }, { ok: false, reason: 'the e-mail domain example.net is not mapped to a role for this provider' }],
    ['a subdomain is not its parent', publicMapping, { email: 'eve@evil.example.com', email_verified: true }, { ok: false, reason: 'the e-mail domain evil.example.com is not mapped to a role for this provider' }],
    ['no e-mail at all', publicMapping, { sub: '1' }, { ok: false, reason: 'the identity provider sent no e-mail address (ask for the "email" scope)' }],
    ['the highest of several groups', groupMapping, { email: 'cy@corp.test', groups: ['sre', 'sre-admins'] }, { ok: true, email: 'cy@corp.test', role: 'admin' }],
    ['a single group as a string', groupMapping, { email: 'cy@corp.test', groups: 'sre' }, { ok: true, email: 'cy@corp.test', role: 'operator' }],
    ['no mapped group and no default', groupMapping, { email: 'cy@corp.test', groups: ['finance'] }, { ok: false, reason: 'cy@corp.test has "groups" values "finance", and none of them is mapped to a role (nor is there a default role)' }],
    ['no group claim and no default', groupMapping, { email: 'cy@corp.test' }, { ok: false, reason: 'cy@corp.test has no "groups" values, and none of them is mapped to a role (nor is there a default role)' }],
    ['an enterprise e-mail said to be unverified', groupMapping, { email: 'cy@corp.test', email_verified: false, groups: ['sre'] }, { ok: false, reason: 'the identity provider says the e-mail cy@corp.test is not verified' }],
    ['preferred_username when there is no email claim', groupMapping, { preferred_username: 'Dee@Corp.test', groups: ['sre'] }, { ok: true, email: 'dee@corp.test', role: 'operator' }],
    ['a SAML attribute falls back to the default role', attributeMapping, { nameID: 'ed@corp.test', memberOf: ['other'] }, { ok: true, email: 'ed@corp.test', role: 'viewer' }],
    ['a SAML mail attribute', attributeMapping, { nameID: 'opaque-id', mail: 'fay@corp.test', memberOf: 'viewers' }, { ok: true, email: 'fay@corp.test', role: 'viewer' }],
  ])('%s', (_name, mapping, claims, expected) => {
    expect(mapIdentity(mapping, claims)).toEqual(expected);
  });
});
