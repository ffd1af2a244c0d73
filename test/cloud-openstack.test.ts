import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNovaEmulator, type NovaEmulator } from './support/nova-emulator.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitState } from './support/notify.js';

/*
 * Issue 19: cloud actions on OpenStack Nova with an application credential, against the Keystone
 * and Nova emulator (test/support/nova-emulator.ts), which issues tokens only for the credential's
 * secret, scopes them to its project and refuses every Nova call without a valid one. The calls go
 * through the egress policy: the test opens loopback (PITCREW_EGRESS_ALLOW_NETWORKS), as an
 * operator with a private cloud would.
 */
const CREDENTIAL = { id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', secret: 'nova-app-credential-secret-value' };

describe.each(testDialects())('cloud actions on OpenStack Nova on %s', (dialect) => {
  let env: TestEnv;
  let nova: NovaEmulator;
  let credentialId: string;
  const project = { id: 'b7e8c1d2f3a44b5c9d0e1f2a3b4c5d6e', name: 'ops' };

  beforeAll(async () => {
    nova = await startNovaEmulator();
    nova.addApplicationCredential(CREDENTIAL.id, CREDENTIAL.secret, project);
    env = await startTestEnv(dialect);
    const made = await env.api('POST', '/api/v1/credentials', { name: 'nova', provider: 'openstack', secret: { authUrl: nova.authUrl, applicationCredentialId: CREDENTIAL.id, applicationCredentialSecret: CREDENTIAL.secret } });
    expect(made.statusCode, made.body).toBe(201);
    credentialId = made.json().id;
  });
  afterAll(async () => {
    await env.close();
    await nova.close();
  });

  const server = (status: 'ACTIVE' | 'SHUTOFF', projectId = project.id, metadata: Record<string, string> = {}) => {
    const id = randomUUID();
    nova.addServer({ id, projectId, status, metadata });
    return id;
  };
  const rule = (operation: string, extra: Record<string, unknown> = {}, ruleExtra: Record<string, unknown> = {}) => env.createWebhookRule({
    action: { type: 'cloud', operation, credentialId, ...extra }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_OPENSTACK', ...ruleExtra,
  });
  const fire = async (triggerId: string, body: Record<string, unknown>) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { outcome: string; reason: string | null; executionIds: string[] };
  };

  it('tests the application credential with a token and a server list', async () => {
    const tested = await env.api('POST', `/api/v1/credentials/${credentialId}/test`);
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json().message).toBe(`OpenStack accepted the application credential: compute in RegionOne at ${nova.computeUrl}`);
    const wrong = (await env.api('POST', '/api/v1/credentials', { name: 'nova wrong', provider: 'openstack', secret: { authUrl: nova.authUrl, applicationCredentialId: CREDENTIAL.id, applicationCredentialSecret: 'not-the-secret-at-all' } })).json();
    const refused = await env.api('POST', `/api/v1/credentials/${wrong.id}/test`);
    expect(refused.statusCode).toBe(502);
    expect(refused.json().detail).toMatch(/^OpenStack refused a token and a server list: error \(HTTP 401\): Keystone: The request you have made requires authentication/);
  });

  it('starts, stops, reboots and deletes servers named in the payload, with a Keystone token, waiting for each state', async () => {
    const [a, b, c, d] = [server('SHUTOFF'), server('ACTIVE'), server('ACTIVE'), server('ACTIVE')];
    const start = await rule('start');
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: a })).executionIds[0]!, 'succeeded')).toMatchObject({ hostname: a, reason: expect.stringMatching(new RegExp(`^started ${a} in RegionOne \\(nova os-start\\): SHUTOFF → ACTIVE after \\d+\\.\\d s$`)) });
    const stop = await rule('stop');
    expect(await waitState(env, (await fire(stop.triggerId, { InstanceId: b })).executionIds[0]!, 'succeeded')).toMatchObject({ reason: expect.stringMatching(/\(nova os-stop\): ACTIVE → SHUTOFF/) });
    const reboot = await rule('reboot');
    await waitState(env, (await fire(reboot.triggerId, { InstanceId: c })).executionIds[0]!, 'succeeded');
    const remove = await rule('terminate', { confirmTerminate: true }, { approval: { required: false } });
    expect(await waitState(env, (await fire(remove.triggerId, { InstanceId: d })).executionIds[0]!, 'succeeded')).toMatchObject({ reason: expect.stringMatching(/^terminated .* \(nova delete\): ACTIVE → deleted/) });
    expect([nova.server(a)!.status, nova.server(b)!.status, nova.server(c)!.reboots, nova.server(d)!.deleted]).toEqual(['ACTIVE', 'SHUTOFF', 1, true]);
    // Every Nova call carried a token Keystone issued for this credential.
    const calls = nova.requests.filter((r) => r.path.includes('/servers/'));
    expect(calls.length).toBeGreaterThan(8);
    expect(calls.every((r) => r.authorized && r.token !== null)).toBe(true);
  });

  it('authenticates again when Nova no longer takes its token', async () => {
    const id = server('SHUTOFF');
    const start = await rule('start');
    await waitState(env, (await fire(start.triggerId, { InstanceId: server('SHUTOFF') })).executionIds[0]!, 'succeeded');
    const issued = nova.tokens().length;
    nova.expireTokens();
    await waitState(env, (await fire(start.triggerId, { InstanceId: id })).executionIds[0]!, 'succeeded');
    expect(nova.tokens().length).toBe(issued + 1);
  });

  it('stops the servers whose metadata carries the rule’s tags, read page by page, each within the action limit', async () => {
    const role = `queue-${dialect}`;
    const tagged = [server('ACTIVE', project.id, { role, env: 'prod' }), server('ACTIVE', project.id, { role, env: 'prod' }), server('ACTIVE', project.id, { role, env: 'prod' })].sort();
    server('ACTIVE', project.id, { role, env: 'dev' });
    server('ACTIVE', 'c0ffee00c0ffee00c0ffee00c0ffee00', { role, env: 'prod' });
    nova.maxLimit = 2; // a cloud whose max_limit is below the page asked: the next link is followed
    try {
      const stop = await rule('stop', { instances: { tags: { role, env: 'prod' } } });
      await env.api('PATCH', `/api/v1/rules/${stop.id}`, { actionLimit: { max: 1, windowSeconds: 3600 } });
      const resolved = await waitState(env, (await fire(stop.triggerId, {})).executionIds[0]!, 'succeeded');
      expect(resolved.reason).toBe(`3 servers with metadata role=${role}, env=prod: stop queued for ${tagged.join(', ')} (one execution each, on this event)`);
      const runs = (await env.api('GET', `/api/v1/executions?eventId=${String(resolved.eventId)}`)).json().items as Array<{ id: string; hostname: string }>;
      for (const run of runs) await waitState(env, run.id, 'succeeded');
      expect(tagged.map((id) => nova.server(id)!.status)).toEqual(['SHUTOFF', 'SHUTOFF', 'SHUTOFF']);
      const pages = nova.requests.filter((r) => r.path.includes('/servers/detail'));
      expect(pages.length).toBeGreaterThanOrEqual(3);
      const again = await waitState(env, (await fire(stop.triggerId, {})).executionIds[0]!, 'succeeded');
      expect(again.reason).toMatch(/: none queued; at the action limit \(max 1 within 3600 s\), not called again: /);
    } finally {
      nova.maxLimit = 1000;
    }
  });

  it('says what Nova answered: another project’s server, a server in the wrong state, a payload without a server id', async () => {
    const start = await rule('start');
    const theirs = server('SHUTOFF', 'c0ffee00c0ffee00c0ffee00c0ffee00');
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: theirs })).executionIds[0]!, 'failed')).toMatchObject({ reason: expect.stringMatching(new RegExp(`^OpenStack refused nova os-start on ${theirs}: itemNotFound \\(HTTP 404\\): Nova: Instance ${theirs} could not be found`)) });
    const running = server('ACTIVE');
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: running })).executionIds[0]!, 'failed')).toMatchObject({ reason: expect.stringMatching(/conflictingRequest \(HTTP 409\): Nova: Cannot 'start' instance .* while it is in vm_state active/) });
    expect(await fire(start.triggerId, { InstanceId: 'i-0123456789abcdef0' })).toMatchObject({ outcome: 'no_target', reason: 'InstanceId is "i-0123456789abcdef0", not a Nova server id (a UUID)' });
    const seen = (await env.api('GET', '/api/v1/executions?limit=1000')).body + env.logs.join('\n');
    expect(seen).not.toContain(CREDENTIAL.secret);
  });
});
