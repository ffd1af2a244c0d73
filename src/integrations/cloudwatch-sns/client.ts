import { createHash } from 'node:crypto';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { Secret } from '../../credentials/schema.js';
import type { PolicyFetch } from '../../egress/fetch.js';

/** Roles' temporary credentials kept for reuse across pages and runs (one AssumeRole an hour, not one a page). */
const ROLE_SESSIONS = 50;
/** Assumed again this long before they expire, as the SDK's own providers do. */
const REFRESH_BEFORE_MS = 5 * 60_000;

type RoleCredentials = Awaited<ReturnType<typeof assumeRole>>;

/**
 * The CloudWatch clients of pitcrew's reads (the import, import.ts; the graph source, graph.ts):
 * the stored AWS credential, or the role it names assumed at STS and kept until near expiry,
 * every request the SDK signs sent through the caller's fetch (the tenant's egress policy).
 */
export class CloudwatchClients {
  private readonly roles = new Map<string, RoleCredentials>();

  constructor(private readonly settings: { awsEndpoint?: string | undefined; stsEndpoint?: string | undefined } = {}) {}

  /** A CloudWatch client with the credential (or its role's), every request through `fetch`. */
  async client(region: string, secret: Secret<'aws'>, fetch: PolicyFetch, signal: AbortSignal): Promise<CloudWatchClient> {
    // The SDK loads with the first import page or graph (STS's with the first role assumed), not at
    // start: the two took ~0.1 s of CPU at every start, for tenants most of which read nothing from CloudWatch.
    const { CloudWatchClient } = await import('@aws-sdk/client-cloudwatch');
    const requestHandler = policyRequestHandler(fetch, signal);
    const keys = { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}) };
    const credentials = secret.roleArn ? () => this.roleCredentials(secret, region, requestHandler, signal) : keys;
    return new CloudWatchClient({ region, ...(this.settings.awsEndpoint ? { endpoint: this.settings.awsEndpoint } : {}), credentials, requestHandler, maxAttempts: 3 });
  }

  /**
   * The role's credentials, from the cache while they last. Keyed by a hash of the whole credential,
   * so a rotated secret or another role assumes anew.
   */
  private async roleCredentials(secret: Secret<'aws'>, region: string, requestHandler: ReturnType<typeof policyRequestHandler>, signal: AbortSignal): Promise<RoleCredentials> {
    const key = createHash('sha256').update(JSON.stringify([secret.accessKeyId, secret.secretAccessKey, secret.sessionToken, secret.roleArn, secret.externalId, region])).digest('hex');
    const known = this.roles.get(key);
    if (known && (known.expiration?.getTime() ?? 0) - REFRESH_BEFORE_MS > Date.now()) return known;
    const fresh = await assumeRole(secret, region, this.settings.stsEndpoint, requestHandler, signal);
    this.roles.delete(key);
    this.roles.set(key, fresh);
    for (const oldest of this.roles.keys()) {
      if (this.roles.size <= ROLE_SESSIONS) break;
      this.roles.delete(oldest);
    }
    return fresh;
  }
}

/**
 * The SDK's HTTP handler, made of the import's fetch: the SDK builds and signs each request (SigV4),
 * this sends it as it is, under the egress policy, and gives the SDK the answer's status, headers and bytes.
 */
export function policyRequestHandler(fetch: PolicyFetch, signal: AbortSignal) {
  return {
    async handle(request: { method: string; protocol: string; hostname: string; port?: number; path: string; query?: Record<string, string | string[] | null>; headers: Record<string, string>; body?: unknown }) {
      const query = Object.entries(request.query ?? {})
        .flatMap(([name, value]) => (value === null ? [encodeURIComponent(name)] : (Array.isArray(value) ? value : [value]).map((v) => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`)))
        .join('&');
      const url = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}${request.path}${query ? `?${query}` : ''}`;
      // The JSON protocol's body is text, as a string or as bytes (a Uint8Array whose valueOf the SDK warns about: read its bytes).
      const raw = request.body;
      const body = raw === undefined || raw === null ? undefined : typeof raw === 'string' ? raw : raw instanceof Uint8Array ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : String(raw);
      const response = await fetch(url, { method: request.method, headers: request.headers, ...(body === undefined ? {} : { body }), signal });
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return { response: { statusCode: response.status, reason: response.statusText, headers, body: new Uint8Array(await response.arrayBuffer()) } };
    },
    updateHttpClientConfig(): void {},
    httpHandlerConfigs(): Record<string, never> {
      return {};
    },
    destroy(): void {},
  };
}

/** The role's temporary credentials, assumed at STS with the keys, through the same handler. */
async function assumeRole(secret: Secret<'aws'>, region: string, stsEndpoint: string | undefined, requestHandler: ReturnType<typeof policyRequestHandler>, signal: AbortSignal) {
  const { AssumeRoleCommand, STSClient } = await import('@aws-sdk/client-sts');
  const sts = new STSClient({ region, ...(stsEndpoint ? { endpoint: stsEndpoint } : {}), credentials: { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}) }, requestHandler, maxAttempts: 3 });
  try {
    const command = new AssumeRoleCommand({ RoleArn: secret.roleArn, RoleSessionName: 'pitcrew-import', DurationSeconds: 3600, ...(secret.externalId ? { ExternalId: secret.externalId } : {}) });
    const { Credentials: c } = await sts.send(command, { abortSignal: signal });
    if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error('STS answered without credentials');
    return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
  } catch (error) {
    throw Object.assign(new Error(`sts:AssumeRole of ${secret.roleArn} failed`), { assumeRole: true, cause: error });
  } finally {
    sts.destroy();
  }
}
