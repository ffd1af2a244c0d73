import type { Kysely } from 'kysely';
import type { CustomFetch } from 'openid-client';
import type { Database } from '../../store/schema.js';
import type { SecretBox } from '../secret-box.js';
import type { OidcDiscoveryCache } from './discovery.js';
import { authorizationRequest, discover, explainOidcFailure, finishSignIn, signedWithUnknownKey, type Discovered, type OidcSettings, type RecordedAnswer } from './oidc.js';
import { peekPending, savePending, takePending, type PendingSignIn } from './pending.js';
import { idpOf, oidcSettingsOf, roleMappingOf, type SsoProviderRow } from './providers.js';
import { mapIdentity, type Claims, type SsoRole } from './role-mapping.js';
import { acceptSamlResponse, claimedRequestId, SamlRefusal, samlAuthorizeUrl, serviceProviderFor } from './saml.js';

export interface SsoDeps {
  db: Kysely<Database>;
  box: SecretBox;
  now: () => number;
  /** How the service reaches an OpenID provider (the egress policy's fetch); the global fetch when absent. */
  fetch?: CustomFetch | undefined;
  /** Each provider's discovery document and keys, kept between sign-ins (one per app). */
  discovery: OidcDiscoveryCache;
}

/** Where a finished sign-in leads: a person and a role, or a refusal that says what to fix. */
export type SignInOutcome =
  | { ok: true; email: string; role: SsoRole; claims: Claims; returnTo: string; test: boolean }
  | { ok: false; reason: string; claims?: Claims; returnTo: string; test: boolean };

/** The redirect URI to register at an OpenID provider. */
export function oidcCallbackUrl(baseUrl: string, providerId: string): string {
  return `${baseUrl.replace(/\/$/, '')}/api/v1/auth/sso/${encodeURIComponent(providerId)}/callback`;
}

/** Where to send the browser to sign in with this provider; the pending sign-in is saved for the answer. */
export async function startSignIn(deps: SsoDeps, row: SsoProviderRow, baseUrl: string, options: { returnTo: string; test: boolean; browser?: string }): Promise<string> {
  const now = deps.now();
  const pending: PendingSignIn = { providerId: row.id, returnTo: options.returnTo, test: options.test, ...(options.browser ? { browser: options.browser } : {}) };
  if (row.type === 'saml') return samlAuthorizeUrl(deps.db, await idpOf(row), serviceProviderFor(baseUrl, row.id), pending, now);
  const settings = oidcSettingsOf(row, deps.box);
  const { config } = await configure(deps, row, settings);
  const request = await authorizationRequest(config, settings, oidcCallbackUrl(baseUrl, row.id));
  await savePending(deps.db, request.pending.state, { ...pending, nonce: request.pending.nonce, codeVerifier: request.pending.codeVerifier }, now);
  return request.url;
}

/**
 * The OpenID provider's answer at the callback: the state is used up first (a replay finds
 * nothing), then the code exchanged and the ID token checked, then the claims mapped to a role.
 */
export async function finishOidcSignIn(deps: SsoDeps, row: SsoProviderRow, baseUrl: string, query: Record<string, string>, browser?: string): Promise<SignInOutcome> {
  const pending = query.state ? await takePending(deps.db, query.state, row.id, deps.now()) : undefined;
  if (!pending?.nonce || !pending.codeVerifier) {
    return { ok: false, reason: 'this sign-in answer was already used, has expired, or was not started here: start the sign-in again', returnTo: '/', test: false };
  }
  const elsewhere = startedElsewhere(pending, browser);
  if (elsewhere) return elsewhere;
  const callbackUrl = new URL(oidcCallbackUrl(baseUrl, row.id));
  for (const [name, value] of Object.entries(query)) callbackUrl.searchParams.set(name, value);
  const settings = oidcSettingsOf(row, deps.box);
  const checks = { state: query.state ?? '', nonce: pending.nonce, codeVerifier: pending.codeVerifier };
  let discovered: Discovered | undefined;
  let claims: Claims;
  try {
    discovered = await configure(deps, row, settings);
    try {
      claims = await finishSignIn(discovered.config, callbackUrl, checks);
    } catch (error) {
      // Signed with a key the remembered configuration does not know (the provider rotated its
      // keys, perhaps to a new jwks_uri): read the configuration again, once, and check the same
      // answer with it (its code is used up: the provider is not asked for another).
      const answer = discovered.tokenAnswer();
      if (!discovered.reused || !answer || !signedWithUnknownKey(error)) throw error;
      deps.discovery.forget(row.id);
      discovered = await configure(deps, row, settings, answer);
      claims = await finishSignIn(discovered.config, callbackUrl, checks);
    }
  } catch (error) {
    return { ok: false, reason: explainOidcFailure(error, settings), returnTo: pending.returnTo, test: pending.test };
  } finally {
    // The keys fetched to check the answer serve the next sign-ins.
    if (discovered) deps.discovery.keep(row, settings.issuer, discovered);
  }
  return outcome(row, claims, pending);
}

/** The provider's configuration, from what earlier sign-ins read of it when that is still good. */
async function configure(deps: SsoDeps, row: SsoProviderRow, settings: OidcSettings, tokenAnswer?: RecordedAnswer): Promise<Discovered> {
  const discovered = await discover(settings, deps, { ...deps.discovery.memo(row, settings.issuer), ...(tokenAnswer ? { tokenAnswer } : {}) });
  deps.discovery.keep(row, settings.issuer, discovered);
  return discovered;
}

/** The SAML identity provider's answer at the ACS: node-saml's checks and pitcrew's, then the mapping. */
export async function finishSamlSignIn(deps: SsoDeps, row: SsoProviderRow, baseUrl: string, body: Record<string, string>, browser?: string): Promise<SignInOutcome> {
  try {
    const { claims, pending } = await acceptSamlResponse(deps.db, await idpOf(row), serviceProviderFor(baseUrl, row.id), row.id, body, deps.now());
    return startedElsewhere(pending, browser) ?? outcome(row, claims, pending);
  } catch (error) {
    if (!(error instanceof SamlRefusal)) throw error;
    const requestId = await claimedRequestId(body.SAMLResponse ?? '');
    const pending = requestId ? await peekPending(deps.db, requestId, row.id, deps.now()) : undefined;
    return { ok: false, reason: error.message, returnTo: '/', test: pending?.test ?? false };
  }
}

/**
 * A refusal when the answer came back through another browser than the one that started the
 * sign-in: otherwise someone could send a person a link that finishes the sender's own sign-in,
 * and the person would work, unknowing, in the sender's account (login CSRF).
 */
function startedElsewhere(pending: PendingSignIn, browser: string | undefined): SignInOutcome | undefined {
  if (!pending.browser || pending.browser === browser) return undefined;
  return { ok: false, reason: 'this sign-in was started in another browser, or this browser did not keep its cookie: start the sign-in again here', returnTo: pending.returnTo, test: pending.test };
}

function outcome(row: SsoProviderRow, claims: Claims, pending: PendingSignIn): SignInOutcome {
  const mapped = mapIdentity(roleMappingOf(row), claims);
  const common = { claims, returnTo: pending.returnTo, test: pending.test };
  return mapped.ok ? { ok: true, email: mapped.email, role: mapped.role, ...common } : { ok: false, reason: mapped.reason, ...common };
}
