import { describe, expect, it } from 'vitest';
import { parseIdpMetadata } from './saml-metadata.js';

const idp = (inner: string, entity = 'entityID="https://idp.test/e"') => `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" ${entity}><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${inner}</md:IDPSSODescriptor></md:EntityDescriptor>`;
const key = (use: string, cert: string) => `<md:KeyDescriptor${use ? ` use="${use}"` : ''}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
const redirect = '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.test/sso"/>';
const post = '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.test/post"/>';

describe('parseIdpMetadata', () => {
  it('reads the entity id, the HTTP-Redirect sign-in URL and the signing certificates (a KeyDescriptor without use signs too)', async () => {
    expect(await parseIdpMetadata(idp(`${key('signing', ' MIIB\n AAA ')}${key('encryption', 'ENC')}${key('', 'MIIC')}${post}${redirect}`))).toEqual({
      entityId: 'https://idp.test/e', ssoUrl: 'https://idp.test/sso', certificates: ['MIIBAAA', 'MIIC'],
    });
  });

  it('finds the IdP inside an EntitiesDescriptor', async () => {
    const wrapped = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${idp(`${key('signing', 'MIIB')}${redirect}`)}</md:EntitiesDescriptor>`;
    expect(await parseIdpMetadata(wrapped)).toMatchObject({ entityId: 'https://idp.test/e' });
  });

  it.each([
    ['not XML', '<md:EntityDescriptor', 'the metadata is not well-formed XML'],
    ['no IdP descriptor', '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>', 'the metadata has no EntityDescriptor with an entityID and an IDPSSODescriptor'],
    ['no redirect binding', idp(`${key('signing', 'MIIB')}${post}`), 'the metadata has no SingleSignOnService with the HTTP-Redirect binding'],
    ['no signing certificate', idp(`${key('encryption', 'ENC')}${redirect}`), 'the metadata has no signing certificate'],
  ])('says what is missing: %s', async (_name, xml, problem) => {
    const parsed = await parseIdpMetadata(xml);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });
});
