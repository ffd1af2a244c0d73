import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_KEY } from '../src/identity/access.js';
import { roleAtLeast, ROLES, type Role } from '../src/identity/roles.js';
import { issueToken } from '../src/identity/tokens.js';
import { createUser, setMembership } from '../src/identity/users.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { invite, type Browser } from './support/people.js';

interface Operation {
  method: string;
  path: string;
  role: Role | 'public' | undefined;
  security: Array<Record<string, string[]>> | undefined;
}

const DUMMY_ID = '0190a7f4-0000-7000-8000-000000000000';

/**
 * Routes that keep their own keys (issue 37.4: "webhook and agent endpoints keep their keys"):
 * a tenant API key in the path or header, an agent's credential, or the signature of a tenant's
 * Slack app (its button clicks, issue 42); no person signs in to them.
 */
const KEYED = [/^\/api(\/v1)?\/trigger\/channel\//, /^\/api\/v1\/agents\/(enrol|connect|hello|download)/, /^\/api\/v1\/integrations\/\{id\}\/sns/, /^\/api\/v1\/chat\/slack\/interactions$/, /^\/api\/v1\/chat\/teams\/activities$/];
/** Outside the management API: probes for load balancers, /metrics with its own scrape token, the agent's file. */
const SERVICE = [/^\/(healthz|readyz|metrics)$/, /^\/downloads\/pitcrew-agent\.mjs$/];
/** Public by design: how a person signs in, and how a service is checked. */
const PUBLIC = new Set(['POST /api/v1/auth/login', 'POST /api/v1/auth/accept', 'POST /api/v1/auth/reset']);
/**
 * The only calls a viewer may make that are not reads: their own sign-in and tokens, and previews
 * that store nothing. Adding a route here is a decision: the test fails until it is made.
 */
const VIEWER_MAY_POST = new Set([
  'POST /api/v1/auth/logout', 'POST /api/v1/auth/tenant', 'POST /api/v1/tokens', 'DELETE /api/v1/tokens/{id}',
  'POST /api/v1/me/totp', 'PUT /api/v1/me/totp', 'DELETE /api/v1/me/totp',
  'POST /api/v1/schedules/preview', 'POST /api/v1/integrations/{id}/alerts/preview',
  // Signs a link to a snapshot the viewer may already see (stores nothing but its audit entry).
  'POST /api/v1/snapshots/{id}/link',
]);

function operationsOf(document: { paths: Record<string, Record<string, { security?: Array<Record<string, string[]>>; [ROLE_KEY]?: Role | 'public' }>> }): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, op]) => ({ method: method.toUpperCase(), path, role: op[ROLE_KEY], security: op.security })));
}

function urlOf(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'version' ? '1' : name === 'slug' ? 'no-such-runbook' : DUMMY_ID));
}

// Role checks on every route, declared with the route, tested route by route (issue 37.4).
describe('every management route declares its role, and each role gets exactly what it declares', () => {
  let env: TestEnv;
  let operations: Operation[];
  const tokens = {} as Record<Role, string>;
  let viewer: Browser;

  beforeAll(async () => {
    env = await startTestEnv('sqlite');
    operations = operationsOf((await env.app.server.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json());
    const now = Date.now();
    for (const role of ROLES) {
      const user = await createUser(env.store.db, { email: `${role}@roles.example`, now });
      await setMembership(env.store.db, { userId: user.id, tenantId: env.tenant.tenantId, role, now });
      tokens[role] = (await issueToken(env.store.db, { tenantId: env.tenant.tenantId, userId: user.id, name: role })).token;
    }
    viewer = await invite(env, 'viewer-session@roles.example', 'viewer');
  });
  afterAll(() => env.close());

  const call = (op: Operation, headers: Record<string, string>) => env.app.server.inject({
    method: op.method as 'GET', url: urlOf(op.path), headers: { ...headers, ...(op.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    ...(op.method === 'GET' ? {} : { payload: '{}' }),
  });

  it('finds the management API in the OpenAPI document, and no route without a declared role but the keyed ones', () => {
    expect(operations.filter((op) => op.role && op.role !== 'public').length).toBeGreaterThan(80);

    const undeclared = operations.filter((op) => op.role === undefined && ![...KEYED, ...SERVICE].some((pattern) => pattern.test(op.path)));
    expect(undeclared.map((op) => `${op.method} ${op.path}`)).toEqual([]);
    const declaredPublic = operations.filter((op) => op.role === 'public').map((op) => `${op.method} ${op.path}`);
    expect(declaredPublic.filter((name) => !PUBLIC.has(name) && !name.includes('/auth/'))).toEqual([]);
    for (const op of operations.filter((o) => o.role && o.role !== 'public')) expect(op.security, `${op.method} ${op.path}`).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);
  });

  it.each(ROLES)('as %s: the routes for the role answer, the others answer 403', async (role) => {
    const outcomes: string[] = [];
    for (const op of operations.filter((o) => o.role && o.role !== 'public')) {
      const reply = await call(op, { authorization: `Bearer ${tokens[role]}` });
      const refused = reply.statusCode === 403 && reply.json().code === 'PITCREW_ERR_FORBIDDEN';
      const allowed = roleAtLeast(role, op.role as Role);
      if (allowed === refused || reply.statusCode === 401) outcomes.push(`${op.method} ${op.path} (needs ${op.role}): ${reply.statusCode} ${reply.body.slice(0, 160)}`);
    }
    expect(outcomes).toEqual([]);
  });

  it("a viewer's session changes nothing through any route", async () => {
    const changed: string[] = [];
    const mutating = operations.filter((o) => o.method !== 'GET' && o.role && o.role !== 'public' && `${o.method} ${o.path}` !== 'POST /api/v1/auth/logout');
    for (const op of mutating) {
      const reply = await viewer.call(op.method as 'POST', urlOf(op.path), {});
      const name = `${op.method} ${op.path}`;
      if (reply.statusCode !== 403 && !VIEWER_MAY_POST.has(name)) changed.push(`${name}: ${reply.statusCode}`);
      if (reply.statusCode === 403 && VIEWER_MAY_POST.has(name)) changed.push(`${name} refused, though listed as a viewer's`);
    }
    expect(changed).toEqual([]);
    // And the same calls without the CSRF token are refused as such, whatever the role would allow.
    for (const op of mutating) {
      const reply = await viewer.call(op.method as 'POST', urlOf(op.path), {}, { csrf: false });
      expect(`${op.method} ${op.path}: ${reply.statusCode} ${reply.statusCode === 403 ? reply.json().code : ''}`).toBe(`${op.method} ${op.path}: 403 PITCREW_ERR_CSRF`);
    }
  });
});
