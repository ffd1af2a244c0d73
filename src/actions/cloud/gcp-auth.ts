import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { gaxios, OAuth2Client } from 'google-auth-library';
import type { GcpEndpoints } from '../../config/config.js';

/** What pitcrew takes from a service account's JSON key file; its token_uri and every other field are ignored. */
export interface ServiceAccountKey {
  projectId: string;
  clientEmail: string;
  signingKey: KeyObject;
  privateKeyId: string | undefined;
}

/** An answer of Google's token endpoint or of Compute other than the one asked for: its status, Google's reason and message. */
export class GcpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    override readonly name: string,
    /** The call refused, when it is not the one being made: the token behind it, or the operation a DONE operation reports on. */
    readonly call?: string,
  ) {
    super(message);
  }
}

/**
 * The assertion's audience wherever it is sent: Google documents it as "always
 * https://oauth2.googleapis.com/token" (developers.google.com/identity/protocols/oauth2/service-account,
 * "Forming the JWT claim set"), and google-auth-library's gtoken signs that too.
 */
const TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
/** Compute Engine's own scope: what instances.get/start/stop/reset/delete/aggregatedList need, not cloud-platform. */
export const COMPUTE_SCOPE = 'https://www.googleapis.com/auth/compute';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google's most: an assertion valid for an hour. */
const ASSERTION_SECONDS = 3600;

/** The key file's fields pitcrew uses, its private key read, or why it cannot be used (never quoting it). */
export function serviceAccountKey(json: string): ServiceAccountKey | string {
  let key: Record<string, unknown>;
  try {
    key = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return "the credential's serviceAccountJson is not JSON";
  }
  const missing = ['project_id', 'client_email', 'private_key'].filter((field) => typeof key[field] !== 'string' || key[field] === '');
  if (missing.length > 0 || key.type !== 'service_account') return `the credential's serviceAccountJson is not a service account key${missing.length > 0 ? ` (it lacks ${missing.join(', ')})` : ''}`;
  let signingKey: KeyObject;
  try {
    signingKey = createPrivateKey(key.private_key as string);
  } catch {
    // Node's message names its decoder, never the key; still, say only what is wrong.
    return "the private_key of the credential's key file is not a PEM private key";
  }
  return { projectId: key.project_id as string, clientEmail: key.client_email as string, signingKey, privateKeyId: typeof key.private_key_id === 'string' ? key.private_key_id : undefined };
}

/** Every text of a key file that must never be quoted: the file whole, its private key as read and as written in the file, each line of it. */
export function keySecrets(json: string): string[] {
  let pem: unknown;
  try {
    pem = (JSON.parse(json) as { private_key?: unknown }).private_key;
  } catch {
    return [json];
  }
  if (typeof pem !== 'string' || pem === '') return [json];
  const lines = pem.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [json, pem, JSON.stringify(pem).slice(1, -1), ...lines];
}

/**
 * The OAuth2 client Compute calls are made with (google-auth-library's, given to the SDK as its
 * `authClient`): it asks the operator's token endpoint (PITCREW_GCP_TOKEN_URL) for an access token
 * with the JWT-bearer grant (RFC 7523), signed with the service account's private key, keeps it
 * until five minutes before it expires, and asks once at a time however many calls wait for it.
 *
 * It is not google-auth-library's JWT client because that one posts to Google's fixed token URL,
 * or, with the SDK's default endpoint, signs its own bearer token for compute.googleapis.com: the
 * operator's endpoints could not be honoured. Nothing here reads the key's token_uri (a tenant
 * wrote it: an address the service would post to) nor asks the metadata server (the service's own
 * identity when it runs on GCE): its transport goes to the two configured endpoints only.
 */
export class ServiceAccountAuth extends OAuth2Client {
  readonly #account: ServiceAccountKey;
  readonly #tokenUrl: string;
  #pending: Promise<{ access_token: string; expiry_date: number }> | undefined;

  constructor(account: ServiceAccountKey, endpoints: GcpEndpoints, timeoutMs: number) {
    super({ transporter: guardedTransport(endpoints, timeoutMs) });
    this.#account = account;
    this.#tokenUrl = endpoints.tokenUrl;
    this.refreshHandler = () => (this.#pending ??= this.#exchange().finally(() => (this.#pending = undefined)));
  }

  /** Drops the access token, for one Compute no longer takes (revoked, the key disabled): the next call asks again. */
  forgetToken(): void {
    this.credentials = {};
  }

  async #exchange(): Promise<{ access_token: string; expiry_date: number }> {
    const iat = Math.floor(Date.now() / 1000);
    const claims = { iss: this.#account.clientEmail, scope: COMPUTE_SCOPE, aud: TOKEN_AUDIENCE, iat, exp: iat + ASSERTION_SECONDS };
    const body = new URLSearchParams({ grant_type: JWT_BEARER, assertion: signedJwt(claims, this.#account.privateKeyId, this.#account.signingKey) });
    const call = `a token for ${this.#account.clientEmail}`;
    let answer: gaxios.GaxiosResponse<{ access_token?: unknown; expires_in?: unknown }>;
    try {
      answer = await this.transporter.request({ url: this.#tokenUrl, method: 'POST', data: body, headers: { 'content-type': 'application/x-www-form-urlencoded' }, responseType: 'json' });
    } catch (error) {
      throw tokenRefusal(error, call);
    }
    const { access_token: token, expires_in: lifetime } = answer.data;
    if (typeof token !== 'string' || token === '') throw new GcpRefusal(answer.status, 'the token endpoint answered without an access_token', 'NoAccessToken', call);
    return { access_token: token, expiry_date: Date.now() + (Number(lifetime) > 0 ? Number(lifetime) : 3600) * 1000 };
  }
}

/** header.claims.signature, RS256 (RFC 7515), with the key's id as Google's own client libraries send it. */
function signedJwt(claims: Record<string, unknown>, keyId: string | undefined, key: KeyObject): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(keyId ? { kid: keyId } : {}) };
  const input = `${base64url(header)}.${base64url(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Google's `{"error": "invalid_grant", "error_description": "Invalid JWT Signature."}`, or the failure as it was. */
function tokenRefusal(error: unknown, call: string): unknown {
  const response = (error as { response?: { status?: number; data?: unknown } }).response;
  if (response?.status === undefined) return error;
  const data = (typeof response.data === 'object' && response.data !== null ? response.data : {}) as { error?: unknown; error_description?: unknown };
  const name = typeof data.error === 'string' ? data.error : 'error';
  const message = typeof data.error_description === 'string' ? data.error_description : `the token endpoint answered HTTP ${response.status}`;
  return new GcpRefusal(response.status, message, name, call);
}

/**
 * The HTTP client of the token exchange and of every Compute call: it reaches the configured
 * token URL and the Compute endpoint's origin and nothing else, and gives up on a call after
 * `timeoutMs` (the SDK's own timeout does not stop a REST call that hangs).
 */
function guardedTransport(endpoints: GcpEndpoints, timeoutMs: number): gaxios.Gaxios {
  const transport = new gaxios.Gaxios({ timeout: timeoutMs, retry: false });
  const computeOrigin = new URL(endpoints.computeUrl).origin;
  const tokenUrl = new URL(endpoints.tokenUrl).href;
  transport.interceptors.request.add({
    resolved: async (config) => {
      const url = new URL(String(config.url));
      if (url.origin === computeOrigin || `${url.origin}${url.pathname}` === tokenUrl) return config;
      throw new Error(`pitcrew calls GCP only at PITCREW_GCP_COMPUTE_URL (${computeOrigin}) and PITCREW_GCP_TOKEN_URL (${tokenUrl}), not ${url.origin}`);
    },
  });
  return transport;
}
