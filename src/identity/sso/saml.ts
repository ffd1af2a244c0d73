import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import { hasPending, savePending, takePending, type PendingSignIn } from './pending.js';
import type { Claims } from './role-mapping.js';
import type { IdpMetadata } from './saml-metadata.js';

/** pitcrew as a SAML service provider for one configured identity provider. */
export interface SamlServiceProvider {
  /** The SP entity id: its metadata URL, so the IdP admin can fetch it from there. */
  entityId: string;
  /** The Assertion Consumer Service: where the IdP posts its answer. */
  acsUrl: string;
}

export function serviceProviderFor(baseUrl: string, providerId: string): SamlServiceProvider {
  const base = `${baseUrl.replace(/\/$/, '')}/api/v1/auth/saml/${encodeURIComponent(providerId)}`;
  return { entityId: `${base}/metadata`, acsUrl: `${base}/acs` };
}

/** A SAML answer refused, with what to fix; never the assertion itself. */
export class SamlRefusal extends Error {}

const ASSERTION_MAX_AGE_MS = 10 * 60 * 1000;

type NodeSaml = typeof import('@node-saml/node-saml');

/**
 * node-saml with its XML signature and encryption libraries, and xml2js below, are loaded by the
 * first SAML sign-in or metadata read: they took ~0.1 s of CPU at every start, before the service
 * listened, for tenants most of which have no SAML provider.
 */
const nodeSaml = (): Promise<NodeSaml> => import('@node-saml/node-saml');

/**
 * node-saml, configured to refuse what DESIGN §7 and issue 37 say it must: assertions unsigned by
 * the IdP's certificate (wantAssertionsSigned), for another audience (the SP entity id), past
 * NotOnOrAfter, or answering no request this service made (InResponseTo always checked against
 * the pending sign-ins in the database, so any node of a cluster can receive the answer).
 */
function samlFor({ SAML, ValidateInResponseTo }: NodeSaml, idp: IdpMetadata, sp: SamlServiceProvider, cache: CacheProvider): SAML {
  return new SAML({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    entryPoint: idp.ssoUrl,
    idpIssuer: idp.entityId,
    idpCert: idp.certificates,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: ASSERTION_MAX_AGE_MS,
    maxAssertionAgeMs: ASSERTION_MAX_AGE_MS,
    acceptedClockSkewMs: 60_000,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    cacheProvider: cache,
  });
}

/** Requests are remembered in `sso_pending`; pitcrew removes one itself once the answer is accepted (takePending). */
function pendingCache(db: Kysely<Database>, pending: PendingSignIn | undefined, now: number): CacheProvider {
  return {
    saveAsync: async (key, value) => {
      if (!pending) throw new Error('no sign-in to remember');
      await savePending(db, key, pending, now);
      return { value, createdAt: now };
    },
    // node-saml reads the value as the request's creation time; the row's own expiry already applies.
    getAsync: async (key) => ((await hasPending(db, key, now)) ? new Date(now).toISOString() : null),
    removeAsync: async (key) => key,
  };
}

/** Where to send the browser: the IdP's sign-in URL with a deflated AuthnRequest whose id is remembered. */
export async function samlAuthorizeUrl(db: Kysely<Database>, idp: IdpMetadata, sp: SamlServiceProvider, pending: PendingSignIn, now: number): Promise<string> {
  return samlFor(await nodeSaml(), idp, sp, pendingCache(db, pending, now)).getAuthorizeUrlAsync('', undefined, {});
}

/** The SP metadata the IdP admin loads: entity id, ACS (HTTP-POST), and that assertions must be signed. */
export async function samlMetadata(idp: IdpMetadata, sp: SamlServiceProvider): Promise<string> {
  const unused: CacheProvider = { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null };
  return samlFor(await nodeSaml(), idp, sp, unused).generateServiceProviderMetadata(null, null);
}

/**
 * The claims of an accepted SAML answer and the sign-in it answers (used up), or a SamlRefusal
 * saying why not. Beyond node-saml's checks, the signed assertion's SubjectConfirmationData
 * Recipient, and the response's Destination when present, must be this provider's ACS: an
 * assertion made for another service provider is not accepted here.
 */
export async function acceptSamlResponse(db: Kysely<Database>, idp: IdpMetadata, sp: SamlServiceProvider, providerId: string, body: Record<string, string>, now: number): Promise<{ claims: Claims; pending: PendingSignIn }> {
  const lib = await nodeSaml();
  let profile: Profile | null;
  try {
    ({ profile } = await samlFor(lib, idp, sp, pendingCache(db, undefined, now)).validatePostResponseAsync(body));
  } catch (error) {
    throw new SamlRefusal(explainSamlFailure(error));
  }
  if (!profile) throw new SamlRefusal('the identity provider sent a logout, not a sign-in');
  await checkRecipient(profile, sp);
  const pending = typeof profile.inResponseTo === 'string' ? await takePending(db, profile.inResponseTo, providerId, now) : undefined;
  if (!pending) throw new SamlRefusal('this answer was already used, or answers a sign-in that expired: start the sign-in again');
  return { claims: claimsOf(profile), pending };
}

async function checkRecipient(profile: Profile, sp: SamlServiceProvider): Promise<void> {
  const response = await parse(profile.getSamlResponseXml?.() ?? '');
  const destination = (response.Response as { $?: { Destination?: string } } | undefined)?.$?.Destination;
  if (destination !== undefined && destination !== sp.acsUrl) {
    throw new SamlRefusal(`the response is addressed to ${destination}, and this provider's ACS URL is ${sp.acsUrl}: set the ACS URL at the identity provider`);
  }
  const assertion = await parse(profile.getAssertionXml?.() ?? '');
  const recipients = collect(assertion, 'SubjectConfirmationData').map((data) => data.$?.Recipient);
  if (recipients.length === 0 || recipients.some((recipient) => recipient !== sp.acsUrl)) {
    throw new SamlRefusal(`the assertion's Recipient is ${recipients.map((one) => one ?? 'missing').join(', ') || 'missing'}, and this provider's ACS URL is ${sp.acsUrl}: set the ACS URL at the identity provider`);
  }
}

/**
 * The request id a SAML answer says it answers, read without checking anything: only to tell
 * whether a refused answer belongs to a test sign-in (shown as JSON rather than on the sign-in page).
 */
export async function claimedRequestId(samlResponse: string): Promise<string | undefined> {
  try {
    const response = await parse(Buffer.from(samlResponse, 'base64').toString('utf8'));
    return (response.Response as { $?: { InResponseTo?: string } } | undefined)?.$?.InResponseTo;
  } catch {
    return undefined;
  }
}

type XmlNode = { $?: Record<string, string>; [child: string]: unknown };

async function parse(xml: string): Promise<XmlNode> {
  if (!xml) return {};
  const { parseStringPromise, processors } = await import('xml2js');
  return (await parseStringPromise(xml, { tagNameProcessors: [processors.stripPrefix] })) as XmlNode;
}

function collect(node: unknown, name: string): XmlNode[] {
  if (Array.isArray(node)) return node.flatMap((child) => collect(child, name));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$' ? [] : [
    ...(key === name ? (Array.isArray(value) ? value : [value]).filter((one): one is XmlNode => typeof one === 'object') : []),
    ...collect(value, name),
  ]));
}

/** The attributes as claims, with the NameID (often the e-mail) beside them. */
function claimsOf(profile: Profile): Claims {
  const attributes = (profile.attributes ?? {}) as Claims;
  return { ...attributes, nameID: profile.nameID, ...(profile.email ? { email: profile.email } : {}), ...(profile.mail ? { mail: profile.mail } : {}) };
}

/** node-saml's reasons, worded for the person who configures the provider. */
function explainSamlFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : 'unreadable answer';
  if (/Invalid signature|Invalid document signature|No valid assertion/i.test(message) || /signature/i.test(message)) {
    return `the assertion is not signed by the identity provider's certificate (${message}): the IdP must sign assertions, and the metadata here must hold its current signing certificate`;
  }
  if (/audience mismatch/i.test(message)) return `the assertion is for another service provider (${message}): set the audience / entity id at the IdP to this provider's metadata URL`;
  if (/expired|NotOnOrAfter|NotBefore|too old|No valid subject confirmation/i.test(message)) return `the assertion is expired or not yet valid (${message}): check the clocks of pitcrew and the identity provider`;
  if (/InResponseTo/i.test(message)) return `the answer does not match a sign-in started here (${message}): start the sign-in from pitcrew again`;
  return `the SAML answer was refused: ${message}`;
}
