import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '../src/identity/audit/repository.js';
import { hashSecret } from '../src/identity/secrets.js';
import { ACCOUNT_FAILURES, ADDRESS_FAILURES } from '../src/identity/sign-in-guard.js';
import { issueToken } from '../src/identity/tokens.js';
import { newId } from '../src/store/ids.js';
import { MAX_LIMIT } from '../src/store/pagination.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { browserOf, invite, PASSWORD, signIn } from './support/people.js';
import { testDialects } from './support/databases.js';

/** The caller's address: every entry below must name it (inject's own default is 127.0.0.1). */
const CALLER_IP = '198.51.100.7';
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);
const SMTP_PASSWORD = 'smtp-password-8d1f0c';
const AWS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const GIT_TOKEN = 'ghp_audit0123456789abcdefABCDEF';

interface Entry {
  id: string;
  at: string;
  actor: Record<string, unknown>;
  via: string;
  ip: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

describe.each(testDialects())('the audit log on %s', (dialect) => {
  let env: TestEnv;
  let actor: { type: 'token'; id: string; name: string; userId: string; email: string | null };
  /** Every secret the tests send or are given: none may appear in any entry. */
  const secrets: string[] = [SMTP_PASSWORD, AWS.secretAccessKey, GIT_TOKEN];

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    secrets.push(env.tenant.token);
    const token = await env.store.db.selectFrom('tokens').select(['id', 'name', 'user_id']).where('hash', '=', hashSecret(env.tenant.token)).executeTakeFirstOrThrow();
    // The bootstrap token is the first owner's personal access token; the owner has no e-mail until they claim the account.
    actor = { type: 'token', id: token.id, name: token.name, userId: token.user_id!, email: null };
  });
  afterAll(() => env.close());

  const call = async (method: InjectOptions['method'], url: string, body?: unknown) => {
    const reply = await env.app.server.inject({
      method, url, remoteAddress: CALLER_IP,
      headers: { authorization: `Bearer ${env.tenant.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return reply;
  };
  const ok = async (method: InjectOptions['method'], url: string, body?: unknown) => {
    const reply = await call(method, url, body);
    expect(reply.statusCode, `${method} ${url}: ${reply.body}`).toBeLessThan(300);
    return reply.body ? (reply.json() as Record<string, unknown>) : {};
  };
  const entries = async (query: string): Promise<Entry[]> => {
    const reply = await call('GET', `/api/v1/audit?limit=1000&${query}`);
    expect(reply.statusCode, reply.body).toBe(200);
    return reply.json().items;
  };
  /** The one entry of this target and action, as the API shows it. */
  const only = async (target: string, action: string): Promise<Entry> => {
    const found = (await entries(`target=${encodeURIComponent(target)}`)).filter((e) => e.action === action);
    expect(found, `${action} on ${target}`).toHaveLength(1);
    const entry = found[0]!;
    expect(entry).toMatchObject({ at: ISO, actor, via: 'token', ip: CALLER_IP });
    return entry;
  };

  /** Create, change, delete: three entries with the views before and after. */
  async function lifecycle(collection: string, type: string, created: Record<string, unknown>, change: Record<string, unknown>, method: 'PATCH' | 'PUT' = 'PATCH') {
    const made = await ok('POST', `/api/v1/${collection}`, created);
    const id = made.id as string;
    const create = await only(`${type}:${id}`, `${type}.create`);
    expect(create.targetType).toBe(type);
    expect(create.before).toBeUndefined();
    expect(create.after).toMatchObject({ id, name: created.name });
    await ok(method, `/api/v1/${collection}/${id}`, change);
    const update = await only(`${type}:${id}`, `${type}.update`);
    expect(update.before).toMatchObject({ id, name: created.name });
    expect(update.after).toMatchObject({ id, name: change.name });
    await ok('DELETE', `/api/v1/${collection}/${id}`);
    const removal = await only(`${type}:${id}`, `${type}.delete`);
    expect(removal.before).toMatchObject({ id, name: change.name });
    expect(removal.after).toBeUndefined();
    return { id, create, update, removal };
  }

  it('records a rule created, changed, run and deleted', async () => {
    const rule = await env.createWebhookRule({ name: 'disk full' });
    await ok('PATCH', `/api/v1/rules/${rule.id}`, { name: 'disk nearly full', enabled: false });
    const update = await only(`rule:${rule.id}`, 'rule.update');
    expect(update.before).toMatchObject({ name: 'disk full', enabled: true });
    expect(update.after).toMatchObject({ name: 'disk nearly full', enabled: false });
    await ok('PATCH', `/api/v1/rules/${rule.id}`, { enabled: true });
    const run = await ok('POST', `/api/v1/rules/${rule.id}/run`, { payload: { HostName: 'web-9' } });
    const ran = await only(`rule:${rule.id}`, 'rule.run');
    // A POST of a verb on an item keeps the item as it was: the rule that ran.
    expect(ran.before).toMatchObject({ id: rule.id, name: 'disk nearly full', enabled: true });
    expect(ran.after).toMatchObject({ eventId: run.eventId });
    await ok('DELETE', `/api/v1/rules/${rule.id}`);
    expect((await only(`rule:${rule.id}`, 'rule.delete')).before).toMatchObject({ id: rule.id, name: 'disk nearly full' });
  });

  it('records channels, integrations, credentials, repositories and runbooks, secrets masked', async () => {
    const channel = await lifecycle('channels', 'channel', {
      name: 'mail', type: 'email', mode: 'disabled',
      config: { host: 'smtp.example.com', port: 587, secure: false, username: 'pitcrew', password: SMTP_PASSWORD, from: 'pitcrew@example.com', to: ['oncall@example.com'] },
    }, { name: 'mail to on-call' });
    expect(channel.create.after).toMatchObject({ config: { passwordSet: true } });
    await lifecycle('integrations', 'integration', { name: 'prometheus', type: 'alertmanager' }, { name: 'prometheus eu' });
    const credential = await lifecycle('credentials', 'credential', { name: 'aws prod', provider: 'aws', secret: AWS }, { name: 'aws production' });
    expect(credential.create.after).toMatchObject({ summary: { accessKeyId: 'AKIA…MPLE' } });
    await lifecycle('repositories', 'repository', { name: 'ops', url: 'https://git.example.com/ops/runbooks.git', ref: 'main', credential: { token: GIT_TOKEN } }, { name: 'ops runbooks' });
    const script = 'df -h\n';
    await lifecycle('runbooks', 'runbook', { name: 'disk', interpreter: 'bash', script }, { name: 'disk usage', interpreter: 'bash', script: 'df -h /\n' }, 'PUT');
  });

  it('records a tenant setting, API keys issued, narrowed and revoked, without the keys', async () => {
    await ok('PATCH', '/api/v1/tenant', { ipAllowlist: ['10.0.0.0/8'] });
    const tenant = await only(`tenant:${env.tenant.tenantId}`, 'tenant.update');
    expect(tenant.before).toMatchObject({ ipAllowlist: [] });
    expect(tenant.after).toMatchObject({ ipAllowlist: ['10.0.0.0/8'] });
    await ok('PATCH', '/api/v1/tenant', { ipAllowlist: [] });

    const issued = await ok('POST', '/api/v1/api-keys', { name: 'ci', scopes: ['webhook', 'enrol'] });
    secrets.push(issued.apiKey as string);
    expect((await only(`api_key:${issued.id}`, 'api_key.create')).after).toMatchObject({ name: 'ci', apiKey: '[masked]' });
    await ok('PATCH', `/api/v1/api-keys/${issued.id}`, { scopes: ['webhook'] });
    const narrowed = await only(`api_key:${issued.id}`, 'api_key.update');
    expect(narrowed.after).toMatchObject({ scopes: ['webhook'] });
    const replacement = await ok('POST', `/api/v1/api-keys/${issued.id}/revoke`);
    secrets.push(replacement.apiKey as string);
    const revoke = await only(`api_key:${issued.id}`, 'api_key.revoke');
    // The key as it was (from the list of keys: there is no GET of one key), and its replacement.
    expect(revoke.before).toMatchObject({ id: issued.id, name: 'ci', scopes: ['webhook'] });
    expect(revoke.after).toMatchObject({ id: replacement.id, apiKey: '[masked]' });
  });

  it('records a run cancelled, a host changed, replaced by another agent and forgotten', async () => {
    const host = await env.enrol('web-1');
    const rule = await env.createWebhookRule();
    const executionId = (await env.webhook(rule.triggerId, { HostName: 'web-1' })).json().executionIds[0] as string;
    await ok('POST', `/api/v1/executions/${executionId}/cancel`);
    const cancel = await only(`execution:${executionId}`, 'execution.cancel');
    expect(cancel.before).toMatchObject({ id: executionId, state: 'queued' });
    expect(cancel.after).toBeDefined();

    await ok('PATCH', `/api/v1/hosts/${host.hostId}`, { tags: ['eu'] });
    const changed = await only(`host:${host.hostId}`, 'host.update');
    expect(changed.before).toMatchObject({ managedTags: [] });
    expect(changed.after).toMatchObject({ managedTags: ['eu'] });

    const agent = { hostname: 'web-1', tags: ['linux'], os: 'Linux 6.8', arch: 'arm64', version: '2.0.0', replace: true };
    const enrolled = await env.app.server.inject({
      method: 'POST', url: '/api/v1/agents/enrol', remoteAddress: '203.0.113.9',
      headers: { authorization: `Bearer ${env.tenant.apiKey}`, 'content-type': 'application/json' }, payload: JSON.stringify(agent),
    });
    expect(enrolled.statusCode, enrolled.body).toBe(201);
    secrets.push(enrolled.json().token as string);
    const key = await env.store.db.selectFrom('api_keys').select(['id', 'name']).where('hash', '=', hashSecret(env.tenant.apiKey)).executeTakeFirstOrThrow();
    const replaced = (await entries(`target=host:${host.hostId}`)).filter((e) => e.action === 'host.replace');
    expect(replaced).toEqual([{
      id: expect.any(String), at: ISO, actor: { type: 'api_key', id: key.id, name: key.name }, via: 'api_key', ip: '203.0.113.9', action: 'host.replace', targetType: 'host', targetId: host.hostId,
      before: expect.objectContaining({ hostname: 'web-1', os: 'Linux test', arch: 'x64' }), after: expect.objectContaining({ hostname: 'web-1', os: 'Linux 6.8', arch: 'arm64', agentVersion: '2.0.0' }),
    }]);

    await ok('DELETE', `/api/v1/hosts/${host.hostId}`);
    expect((await only(`host:${host.hostId}`, 'host.delete')).before).toMatchObject({ id: host.hostId, hostname: 'web-1' });
  });

  it('records people invited, their role changed and removed, and their sign-ins started, refused and ended', async () => {
    const invited = await ok('POST', '/api/v1/users', { email: 'grace@example.com', role: 'operator' });
    const userId = invited.id as string;
    const invitation = await only(`user:${userId}`, 'user.invite');
    expect(invitation.after).toMatchObject({ id: userId, email: 'grace@example.com', role: 'operator', inviteUrl: '[masked]' });
    secrets.push((invited.inviteUrl as string).split('/').pop()!);
    const accepted = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', remoteAddress: '203.0.113.20', payload: { invite: (invited.inviteUrl as string).split('/').pop(), password: PASSWORD } });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const grace = { type: 'user', id: userId, email: 'grace@example.com' };
    expect(await entries(`target=user:${userId}&action=user.accept`)).toEqual([expect.objectContaining({ actor: grace, via: 'link', ip: '203.0.113.20', targetId: userId })]);

    const signedIn = await signIn(env, 'grace@example.com', PASSWORD, { ip: '203.0.113.21' });
    expect(signedIn.statusCode).toBe(200);
    const browser = browserOf(env, signedIn, userId, 'grace@example.com');
    secrets.push(browser.cookie.split('=')[1]!, browser.csrf);
    const start = (await entries(`actor=${userId}&action=session.start`))[0]!;
    expect(start).toMatchObject({ actor: grace, via: 'password', ip: '203.0.113.21', targetType: 'session', targetId: expect.any(String), after: { user: { id: userId }, csrfToken: '[masked]' } });

    // The person's own change, through the UI's session: theirs, via password, from their address.
    const rule = await env.createWebhookRule();
    const changed = await browser.call('PATCH', `/api/v1/rules/${rule.id}`, { enabled: false }, { headers: { 'x-forwarded-for': '198.51.100.99' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await entries(`target=rule:${rule.id}&action=rule.update`))[0]).toMatchObject({ actor: grace, via: 'password', ip: '127.0.0.1', before: { enabled: true }, after: { enabled: false } });
    expect((await browser.call('GET', '/api/v1/audit')).statusCode).toBe(403);

    // Her token, revoked by the owner: the entry keeps the token as it was, though it is not the owner's.
    const graceToken = await browser.call('POST', '/api/v1/tokens', { name: 'grace laptop' });
    expect(graceToken.statusCode, graceToken.body).toBe(201);
    secrets.push(graceToken.json().token as string);
    await ok('DELETE', `/api/v1/tokens/${graceToken.json().id as string}`);
    const revoked = await only(`token:${graceToken.json().id as string}`, 'token.delete');
    expect(revoked.before).toMatchObject({ id: graceToken.json().id, name: 'grace laptop', userId, revokedAt: null });

    const refused = await signIn(env, 'grace@example.com', 'not the password', { ip: '203.0.113.66' });
    expect(refused.statusCode).toBe(401);
    expect((await signIn(env, 'nobody@example.com', 'whatever', { ip: '203.0.113.66' })).statusCode).toBe(401);
    expect(await entries('action=session.refused')).toEqual([
      expect.objectContaining({ actor: grace, via: 'password', ip: '203.0.113.66', after: { reason: 'wrong password' } }),
    ]);
    expect((await browser.call('POST', '/api/v1/auth/logout', {})).statusCode).toBe(200);
    expect((await entries(`actor=${userId}&action=session.end`))[0]).toMatchObject({ actor: grace, via: 'password', targetId: start.targetId });

    await ok('PATCH', `/api/v1/users/${userId}`, { role: 'admin' });
    const promoted = await only(`user:${userId}`, 'user.update');
    expect(promoted.before).toMatchObject({ id: userId, role: 'operator' });
    expect(promoted.after).toMatchObject({ id: userId, role: 'admin' });
    await ok('DELETE', `/api/v1/users/${userId}`);
    expect((await only(`user:${userId}`, 'user.delete')).before).toMatchObject({ id: userId, email: 'grace@example.com', role: 'admin' });
    // By e-mail: every entry of the person, whatever the route.
    expect((await entries('actor=GRACE@example.com')).map((e) => e.action)).toEqual(['session.end', 'session.refused', 'token.create', 'rule.update', 'session.start', 'user.accept']);
  });

  it('records refused password sign-ins: wrong passwords (one given to accept an invitation), the lock they set, the locked account, an address held back', async () => {
    const hal = await invite(env, 'hal@example.com', 'operator');
    const other = await env.addTenant('audited elsewhere');
    secrets.push(other.token, other.apiKey);
    const invited = (await env.api('POST', '/api/v1/users', { email: 'hal@example.com', role: 'viewer' }, other.token)).json() as { inviteUrl: string };
    secrets.push(invited.inviteUrl.split('/').pop()!, hal.cookie.split('=')[1]!, hal.csrf);
    const accept = await env.app.server.inject({ method: 'POST', url: '/api/v1/auth/accept', remoteAddress: '203.0.113.100', payload: { invite: invited.inviteUrl.split('/').pop(), password: 'not the password of hal' } });
    expect(accept.statusCode, accept.body).toBe(401);
    // The failure at the invitation counts: ACCOUNT_FAILURES in all lock the account.
    for (let i = 1; i < ACCOUNT_FAILURES; i += 1) expect((await signIn(env, hal.email, 'not the password', { ip: `203.0.113.${100 + i}` })).statusCode).toBe(401);
    expect((await signIn(env, hal.email, PASSWORD, { ip: '203.0.113.110' })).statusCode).toBe(429);
    const halActor = { type: 'user', id: hal.userId, email: 'hal@example.com' };
    const wrong = (ip: number) => [`203.0.113.${ip}`, { reason: 'wrong password' }];
    const expected = [
      ['203.0.113.100', { reason: 'wrong password, given to accept an invitation' }],
      wrong(101), wrong(102), wrong(103),
      ['203.0.113.104', { reason: 'wrong password', lockedUntil: ISO }],
      ['203.0.113.110', { reason: 'the account is locked after failed sign-ins' }],
    ];
    const refused = (await entries(`actor=${hal.userId}&action=session.refused`)).reverse();
    expect(refused.map((e) => [e.ip, e.after])).toEqual(expected);
    for (const entry of refused) expect(entry).toMatchObject({ actor: halActor, via: 'password', targetType: 'session', targetId: null });
    // The other tenant's admins see the attempts on their member too.
    const elsewhere = (await env.api('GET', `/api/v1/audit?action=session.refused&actor=${hal.userId}`, undefined, other.token)).json() as { items: Entry[] };
    expect(elsewhere.items.reverse().map((e) => [e.ip, e.after])).toEqual(expected);

    // An address held back after ADDRESS_FAILURES failures (on addresses nobody has: not recorded), then naming hal.
    for (let i = 0; i < ADDRESS_FAILURES; i += 1) expect((await signIn(env, `nobody-${i}@example.com`, 'guess', { ip: '203.0.113.200' })).statusCode).toBe(401);
    expect((await signIn(env, hal.email, PASSWORD, { ip: '203.0.113.200' })).statusCode).toBe(429);
    expect((await entries(`actor=${hal.userId}&action=session.refused`))[0]).toMatchObject({
      actor: halActor, ip: '203.0.113.200', after: { reason: 'too many failed sign-ins from this address: the address is held back' },
    });
    expect(await entries('actor=nobody-0@example.com')).toEqual([]);
  }, 120_000);

  it('keeps the view before of a member far down the list of members (beyond its pages of MAX_LIMIT)', async () => {
    // More members than one read of the list returns: the one changed is on its second page.
    const now = Date.now();
    const people = Array.from({ length: MAX_LIMIT + 1 }, (_, i) => ({ id: newId(now), email: `member-${i}@many.example`, created_at: now }));
    for (let i = 0; i < people.length; i += 250) {
      const batch = people.slice(i, i + 250);
      await env.store.db.insertInto('users').values(batch.map((p) => ({ ...p, password_hash: null, totp_secret: null, failed_logins: 0, locked_until: null, last_sign_in_at: null, disabled_at: null }))).execute();
      await env.store.db.insertInto('memberships').values(batch.map((p) => ({ user_id: p.id, tenant_id: env.tenant.tenantId, role: 'viewer', created_at: now }))).execute();
    }
    const last = people.at(-1)!;
    const firstRead = (await call('GET', `/api/v1/users?limit=${MAX_LIMIT}`)).json() as { items: Array<{ id: string }>; nextCursor: string | null };
    expect(firstRead.items.map((m) => m.id)).not.toContain(last.id);
    expect(firstRead.nextCursor).toEqual(expect.any(String));
    await ok('PATCH', `/api/v1/users/${last.id}`, { role: 'operator' });
    const changed = await only(`user:${last.id}`, 'user.update');
    expect(changed.before).toMatchObject({ id: last.id, email: last.email, role: 'viewer' });
    expect(changed.after).toMatchObject({ id: last.id, role: 'operator' });
  });

  it('records nothing for a change refused or a call that changes nothing', async () => {
    const before = (await entries('')).length;
    const rule = await env.createWebhookRule();
    expect((await call('PATCH', `/api/v1/rules/${rule.id}`, { name: '' })).statusCode).toBe(400);
    expect((await call('DELETE', '/api/v1/rules/0190a6d2-0000-7000-8000-000000000000')).statusCode).toBe(404);
    expect((await call('POST', '/api/v1/api-keys', { name: 'x', scopes: ['everything'] })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/schedules/preview', { schedule: '*/5 * * * *' })).statusCode).toBe(200);
    expect((await call('GET', `/api/v1/rules/${rule.id}`)).statusCode).toBe(200);
    const after = await entries('');
    expect(after.length).toBe(before + 1);
    expect(after[0]).toMatchObject({ action: 'rule.create', targetId: rule.id });
  });

  it("counts the read of a view before a change as part of the change, not as a caller's GET", async () => {
    const count = async (method: string) => {
      const line = (await env.scrape()).split('\n').find((l) => l.startsWith(`pitcrew_http_request_duration_seconds_count{method="${method}",route="/api/v1/rules/:id",status="200"}`));
      return Number(line?.split(' ')[1] ?? 0);
    };
    const rule = await env.createWebhookRule();
    const [gets, patches] = [await count('GET'), await count('PATCH')];
    await ok('PATCH', `/api/v1/rules/${rule.id}`, { name: 'counted once' });
    expect((await only(`rule:${rule.id}`, 'rule.update')).before).toMatchObject({ name: rule.body.name });
    expect([await count('GET'), await count('PATCH')]).toEqual([gets, patches + 1]);
  });

  it('keeps every secret out of every entry, and out of the export', async () => {
    const rows = JSON.stringify(await env.store.db.selectFrom('audit_log').selectAll().execute());
    const exported = (await call('GET', '/api/v1/audit/export')).body;
    expect(rows.length).toBeGreaterThan(1000);
    for (const secret of secrets) {
      expect(rows).not.toContain(secret);
      expect(exported).not.toContain(secret);
    }
  });
});

describe.each(testDialects())('reading the audit log on %s', (dialect) => {
  let env: TestEnv;
  // Entries are made at these times (the recorder goes by the app's clock), later than any other suite's.
  const MINUTE = 60_000;
  const t0 = Date.parse('2031-03-01T10:00:00.000Z') + (dialect === 'postgres' ? 86_400_000 : 0);
  let now = t0;
  let ruleId = '';
  let botTokenId = '';
  let botToken = '';

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => now });
    ruleId = (await env.createWebhookRule({ name: 'audited' })).id;
    now = t0 + MINUTE;
    expect((await env.api('PATCH', `/api/v1/rules/${ruleId}`, { name: 'audited, renamed' })).statusCode).toBe(200);
    now = t0 + 2 * MINUTE;
    const owner = (await env.store.db.selectFrom('tokens').select('user_id').where('hash', '=', hashSecret(env.tenant.token)).executeTakeFirstOrThrow()).user_id!;
    ({ id: botTokenId, token: botToken } = await issueToken(env.store.db, { tenantId: env.tenant.tenantId, userId: owner, name: 'ci-bot' }, now));
    expect((await env.api('POST', '/api/v1/api-keys', { name: 'ci' }, botToken)).statusCode).toBe(201);
    now = t0 + 3 * MINUTE;
    expect((await env.api('POST', `/api/v1/rules/${ruleId}/run`, {}, botToken)).statusCode).toBe(202);
  });
  afterAll(() => env.close());

  const list = async (query: string) => {
    const reply = await env.api('GET', `/api/v1/audit?${query}`);
    expect(reply.statusCode, reply.body).toBe(200);
    return reply.json() as { items: Entry[]; nextCursor: string | null };
  };
  const actions = async (query: string) => (await list(query)).items.map((e) => e.action);
  const minute = (n: number) => new Date(t0 + n * MINUTE).toISOString();

  it('lists newest first, and filters by actor, target, action and time', async () => {
    expect(await actions('')).toEqual(['rule.run', 'api_key.create', 'rule.update', 'rule.create']);
    expect(await actions(`actor=${botTokenId}`)).toEqual(['rule.run', 'api_key.create']);
    expect(await actions('target=rule')).toEqual(['rule.run', 'rule.update', 'rule.create']);
    expect(await actions(`target=rule:${ruleId}`)).toEqual(['rule.run', 'rule.update', 'rule.create']);
    expect(await actions('target=rule:0190a6d2-0000-7000-8000-000000000000')).toEqual([]);
    expect(await actions('action=rule.')).toEqual(['rule.run', 'rule.update', 'rule.create']);
    expect(await actions('action=rule.update')).toEqual(['rule.update']);
    expect(await actions('action=rule')).toEqual([]);
    expect(await actions(`from=${minute(1)}&to=${minute(2)}`)).toEqual(['api_key.create', 'rule.update']);
    expect(await actions(`from=${minute(3)}`)).toEqual(['rule.run']);
    expect(await actions(`to=${minute(0)}`)).toEqual(['rule.create']);
    expect(await actions(`action=rule.&actor=${botTokenId}&from=${minute(1)}`)).toEqual(['rule.run']);
    expect((await list('action=rule.update')).items[0]).toMatchObject({ at: minute(1), targetType: 'rule', targetId: ruleId });
  });

  it('pages with the cursor of every list', async () => {
    const first = await list('limit=3');
    expect(first.items.map((e) => e.action)).toEqual(['rule.run', 'api_key.create', 'rule.update']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await list(`limit=3&cursor=${first.nextCursor}`);
    expect(second).toEqual({ items: [expect.objectContaining({ action: 'rule.create' })], nextCursor: null });
    expect((await env.api('GET', '/api/v1/audit?cursor=nonsense')).json().code).toBe('PITCREW_ERR_BAD_CURSOR');
  });

  it('refuses filters it cannot read, saying which', async () => {
    const backwards = await env.api('GET', `/api/v1/audit?from=${minute(2)}&to=${minute(1)}`);
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json()).toMatchObject({ code: 'PITCREW_ERR_VALIDATION', detail: expect.stringContaining('from is later than to') });
    expect((await env.api('GET', '/api/v1/audit?from=yesterday')).statusCode).toBe(400);
    expect((await env.api('GET', '/api/v1/audit?action=DROP%20TABLE')).statusCode).toBe(400);
  });

  it('exports every matching entry as JSON lines, oldest first, beyond one page', async () => {
    // More entries than a page of the export reads at once (MAX_LIMIT).
    now = t0 + 10 * MINUTE;
    for (let i = 0; i < MAX_LIMIT + 5; i += 1) {
      await appendAudit(env.store.db, {
        tenantId: env.tenant.tenantId, at: now + i, actor: { type: 'token', id: botTokenId, name: 'ci-bot', userId: 'u-1', email: null }, via: 'token', ip: '192.0.2.1',
        action: 'runbook.update', targetType: 'runbook', targetId: `r-${i}`, before: null, after: { n: i },
      });
    }
    const exported = await env.api('GET', '/api/v1/audit/export?target=runbook');
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = exported.body.trimEnd().split('\n').map((line) => JSON.parse(line) as Entry);
    expect(lines).toHaveLength(MAX_LIMIT + 5);
    expect(lines.map((e) => e.targetId)).toEqual(Array.from({ length: MAX_LIMIT + 5 }, (_, i) => `r-${i}`));
    expect(lines[0]).toEqual({
      id: expect.any(String), at: new Date(now).toISOString(), actor: { type: 'token', id: botTokenId, name: 'ci-bot', userId: 'u-1', email: null }, via: 'token', ip: '192.0.2.1',
      action: 'runbook.update', targetType: 'runbook', targetId: 'r-0', after: { n: 0 },
    });
    const ruleLines = (await env.api('GET', `/api/v1/audit/export?target=rule:${ruleId}`)).body.trimEnd().split('\n');
    expect(ruleLines.map((line) => (JSON.parse(line) as Entry).action)).toEqual(['rule.create', 'rule.update', 'rule.run']);
    expect((await env.api('GET', '/api/v1/audit/export?target=nothing')).body).toBe('');
  });

  it('has no route that changes or deletes an entry: the API only reads it', async () => {
    const doc = (await env.app.server.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const auditPaths = Object.entries(doc.paths).filter(([path]) => path.startsWith('/api/v1/audit'));
    expect(auditPaths.map(([path]) => path).sort()).toEqual(['/api/v1/audit', '/api/v1/audit/export']);
    for (const [, operations] of auditPaths) expect(Object.keys(operations).filter((m) => m !== 'parameters')).toEqual(['get']);
    const id = (await list('limit=1')).items[0]!.id;
    for (const method of ['PATCH', 'PUT', 'DELETE', 'POST'] as const) {
      expect((await env.api(method, `/api/v1/audit/${id}`, method === 'DELETE' ? undefined : {})).statusCode).toBe(404);
      expect((await env.api(method, '/api/v1/audit', method === 'DELETE' ? undefined : {})).statusCode).toBe(404);
    }
  });
});

describe.each(testDialects())('an audit entry that cannot be written, on %s', (dialect) => {
  it('leaves the change made and its reply sent, and logs an error saying so', async () => {
    const env = await startTestEnv(dialect);
    try {
      await sql`drop table audit_log`.execute(env.store.db);
      const reply = await env.api('PATCH', '/api/v1/tenant', { ipAllowlist: ['10.0.0.0/8'] });
      expect(reply.statusCode, reply.body).toBe(200);
      expect((await env.api('GET', '/api/v1/tenant')).json().ipAllowlist).toEqual(['10.0.0.0/8']);
      const errors = env.logs.map((line) => JSON.parse(line) as { level: number; msg: string; action?: string }).filter((line) => line.level >= 50);
      expect(errors).toEqual([expect.objectContaining({ msg: 'the change was made, but its audit log entry could not be written', action: 'tenant.update' })]);
    } finally {
      await env.close();
    }
  });
});
