import { createHash } from 'node:crypto';
import type { FieldError } from '../../errors/catalogue.js';
import type { PolicyFetch } from '../../egress/fetch.js';
import { shownUrl, ToolImportError } from '../tool-api.js';
import { isRecord } from '../values.js';
import { issueToken, MonascaApiError, type KeystoneCredentials } from './keystone.js';

/** What a token is asked with: the secret (a token, or a Keystone login), the call's fetch, the time. */
export interface TokenRequest {
  secret: unknown;
  fetch: PolicyFetch;
  now: number;
}

/**
 * The Keystone tokens of Monasca's reads (the import, import.ts; the graph source, graph.ts): the
 * token the integration keeps, or one issued from a Keystone login and kept, by login, until
 * shortly before Keystone says it expires.
 */
export class KeystoneTokens {
  private readonly tokens = new Map<string, { id: string; until: number }>();

  constructor(private readonly use: 'import' | 'graph') {}

  /** The call made with a token: the login's (cached; issued again once if Monasca refuses it), or the one the integration keeps. */
  async withToken<T>(request: TokenRequest, call: (token: string) => Promise<T>): Promise<T> {
    if (typeof request.secret === 'string') return call(request.secret);
    const login = keystoneLogin(request.secret);
    if (!login) throw new ToolImportError(this.use === 'import' ? 'the Monasca import has no token: set the import’s secret to a Keystone login (docs/incidents-import.md), or keep a token on the integration (POST …/monasca/token)' : 'Monasca graphs have no token: set the integration’s graph secret to a Keystone login (docs/graph-snapshots.md#monasca), or keep a token on the integration (POST …/monasca/token)');
    const key = createHash('sha256').update(JSON.stringify(login)).digest('hex');
    const cached = this.tokens.get(key);
    if (cached && cached.until > request.now) {
      try {
        return await call(cached.id);
      } catch (error) {
        if (!(error instanceof ToolImportError) || error.toolStatus !== 401) throw error;
        this.tokens.delete(key);
      }
    }
    let token;
    try {
      token = await issueToken(login, { fetch: request.fetch });
    } catch (error) {
      if (!(error instanceof MonascaApiError)) throw error;
      // keystone.ts says what to do; the address and the answer are added where it does not name them.
      const url = `${login.identityUrl.replace(/\/+$/, '').replace(/\/(v2\.0|v3)$/, '')}${login.version === 'v3' ? '/v3/auth/tokens' : '/v2.0/tokens'}`;
      const where = error.message.includes(url) ? '' : ` (Keystone at ${shownUrl(url)}${error.status === undefined ? '' : ` answered HTTP ${error.status}`})`;
      throw new ToolImportError(`${error.message}${where}`, { ...(error.status === undefined ? {} : { toolStatus: error.status }), ...(error.kind === 'unreachable' ? { code: 'PITCREW_ERR_TOOL_UNAVAILABLE' as const } : {}) });
    }
    const expires = token.expiresAt === undefined ? Number.NaN : Date.parse(token.expiresAt);
    this.tokens.set(key, { id: token.id, until: Number.isNaN(expires) ? request.now + 10 * 60_000 : expires - 60_000 });
    return call(token.id);
  }
}

/** A Keystone login of an import's or graph's secret, as the token route takes it (monasca/routes.ts KeystoneLogin). */
export function keystoneLogin(secret: unknown): KeystoneCredentials | undefined {
  if (!isRecord(secret) || keystoneLoginErrors(secret, '').length > 0) return undefined;
  const text = (name: string) => secret[name] as string;
  const optional = (name: string) => (typeof secret[name] === 'string' ? (secret[name] as string) : undefined);
  if (secret.version === 'v2.0') return { version: 'v2.0', identityUrl: text('identityUrl'), username: text('username'), password: text('password'), tenantName: text('project') };
  return { version: 'v3', identityUrl: text('identityUrl'), username: text('username'), password: text('password'), projectName: text('project'), userDomainName: optional('userDomainName'), projectDomainName: optional('projectDomainName') };
}


const TEXT_FIELDS = ['identityUrl', 'username', 'password', 'project', 'userDomainName', 'projectDomainName'] as const;

export function keystoneLoginErrors(secret: Record<string, unknown>, at: string): FieldError[] {
  const errors: FieldError[] = [];
  if (secret.version !== 'v3' && secret.version !== 'v2.0') errors.push({ path: `${at}/version`, message: 'version: "v3" (POST /v3/auth/tokens) or "v2.0" (POST /v2.0/tokens)' });
  for (const name of TEXT_FIELDS) {
    const value = secret[name];
    const optional = name === 'userDomainName' || name === 'projectDomainName';
    if (value === undefined && optional) continue;
    if (typeof value !== 'string' || value === '') errors.push({ path: `${at}/${name}`, message: `${name}: a non-empty string${optional ? ' when given' : ''}` });
  }
  for (const name of Object.keys(secret)) {
    if (name !== 'version' && !(TEXT_FIELDS as readonly string[]).includes(name)) errors.push({ path: `${at}/${name}`, message: `${name} is not part of a Keystone login (version, identityUrl, username, password, project, userDomainName, projectDomainName)` });
  }
  if (typeof secret.identityUrl === 'string' && !/^https?:\/\//.test(secret.identityUrl)) errors.push({ path: `${at}/identityUrl`, message: 'identityUrl: Keystone’s http or https address, e.g. http://keystone:5000' });
  return errors;
}
