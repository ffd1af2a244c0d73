import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_KEYWORD, type AuditDeclaration } from '../src/identity/audit/naming.js';
import { newTotpSecret, totpCode } from '../src/identity/totp.js';
import { applyObservations } from '../src/incidents/apply.js';
import { insertSnapshots } from '../src/snapshots/repository.js';
import type { AuditLogRow } from '../src/store/schema.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { startEc2Emulator, type Ec2Emulator } from './support/ec2-emulator.js';
import { startKeystoneMonasca, type KeystoneMonasca } from './support/keystone-monasca.js';
import { invite, PASSWORD, type Browser } from './support/people.js';
import { startReceiver, type Receiver } from './support/receivers.js';

const AWS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const KEYSTONE = { username: 'ops', password: 'keystone-password-5c1e', projects: ['ops-project'] };
const CHAT_SECRET = 'T000/B000/chat-webhook-secret-91ab';
const TOTP_SECRET = newTotpSecret();
const SSO_SECRET = 'sso-client-secret-4f2a9c';
const IMPORT_TOKEN = 'bearer-coverage-import-7c1e0d';
const GRAPH_TOKEN = 'bearer-coverage-graphs-3b9f2a';

interface Operation {
  security?: Array<Record<string, unknown>>;
  'x-pitcrew-role'?: string;
  [AUDIT_KEYWORD]?: AuditDeclaration;
}
interface Call {
  url: string;
  body?: unknown;
  /** The action the entry must name. */
  action: string;
  /** Who calls: the owner's token unless a signed-in member (a session) or nobody yet (a sign-in). */
  as?: 'member' | 'anonymous';
}

/*
 * Every management route that is not a GET, read from the OpenAPI document (nothing here comes
 * from the recorder's own list): called successfully, each writes exactly one audit entry and
 * changes none before it, unless its schema declares it not audited, with a reason. A new route
 * fails this test until it is taught a successful call below. Route coverage, not storage: SQLite only.
 */
describe('every management change is audited', () => {
  let env: TestEnv;
  let ec2: Ec2Emulator;
  let keystone: KeystoneMonasca;
  let chat: Receiver;
  const ids: Record<string, string> = {};
  let member: Browser & { inviteUrl: string };
  /** Secrets the calls carry or are given: none may be in the log. */
  const secrets: string[] = [PASSWORD];

  beforeAll(async () => {
    ec2 = await startEc2Emulator();
    ec2.addKey(AWS.accessKeyId, AWS.secretAccessKey);
    keystone = await startKeystoneMonasca([KEYSTONE]);
    chat = await startReceiver();
    env = await startTestEnv('sqlite', { awsEndpoint: ec2.url });
  });
  afterAll(async () => {
    await env.close();
    await ec2.close();
    await keystone.close();
  });

  const made = async (method: 'POST' | 'PUT', url: string, body: unknown) => {
    const reply = await env.api(method, url, body);
    expect(reply.statusCode, `${url}: ${reply.body}`).toBeLessThan(300);
    return reply.json() as Record<string, string>;
  };
  /** Something for each call below to act on, made without the API where the API would audit it too early. */
  async function fixtures(): Promise<void> {
    const host = await env.enrol('web-1');
    ids.host = host.hostId;
    const rule = await env.createWebhookRule();
    ids.rule = rule.id;
    ids.execution = (await env.webhook(rule.triggerId, { HostName: 'web-1' })).json().executionIds[0];
    // Two runs awaiting a person's decision (docs/approvals.md): one to approve, one to reject.
    const asking = await env.createWebhookRule({ approval: { required: true } });
    ids.toApprove = (await env.webhook(asking.triggerId, { HostName: 'web-1' })).json().executionIds[0];
    ids.toReject = (await env.webhook(asking.triggerId, { HostName: 'web-1' })).json().executionIds[0];
    ids.channel = (await made('POST', '/api/v1/channels', { name: 'chat', type: 'slack', config: { webhookUrl: `${chat.url}/${CHAT_SECRET}` } })).id!;
    ids.integration = (await made('POST', '/api/v1/integrations', { name: 'prometheus', type: 'alertmanager' })).id!;
    const alarm = { incidentKey: 'coverage', alarmName: 'DiskFull', hostname: 'web-1', severity: null, state: 'firing' as const, at: null };
    ids.incident = (await applyObservations(env.store.db, env.tenant.tenantId, ids.integration, [alarm], Date.now())).incidentIds[0]!;
    ids.monasca = (await made('POST', '/api/v1/integrations', { name: 'monasca', type: 'monasca', config: { monascaUrl: keystone.url } })).id!;
    const login = { version: 'v3', identityUrl: keystone.url, username: KEYSTONE.username, password: KEYSTONE.password, project: 'ops-project' };
    expect((await env.api('PATCH', `/api/v1/integrations/${ids.monasca}`, { import: { enabled: false, secret: login } })).statusCode).toBe(200);
    // A series the wizard's snapshot preview draws: a point a minute over the last hour.
    const minutes = Array.from({ length: 60 }, (_, i) => [Date.now() - (60 - i) * 60_000, 40 + i] as [number, number]);
    keystone.projects.get('ops-project')!.measurements.push({ name: 'cpu.system_perc', dimensions: { hostname: 'web-1' }, points: minutes });
    // A picture a capture stored, to make a signed link to.
    const [snapshot] = await insertSnapshots(env.store.db, [{
      tenantId: env.tenant.tenantId, executionId: ids.integration, eventId: ids.integration, position: 0, title: 'load', query: 'node_load1', contentType: 'image/png', width: 1, height: 1, image: new Uint8Array([137, 80, 78, 71]),
    }], Date.now());
    ids.snapshot = snapshot!;
    // An incident, opened by an alert of the tool (its URL: no management call, nothing audited).
    const alert = { status: 'firing', labels: { alertname: 'DiskFull', instance: 'web-1:9100' }, annotations: {}, startsAt: new Date().toISOString(), fingerprint: 'c0ffee' };
    const delivered = await env.app.server.inject({
      method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${ids.integration}`,
      headers: { 'content-type': 'application/json' }, payload: { version: '4', status: 'firing', receiver: 'pitcrew', alerts: [alert] },
    });
    expect(delivered.statusCode, delivered.body).toBe(202);
    ids.incident = (await env.api('GET', '/api/v1/incidents')).json().items[0].id;
    ids.credential = (await made('POST', '/api/v1/credentials', { name: 'aws', provider: 'aws', secret: AWS })).id!;
    ids.repository = (await made('POST', '/api/v1/repositories', { name: 'ops', url: 'https://git.example.com/ops.git', ref: 'main' })).id!;
    ids.runbook = (await made('POST', '/api/v1/runbooks', { name: 'disk', interpreter: 'bash', script: 'df -h\n' })).id!;
    ids.apiKey = (await made('POST', '/api/v1/api-keys', { name: 'ci', scopes: ['webhook', 'enrol'] })).id!;
    ids.slug = (await env.api('GET', '/api/v1/runbook-library')).json().items[0].slug;
    member = await invite(env, 'ada@example.com', 'operator');
    ids.member = member.userId;
    secrets.push(member.cookie.split('=')[1]!, member.csrf, member.inviteUrl.split('/').pop()!);
    // A member who set up a second factor, for an admin to remove.
    const lost = await invite(env, 'eve@example.com', 'viewer');
    const lostSecret = newTotpSecret();
    expect((await lost.call('PUT', '/api/v1/me/totp', { secret: lostSecret, code: totpCode(lostSecret, Date.now()) })).statusCode).toBe(204);
    ids.lost = lost.userId;
    secrets.push(lostSecret);
    const invited = await made('POST', '/api/v1/users', { email: 'bob@example.com', role: 'viewer' });
    ids.invite = invited.inviteUrl!.split('/').pop()!;
    ids.preview = (await made('POST', '/api/v1/users', { email: 'dee@example.com', role: 'viewer' })).inviteUrl!.split('/').pop()!;
    secrets.push(ids.invite, ids.preview);
    ids.sso = (await made('POST', '/api/v1/sso-providers', { type: 'oidc', name: 'Keycloak', issuer: 'http://127.0.0.1:1', clientId: 'pitcrew', clientSecret: SSO_SECRET, roleMapping: { domains: { 'example.com': 'viewer' } } })).id!;
    const token = await made('POST', '/api/v1/tokens', { name: 'to revoke' });
    ids.token = token.id!;
    secrets.push(token.token!);
  }

  /** A successful call of each route (`{id}` filled in), and the action its entry names. */
  const calls = (): Record<string, Call> => ({
    'POST /api/v1/rules': { url: '/api/v1/rules', body: { name: 'another', trigger: { type: 'webhook' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' }, action: 'rule.create' },
    'PATCH /api/v1/rules/{id}': { url: `/api/v1/rules/${ids.rule}`, body: { name: 'renamed' }, action: 'rule.update' },
    'POST /api/v1/rules/{id}/run': { url: `/api/v1/rules/${ids.rule}/run`, body: {}, action: 'rule.run' },
    'DELETE /api/v1/rules/{id}': { url: `/api/v1/rules/${ids.rule}`, action: 'rule.delete' },
    'POST /api/v1/incidents/{id}/troubleshoot': { url: `/api/v1/incidents/${ids.incident}/troubleshoot`, body: { starter: ids.slug }, action: 'incident.troubleshoot' },
    'POST /api/v1/incidents/{id}/fix': { url: `/api/v1/incidents/${ids.incident}/fix`, body: { ruleId: ids.rule }, action: 'incident.fix' },
    'PATCH /api/v1/tenant': { url: '/api/v1/tenant', body: { throttle: null }, action: 'tenant.update' },
    'POST /api/v1/api-keys': { url: '/api/v1/api-keys', body: { name: 'another' }, action: 'api_key.create' },
    'PATCH /api/v1/api-keys/{id}': { url: `/api/v1/api-keys/${ids.apiKey}`, body: { scopes: ['webhook'] }, action: 'api_key.update' },
    'POST /api/v1/api-keys/{id}/revoke': { url: `/api/v1/api-keys/${ids.apiKey}/revoke`, action: 'api_key.revoke' },
    'PATCH /api/v1/hosts/{id}': { url: `/api/v1/hosts/${ids.host}`, body: { tags: ['eu'] }, action: 'host.update' },
    'DELETE /api/v1/hosts/{id}': { url: `/api/v1/hosts/${ids.host}`, action: 'host.delete' },
    'POST /api/v1/executions/{id}/cancel': { url: `/api/v1/executions/${ids.execution}/cancel`, action: 'execution.cancel' },
    'POST /api/v1/executions/{id}/approve': { url: `/api/v1/executions/${ids.toApprove}/approve`, body: { comment: 'go' }, action: 'execution.approve' },
    'POST /api/v1/executions/{id}/reject': { url: `/api/v1/executions/${ids.toReject}/reject`, action: 'execution.reject' },
    'POST /api/v1/incidents/{id}/resolve': { url: `/api/v1/incidents/${ids.incident}/resolve`, action: 'incident.resolve' },
    'POST /api/v1/channels': { url: '/api/v1/channels', body: { name: 'hook', type: 'webhook', config: { url: 'https://receiver.example.com/hook', secret: 'whsec-coverage-0123456789' } }, action: 'channel.create' },
    'PATCH /api/v1/channels/{id}': { url: `/api/v1/channels/${ids.channel}`, body: { name: 'chat room' }, action: 'channel.update' },
    'POST /api/v1/channels/{id}/test': { url: `/api/v1/channels/${ids.channel}/test`, action: 'channel.test' },
    'DELETE /api/v1/channels/{id}': { url: `/api/v1/channels/${ids.channel}`, action: 'channel.delete' },
    'PUT /api/v1/escalation-contacts': { url: '/api/v1/escalation-contacts', body: { emails: [], channelIds: [ids.channel] }, action: 'escalation_contact.update' },
    'POST /api/v1/snapshots/{id}/link': { url: `/api/v1/snapshots/${ids.snapshot}/link`, body: { days: 1 }, action: 'snapshot.link' },
    'POST /api/v1/integrations': { url: '/api/v1/integrations', body: { name: 'another', type: 'grafana' }, action: 'integration.create' },
    'PATCH /api/v1/integrations/{id}': { url: `/api/v1/integrations/${ids.integration}`, body: { name: 'prometheus eu', graphSecret: GRAPH_TOKEN, import: { enabled: false, secret: IMPORT_TOKEN } }, action: 'integration.update' },
    'POST /api/v1/integrations/{id}/import': { url: `/api/v1/integrations/${ids.monasca}/import`, action: 'integration.import' },
    'POST /api/v1/integrations/{id}/test': { url: `/api/v1/integrations/${ids.integration}/test`, body: { hostName: 'web-1' }, action: 'integration.test' },
    'POST /api/v1/integrations/{id}/monasca/token': {
      url: `/api/v1/integrations/${ids.monasca}/monasca/token`, body: { version: 'v3', identityUrl: keystone.url, username: KEYSTONE.username, password: KEYSTONE.password, project: 'ops-project' }, action: 'integration.monasca_token',
    },
    'DELETE /api/v1/integrations/{id}': { url: `/api/v1/integrations/${ids.integration}`, action: 'integration.delete' },
    'POST /api/v1/credentials': { url: '/api/v1/credentials', body: { name: 'another', provider: 'aws', secret: AWS }, action: 'credential.create' },
    'PATCH /api/v1/credentials/{id}': { url: `/api/v1/credentials/${ids.credential}`, body: { name: 'aws prod' }, action: 'credential.update' },
    'POST /api/v1/credentials/{id}/test': { url: `/api/v1/credentials/${ids.credential}/test`, action: 'credential.test' },
    'DELETE /api/v1/credentials/{id}': { url: `/api/v1/credentials/${ids.credential}`, action: 'credential.delete' },
    'POST /api/v1/repositories': { url: '/api/v1/repositories', body: { name: 'another', url: 'https://git.example.com/another.git', ref: 'main' }, action: 'repository.create' },
    'PATCH /api/v1/repositories/{id}': { url: `/api/v1/repositories/${ids.repository}`, body: { ref: 'v2' }, action: 'repository.update' },
    // Answers 200 whether or not the server was reached (the outcome is in the reply).
    'POST /api/v1/repositories/{id}/test': { url: `/api/v1/repositories/${ids.repository}/test`, action: 'repository.test' },
    'DELETE /api/v1/repositories/{id}': { url: `/api/v1/repositories/${ids.repository}`, action: 'repository.delete' },
    'POST /api/v1/runbooks': { url: '/api/v1/runbooks', body: { name: 'another', interpreter: 'bash', script: 'true\n' }, action: 'runbook.create' },
    'PUT /api/v1/runbooks/{id}': { url: `/api/v1/runbooks/${ids.runbook}`, body: { name: 'disk', interpreter: 'bash', script: 'df -h /\n' }, action: 'runbook.update' },
    'DELETE /api/v1/runbooks/{id}': { url: `/api/v1/runbooks/${ids.runbook}`, action: 'runbook.delete' },
    'POST /api/v1/runbook-library/{slug}/install': { url: `/api/v1/runbook-library/${ids.slug}/install`, body: {}, action: 'runbook.install' },
    'POST /api/v1/users': { url: '/api/v1/users', body: { email: 'cy@example.com', role: 'viewer' }, action: 'user.invite' },
    'PATCH /api/v1/users/{id}': { url: `/api/v1/users/${ids.member}`, body: { role: 'admin' }, action: 'user.update' },
    'DELETE /api/v1/users/{id}': { url: `/api/v1/users/${ids.member}`, action: 'user.delete' },
    'POST /api/v1/tokens': { url: '/api/v1/tokens', body: { name: 'ci' }, action: 'token.create' },
    'DELETE /api/v1/tokens/{id}': { url: `/api/v1/tokens/${ids.token}`, action: 'token.delete' },
    'POST /api/v1/auth/login': { url: '/api/v1/auth/login', body: { email: 'ada@example.com', password: PASSWORD }, action: 'session.start', as: 'anonymous' },
    'POST /api/v1/auth/accept': { url: '/api/v1/auth/accept', body: { invite: ids.invite, password: PASSWORD }, action: 'user.accept', as: 'anonymous' },
    'POST /api/v1/users/{id}/reset': { url: `/api/v1/users/${ids.member}/reset`, action: 'user.reset' },
    'DELETE /api/v1/users/{id}/totp': { url: `/api/v1/users/${ids.lost}/totp`, action: 'user.totp_reset' },
    'PUT /api/v1/me/totp': { url: '/api/v1/me/totp', body: { secret: TOTP_SECRET, code: totpCode(TOTP_SECRET, Date.now()) }, action: 'user.totp_enable' },
    'DELETE /api/v1/me/totp': { url: '/api/v1/me/totp', body: { code: totpCode(TOTP_SECRET, Date.now()) }, action: 'user.totp_disable' },
    'POST /api/v1/sso-providers': { url: '/api/v1/sso-providers', body: { type: 'oidc', name: 'Google', issuer: 'http://127.0.0.1:1', clientId: 'pitcrew-public', clientSecret: SSO_SECRET, roleMapping: { domains: { 'example.com': 'viewer' } } }, action: 'sso_provider.create' },
    'PATCH /api/v1/sso-providers/{id}': { url: `/api/v1/sso-providers/${ids.sso}`, body: { name: 'Keycloak EU', clientSecret: `${SSO_SECRET}-2` }, action: 'sso_provider.update' },
    'DELETE /api/v1/sso-providers/{id}': { url: `/api/v1/sso-providers/${ids.sso}`, action: 'sso_provider.delete' },
    'POST /api/v1/auth/tenant': { url: '/api/v1/auth/tenant', body: { tenantId: env.tenant.tenantId }, action: 'session.switch_tenant', as: 'member' },
    // With a token: every session of the owner's (none), so that the member's stays for the calls after.
    'POST /api/v1/auth/logout': { url: '/api/v1/auth/logout', body: { everywhere: true }, action: 'session.end' },
  });
  /** What a route declared not audited is called with, to show it writes nothing. */
  const unaudited = (): Record<string, Omit<Call, 'action'>> => ({
    'POST /api/v1/schedules/preview': { url: '/api/v1/schedules/preview', body: { schedule: '@daily' } },
    'POST /api/v1/auth/reset': { url: '/api/v1/auth/reset', body: { email: 'ada@example.com' }, as: 'anonymous' },
    'POST /api/v1/me/totp': { url: '/api/v1/me/totp' },
    'POST /api/v1/auth/accept/preview': { url: '/api/v1/auth/accept/preview', body: { invite: ids.preview }, as: 'anonymous' },
    // An unknown provider: the sign-in page again (302). A SAML sign-in records itself (identity/sso/routes.ts complete()).
    'POST /api/v1/auth/saml/{providerId}/acs': { url: '/api/v1/auth/saml/0190a6d2-0000-7000-8000-000000000000/acs', body: { SAMLResponse: 'PHNhbWw+' }, as: 'anonymous' },
    'POST /api/v1/integrations/{id}/alerts/preview': { url: `/api/v1/integrations/${ids.integration}/alerts/preview`, body: { alarmName: '*' } },
    'POST /api/v1/snapshots/preview': { url: '/api/v1/snapshots/preview', body: { integrationId: ids.monasca, graphs: ['cpu.system_perc{hostname:web-1}'] } },
  });

  const send = (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', call: Omit<Call, 'action'>) => {
    if (call.as === 'member') return member.call(method, call.url, call.body);
    // Each from an address of its own: the sign-in brake counts a reset request as a failure of its address.
    if (call.as === 'anonymous') return env.app.server.inject({ method, url: call.url, payload: call.body as Record<string, unknown>, remoteAddress: `192.0.2.${(anonymous += 1)}` });
    return env.api(method, call.url, call.body);
  };
  let anonymous = 0;
  const rows = () => env.store.db.selectFrom('audit_log').selectAll().orderBy('id').execute();

  it('writes one entry for each, changes none before it, and records nothing for the routes declared not audited', async () => {
    const doc = (await env.app.server.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
    const changing = Object.entries(doc.paths).flatMap(([path, operations]) => Object.entries(operations)
      // The management API's own (a bearer token or session) and its public sign-in routes; not the webhook's or the agents' (keyed).
      .filter(([method, operation]) => method !== 'get' && method !== 'parameters' && (operation.security?.some((s) => 'bearerAuth' in s) || operation['x-pitcrew-role'] === 'public'))
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, declared: operation[AUDIT_KEYWORD] })));
    expect(changing.length).toBeGreaterThan(30);
    await fixtures();
    // The member's own calls first (a change of their role ends their sessions); deletes last: what they remove, others act on.
    const audited = calls();
    const order = (route: string) => (audited[route]?.as === 'member' ? 0 : route.startsWith('DELETE') ? 2 : 1);
    const skipped = unaudited();
    let seen = await rows();
    for (const { route, declared } of changing.sort((a, b) => order(a.route) - order(b.route))) {
      const method = route.split(' ')[0] as 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      if (declared && 'skip' in declared) {
        expect(declared.skip.length, `${route}: say why it is not audited`).toBeGreaterThan(10);
        const call = skipped[route];
        expect(call, `${route} is declared not audited: teach this test a successful call of it`).toBeDefined();
        const reply = await send(method, call!);
        expect(reply.statusCode, `${route}: ${reply.body}`).toBeLessThan(400);
        expect(await rows(), `${route} wrote an entry`).toEqual(seen);
        continue;
      }
      const call = audited[route];
      expect(call, `${route} changes something: teach this test a successful call of it, and the action it records`).toBeDefined();
      const reply = await send(method, call!);
      expect(reply.statusCode, `${route}: ${reply.body}`).toBeLessThan(300);
      const now = await rows();
      expect(now.slice(0, seen.length), `${route} changed an earlier entry`).toEqual(seen);
      expect(now.slice(seen.length).map((row: AuditLogRow) => row.action), route).toEqual([call!.action]);
      seen = now;
    }
    const text = JSON.stringify(seen);
    for (const secret of [...secrets, IMPORT_TOKEN, GRAPH_TOKEN, TOTP_SECRET, SSO_SECRET, AWS.secretAccessKey, KEYSTONE.password, CHAT_SECRET, 'whsec-coverage-0123456789', env.tenant.token]) expect(text).not.toContain(secret);
    // One call of every changing route (70 and growing, some hashing a password): ~26 s alone on a loaded 2-core machine.
  }, 120_000);
});
