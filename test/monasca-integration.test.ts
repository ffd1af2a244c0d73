import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { startKeystoneMonasca, type KeystoneMonasca } from './support/keystone-monasca.js';
import { expectProblem } from './support/problems.js';

/*
 * The Monasca integration's page, through the API: a token from Keystone (v3 and v2.0) kept as the
 * integration's secret, and the alarm definitions that notify pitcrew, read with that token from
 * the Monasca API. The emulator (support/keystone-monasca.ts) follows the Identity API v2.0/v3
 * references and openstack/monasca-api docs/monasca-api-spec.md, and checks every token.
 */

describe.each(testDialects())('the Monasca integration on %s', (dialect) => {
  let env: TestEnv;
  let cloud: KeystoneMonasca;
  let integration: { id: string; url: string };

  beforeAll(async () => {
    cloud = await startKeystoneMonasca([{ username: 'ops', password: 'ops-password-7', domain: 'ops-domain', projects: ['ops-project'] }]);
    // The emulator listens on loopback: the operator opens it to the service's outbound calls.
    env = await startTestEnv(dialect, { egressAllowNetworks: ['127.0.0.0/8'] });
    integration = (await env.api('POST', '/api/v1/integrations', { name: 'monasca', type: 'monasca', config: { monascaUrl: `${cloud.url}/` } })).json();
    const ours = integration.url.replace('<api_key>', env.tenant.apiKey);
    const project = cloud.projects.get('ops-project')!;
    project.methods.push(
      { id: 'm-pitcrew', name: 'pitcrew', type: 'WEBHOOK', address: ours, period: 0 },
      { id: 'm-mail', name: 'mail', type: 'EMAIL', address: 'ops@example.com', period: 0 },
    );
    project.definitions.push(
      { id: 'd-disk', name: 'Disk almost full', expression: 'disk.space_used_perc > 90', severity: 'HIGH', alarm_actions: ['m-pitcrew', 'm-mail'], ok_actions: ['m-pitcrew'], undetermined_actions: [] },
      { id: 'd-cpu', name: 'CPU busy', expression: 'cpu.user_perc > 90', severity: 'LOW', alarm_actions: ['m-mail'], ok_actions: [], undetermined_actions: [] },
    );
  });
  afterAll(async () => {
    await env.close();
    await cloud.close();
  });

  const login = (body: Record<string, unknown>) => env.api('POST', `/api/v1/integrations/${integration.id}/monasca/token`, {
    identityUrl: cloud.url, username: 'ops', password: 'ops-password-7', project: 'ops-project', userDomainName: 'ops-domain', projectDomainName: 'ops-domain', ...body,
  });
  const definitions = () => env.api('GET', `/api/v1/integrations/${integration.id}/monasca/alarm-definitions`);

  it('says what is missing before a token is there', async () => {
    const problem = expectProblem(await definitions(), 400, 'PITCREW_ERR_VALIDATION');
    expect(problem.detail).toMatch(/needs a token/);
  });

  it('gets a token from Keystone v3 with the fields, keeps it sealed, and never the password', async () => {
    const reply = await login({ version: 'v3' });
    expect(reply.statusCode, reply.body).toBe(200);
    expect(reply.json().expiresAt).toEqual(expect.any(String));
    expect((await env.api('GET', `/api/v1/integrations/${integration.id}`)).json().hasSecret).toBe(true);
    const row = await env.store.db.selectFrom('integrations').selectAll().where('id', '=', integration.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('ops-password-7');
    expect(cloud.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v3/auth/tokens' });
  });

  it('shows which alarm definitions notify this integration, read with the token, and masks the key', async () => {
    cloud.requests.length = 0;
    const reply = await definitions();
    expect(reply.statusCode, reply.body).toBe(200);
    const body = reply.json();
    expect(body.covered).toBe(1);
    expect(body.notificationMethods).toEqual([{ id: 'm-pitcrew', name: 'pitcrew', address: integration.url }]);
    expect(Object.fromEntries(body.alarmDefinitions.map((d: { name: string; onAlarm: boolean; onOk: boolean }) => [d.name, [d.onAlarm, d.onOk]]))).toEqual({
      'Disk almost full': [true, true],
      'CPU busy': [false, false],
    });
    expect(reply.body).not.toContain(env.tenant.apiKey);
    expect(cloud.requests.length).toBeGreaterThan(0);
    expect(cloud.requests.every((r) => typeof r.token === 'string' && r.token.length > 0)).toBe(true);
  });

  it('says when Keystone refuses the credentials or Monasca the token, never echoing either', async () => {
    const refused = expectProblem(await login({ version: 'v2.0', password: 'wrong-password-9' }), 502, 'PITCREW_ERR_TOOL_REFUSED');
    expect(refused.detail).toMatch(/Keystone refused the credentials of user ops/);
    expect(JSON.stringify(refused)).not.toContain('wrong-password-9');
    cloud.revokeTokens();
    const stale = expectProblem(await definitions(), 502, 'PITCREW_ERR_TOOL_REFUSED');
    expect(stale.detail).toMatch(/get a new one from Keystone/);
    expectProblem(await env.api('POST', '/api/v1/integrations', { name: 'bad-url', type: 'monasca', config: { monascaUrl: 'monasca:8070' } }), 400, 'PITCREW_ERR_VALIDATION');
    const other = (await env.api('POST', '/api/v1/integrations', { name: 'am', type: 'alertmanager' })).json();
    expectProblem(await env.api('GET', `/api/v1/integrations/${other.id}/monasca/alarm-definitions`), 400, 'PITCREW_ERR_VALIDATION');
  });
});

describe('the Monasca integration under the egress policy', () => {
  it('does not call a loopback Keystone the operator has not opened, and says which setting opens it', async () => {
    const cloud = await startKeystoneMonasca([{ username: 'ops', password: 'pw', projects: ['p'] }]);
    // The service's default: no network beyond the public internet is open.
    const env = await startTestEnv('sqlite', { egressAllowNetworks: [] });
    try {
      const made = (await env.api('POST', '/api/v1/integrations', { name: 'monasca', type: 'monasca' })).json();
      const reply = await env.api('POST', `/api/v1/integrations/${made.id}/monasca/token`, { version: 'v2.0', identityUrl: cloud.url, username: 'ops', password: 'pw', project: 'p' });
      const problem = expectProblem(reply, 503, 'PITCREW_ERR_TOOL_UNAVAILABLE');
      expect(problem.detail).toMatch(/PITCREW_EGRESS_ALLOW_NETWORKS/);
      expect(cloud.requests).toEqual([]);
    } finally {
      await env.close();
      await cloud.close();
    }
  });
});
