import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import selfsigned from 'selfsigned';
import { SignedXml } from 'xml-crypto';

/**
 * A SAML 2.0 identity provider for the SSO tests: an RSA key and a self-signed certificate made
 * here, its metadata, and Responses whose Assertion it signs (enveloped XML signature, exclusive
 * C14N, RSA-SHA256, as the SAML 2.0 bindings §3.5 and common IdPs such as Keycloak and Entra ID do),
 * with each part a test may want wrong (audience, recipient, times) given by the test.
 */
export interface TestSamlIdp {
  entityId: string;
  metadataXml: string;
  /** A base64 SAMLResponse for the request `requestId`, signed unless `sign` is false. */
  response(options: AssertionOptions): string;
}

export interface AssertionOptions {
  requestId: string;
  audience: string;
  recipient: string;
  nameId: string;
  attributes?: Record<string, string[]>;
  notOnOrAfter?: Date;
  sign?: boolean;
  /** Changes the signed XML afterwards, as an attacker would (the signature no longer matches). */
  tamper?: (xml: string) => string;
}

const SSO_URL = 'https://idp.test/sso';

export async function startTestSamlIdp(): Promise<TestSamlIdp> {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'idp.test' }], { algorithm: 'sha256', keyPair: { privateKey: keys.privateKey, publicKey: keys.publicKey } });
  const certBase64 = pems.cert.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const entityId = 'https://idp.test/metadata';
  const metadataXml = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAuthnRequestsSigned="false">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${SSO_URL}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
  return {
    entityId,
    metadataXml,
    response: (options) => {
      const xml = responseXml(entityId, options);
      const signed = options.sign === false ? xml : signAssertion(xml, keys.privateKey, pems.cert);
      return Buffer.from(options.tamper ? options.tamper(signed) : signed).toString('base64');
    },
  };
}

/** The AuthnRequest id in a redirect-binding URL (SAMLRequest: deflated, base64). */
export function requestIdOf(url: string): string {
  const request = inflateRawSync(Buffer.from(new URL(url).searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
  const id = /\sID="([^"]+)"/.exec(request)?.[1];
  if (!id) throw new Error(`no ID in the AuthnRequest ${request}`);
  return id;
}

function responseXml(issuer: string, options: AssertionOptions): string {
  const now = new Date();
  const notOnOrAfter = (options.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)).toISOString();
  const issued = new Date(Math.min(now.getTime(), Date.parse(notOnOrAfter) - 60_000)).toISOString();
  const attributes = Object.entries(options.attributes ?? {}).map(([name, values]) =>
    `<saml:Attribute Name="${name}">${values.map((value) => `<saml:AttributeValue>${value}</saml:AttributeValue>`).join('')}</saml:Attribute>`).join('');
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomUUID()}" Version="2.0" IssueInstant="${issued}" Destination="${options.recipient}" InResponseTo="${options.requestId}">`
    + `<saml:Issuer>${issuer}</saml:Issuer>`
    + '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>'
    + `<saml:Assertion ID="_${randomUUID()}" Version="2.0" IssueInstant="${issued}">`
    + `<saml:Issuer>${issuer}</saml:Issuer>`
    + `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${options.nameId}</saml:NameID>`
    + `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${options.requestId}" Recipient="${options.recipient}" NotOnOrAfter="${notOnOrAfter}"/></saml:SubjectConfirmation></saml:Subject>`
    + `<saml:Conditions NotBefore="${issued}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${options.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
    + `<saml:AuthnStatement AuthnInstant="${issued}" SessionIndex="_session"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
    + `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`
    + '</saml:Assertion></samlp:Response>';
}

function signAssertion(xml: string, privateKey: string, cert: string): string {
  const signer = new SignedXml({
    privateKey,
    publicCert: cert,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  });
  signer.addReference({
    xpath: "//*[local-name(.)='Assertion']",
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  // The Signature goes right after the Assertion's Issuer, where the SAML schema puts it.
  signer.computeSignature(xml, { location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  return signer.getSignedXml();
}
