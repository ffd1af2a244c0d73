import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator, type Ec2Emulator } from './support/ec2-emulator.js';
import { startStsEmulator, type StsEmulator } from './support/sts-emulator.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitState } from './support/notify.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 19: a rule's cloud action starts, stops, reboots or terminates EC2 instances with the
 * tenant's credential, through the real @aws-sdk/client-ec2, against the EC2 emulator
 * (test/support/ec2-emulator.ts), which checks every request's SigV4 signature with the key the
 * credential holds and answers as EC2's Query API does. Each run waits for the state asked for.
 */
const KEY = { accessKeyId: 'AKIAI44QH8DHBEXAMPLE', secretAccessKey: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY' };
/** A user's key that may only assume the role: EC2 does not know it, so a run that works used the role. */
const ROLE_USER = { accessKeyId: 'AKIAJ7ROLEUSEREXAMPL', secretAccessKey: 'roleUserSecretKey/0123456789abcdefEXAMPLE', arn: 'arn:aws:iam::123456789012:user/pitcrew' };
const ROLE = { arn: 'arn:aws:iam::210987654321:role/pitcrew-ops', externalId: 'pitcrew-ext-7f3a9c' };

describe.each(testDialects())('cloud actions on EC2 on %s', (dialect) => {
  let env: TestEnv;
  let ec2: Ec2Emulator;
  let sts: StsEmulator;
  let credentialId: string;

  beforeAll(async () => {
    ec2 = await startEc2Emulator();
    ec2.addKey(KEY.accessKeyId, KEY.secretAccessKey);
    sts = await startStsEmulator((issued) => ec2.addKey(issued.accessKeyId, issued.secretAccessKey, issued.sessionToken));
    sts.addKey(ROLE_USER.accessKeyId, ROLE_USER.secretAccessKey, ROLE_USER.arn);
    sts.addRole(ROLE.arn, { trusts: [ROLE_USER.arn], externalId: ROLE.externalId });
    env = await startTestEnv(dialect, { awsEndpoint: ec2.url, awsStsEndpoint: sts.url });
    credentialId = (await env.api('POST', '/api/v1/credentials', { name: 'aws', provider: 'aws', secret: KEY })).json().id;
  });
  afterAll(async () => {
    await env.close();
    await ec2.close();
    await sts.close();
  });

  let n = 0;
  const instance = (state: 'running' | 'stopped' | 'terminated', region = 'eu-west-1', tags: Record<string, string> = {}) => {
    n += 1;
    const id = `i-${(dialect === 'sqlite' ? 0xa0000000 : 0xb0000000) + n}`.replace(/^i-(\d+)$/, (_, d: string) => `i-${Number(d).toString(16).padStart(8, '0')}`);
    ec2.addInstance({ id, region, state, tags });
    return id;
  };
  const cloudRule = (action: Record<string, unknown>, extra: Record<string, unknown> = {}) => env.createWebhookRule({
    action: { type: 'cloud', operation: 'start', region: 'eu-west-1', credentialId, ...action }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2', ...extra,
  });
  const fire = async (triggerId: string, body: Record<string, unknown>) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { outcome: string; reason: string | null; executionIds: string[] };
  };
  const calls = (action: string, id: string) => ec2.requests.filter((r) => r.action === action && r.params['InstanceId.1'] === id);

  it('starts a stopped instance named in the payload, with a signed call, and waits until it runs', async () => {
    const id = instance('stopped');
    const rule = await cloudRule({ operation: 'start' });
    // The rule's sample curl carries an instance id where the action reads it.
    expect((rule.body as { trigger: { curl: string } }).trigger.curl).toContain('"InstanceId":"i-0123456789abcdef0"');
    const reply = await fire(rule.triggerId, { HostName: 'web-1', InstanceId: id });
    expect(reply.outcome).toBe('accepted');
    const execution = await waitState(env, reply.executionIds[0]!, 'succeeded');
    expect(execution).toMatchObject({ hostId: null, hostname: id, reason: expect.stringMatching(new RegExp(`^started ${id} in eu-west-1 \\(ec2:StartInstances\\): stopped → pending, running after \\d+\\.\\d s$`)) });
    expect(ec2.instance(id)!.state).toBe('running');
    expect(calls('StartInstances', id)).toEqual([expect.objectContaining({ accessKeyId: KEY.accessKeyId, region: 'eu-west-1', authorized: true, status: 200 })]);
  });

  it('stops, reboots and terminates; terminate only when the rule confirms it', async () => {
    const [a, b, c] = [instance('running'), instance('running'), instance('running')];
    const stop = await cloudRule({ operation: 'stop' });
    expect(await waitState(env, (await fire(stop.triggerId, { InstanceId: a })).executionIds[0]!, 'succeeded')).toMatchObject({ reason: expect.stringMatching(/^stopped .* \(ec2:StopInstances\): running → stopping, stopped after/) });
    const reboot = await cloudRule({ operation: 'reboot' });
    expect(await waitState(env, (await fire(reboot.triggerId, { InstanceId: b })).executionIds[0]!, 'succeeded')).toMatchObject({ reason: expect.stringMatching(/^rebooted .* \(ec2:RebootInstances\): reboot requested, running after/) });
    expect(ec2.instance(b)!.reboots).toBe(1);

    const unconfirmed = await env.api('POST', '/api/v1/rules', { name: 'kill', trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'terminate', region: 'eu-west-1', credentialId }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' });
    expect(unconfirmed.statusCode).toBe(400);
    expect(unconfirmed.json().errors).toEqual([{ path: '/body/action/confirmTerminate', message: 'terminate destroys the instance and its local disks for good: set confirmTerminate to true to allow it' }]);
    // Terminate asks a person first (docs/approvals.md): EC2 hears nothing until the approval.
    const terminate = await cloudRule({ operation: 'terminate', confirmTerminate: true });
    const [waiting] = (await fire(terminate.triggerId, { InstanceId: c })).executionIds;
    await waitState(env, waiting!, 'awaiting_approval');
    expect(calls('TerminateInstances', c)).toEqual([]);
    expect((await env.api('POST', `/api/v1/executions/${waiting}/approve`)).statusCode).toBe(202);
    expect(await waitState(env, waiting!, 'succeeded')).toMatchObject({ reason: expect.stringMatching(/^terminated .*: running → shutting-down, terminated after/) });
    expect(ec2.instance(c)!.state).toBe('terminated');
    expect(calls('TerminateInstances', c)).toHaveLength(1);
  });

  it('acts on a fixed list, one execution per instance', async () => {
    const ids = [instance('stopped'), instance('stopped')];
    const rule = await cloudRule({ operation: 'start', instances: { ids } });
    const reply = await fire(rule.triggerId, {});
    expect(reply.executionIds).toHaveLength(2);
    for (const id of reply.executionIds) await waitState(env, id, 'succeeded');
    expect(ids.map((id) => ec2.instance(id)!.state)).toEqual(['running', 'running']);
  });

  it('calls EC2 exactly the action limit’s number of times per instance in a storm', async () => {
    const [x, y] = [instance('running'), instance('running')];
    const rule = await cloudRule({ operation: 'reboot' }, { actionLimit: { max: 2, windowSeconds: 3600 } });
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => fire(rule.triggerId, { InstanceId: i % 2 === 0 ? x : y })));
    const started = replies.flatMap((r) => r.executionIds);
    expect(started).toHaveLength(4);
    expect(replies.filter((r) => r.outcome === 'limited')).toHaveLength(20);
    expect(replies.find((r) => r.outcome === 'limited')!.reason).toMatch(/^the cloud action ran twice on instance i-[0-9a-f]{8} within 3600 s, its action limit \(max 2\): not called again/);
    for (const id of started) await waitState(env, id, 'succeeded');
    expect([calls('RebootInstances', x).length, calls('RebootInstances', y).length]).toEqual([2, 2]);
  });

  it('acts on the instances carrying the rule’s tags when the run starts, each within the action limit', async () => {
    const team = `team-${dialect}`;
    const tagged = [instance('running', 'eu-west-1', { team, env: 'prod' }), instance('running', 'eu-west-1', { team, env: 'prod' })];
    instance('running', 'eu-west-1', { team, env: 'staging' });
    instance('running', 'us-west-2', { team, env: 'prod' });
    instance('terminated', 'eu-west-1', { team, env: 'prod' });
    const rule = await cloudRule({ operation: 'reboot', instances: { tags: { team, env: 'prod' } } }, { actionLimit: { max: 1, windowSeconds: 3600 } });
    const first = await fire(rule.triggerId, {});
    expect(first).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
    const resolved = await waitState(env, first.executionIds[0]!, 'succeeded');
    expect(resolved.reason).toBe(`2 instances tagged team=${team}, env=prod in eu-west-1: reboot queued for ${tagged.join(', ')} (one execution each, on this event)`);
    const listed = ec2.requests.filter((r) => r.action === 'DescribeInstances' && r.params['Filter.1.Name'] === 'tag:team' && r.params['Filter.1.Value.1'] === team);
    expect(listed).toEqual([expect.objectContaining({ authorized: true, region: 'eu-west-1' })]);
    const runs = (await env.api('GET', `/api/v1/executions?eventId=${resolved.eventId}`)).json().items as Array<{ id: string; hostname: string }>;
    expect(runs.map((run) => run.hostname).sort()).toEqual(['(service)', ...tagged].sort());
    for (const run of runs) await waitState(env, run.id, 'succeeded');
    expect(tagged.map((id) => calls('RebootInstances', id).length)).toEqual([1, 1]);

    // The limit counts per instance: a third instance tagged since runs; the two others do not again.
    const joined = instance('running', 'eu-west-1', { team, env: 'prod' });
    const second = await waitState(env, (await fire(rule.triggerId, {})).executionIds[0]!, 'succeeded');
    expect(second.reason).toBe(`3 instances tagged team=${team}, env=prod in eu-west-1: reboot queued for ${joined} (one execution each, on this event); at the action limit (max 1 within 3600 s), not called again: ${tagged.join(', ')}`);
    await waitFor(async () => calls('RebootInstances', joined).length === 1 && ec2.instance(joined)!.reboots === 1, 'the new instance rebooted');
    expect(tagged.map((id) => calls('RebootInstances', id).length)).toEqual([1, 1]);

    const none = await cloudRule({ operation: 'stop', instances: { tags: { team: `nobody-${dialect}` } } });
    expect(await waitState(env, (await fire(none.triggerId, {})).executionIds[0]!, 'failed')).toMatchObject({ reason: `no instances tagged team=nobody-${dialect} in eu-west-1: nothing to stop` });
  });

  it('assumes the credential’s role at STS with its external id, and acts with the role’s temporary credentials', async () => {
    const secret = { accessKeyId: ROLE_USER.accessKeyId, secretAccessKey: ROLE_USER.secretAccessKey, roleArn: ROLE.arn, externalId: ROLE.externalId };
    const roleKey = (await env.api('POST', '/api/v1/credentials', { name: `role ${dialect}`, provider: 'aws', secret })).json();
    const tested = await env.api('POST', `/api/v1/credentials/${roleKey.id}/test`);
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json()).toMatchObject({ call: 'sts:AssumeRole, ec2:DescribeRegions', message: `AWS accepted the key, and role ${ROLE.arn} was assumed with it: 6 regions visible to it` });

    const assumedBefore = sts.requests.length;
    const rule = await cloudRule({ operation: 'start', credentialId: roleKey.id });
    const [a, b] = [instance('stopped'), instance('stopped')];
    for (const id of [a, b]) await waitState(env, (await fire(rule.triggerId, { InstanceId: id })).executionIds[0]!, 'succeeded');
    // One AssumeRole for both runs: the temporary credentials are kept until they near their end.
    expect(sts.requests.slice(assumedBefore)).toEqual([{ accessKeyId: ROLE_USER.accessKeyId, roleArn: ROLE.arn, sessionName: 'pitcrew', externalId: ROLE.externalId, status: 200 }]);
    for (const id of [a, b]) expect(calls('StartInstances', id)).toEqual([expect.objectContaining({ accessKeyId: expect.stringMatching(/^ASIA/), authorized: true })]);

    // A wrong external id: STS refuses, the reason names the role, and EC2 is not called.
    await env.api('PATCH', `/api/v1/credentials/${roleKey.id}`, { secret: { ...secret, externalId: 'not-the-external-id' } });
    const c = instance('stopped');
    const refused = await waitState(env, (await fire(rule.triggerId, { InstanceId: c })).executionIds[0]!, 'failed');
    expect(refused.reason).toBe(`AWS refused sts:AssumeRole of ${ROLE.arn} (for ec2:StartInstances on ${c} in eu-west-1): AccessDenied (HTTP 403): User: ${ROLE_USER.arn} is not authorized to perform: sts:AssumeRole on resource: ${ROLE.arn}`);
    expect(calls('StartInstances', c)).toEqual([]);
    const seen = JSON.stringify(refused) + tested.body + env.logs.join('\n');
    expect(seen).not.toContain(ROLE_USER.secretAccessKey);
    expect(seen).not.toContain('not-the-external-id');
  });

  it('stops the instances of a tag on a schedule; a schedule with no instance to name is refused', async () => {
    const team = `evening-${dialect}`;
    const dev = [instance('running', 'eu-west-1', { team }), instance('running', 'eu-west-1', { team })];
    const trigger = { type: 'cron', schedule: '0 19 * * 1-5', timezone: 'Europe/Berlin' };
    const refused = await env.api('POST', '/api/v1/rules', { name: 'x', trigger, action: { type: 'cloud', operation: 'stop', region: 'eu-west-1', credentialId }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([{ path: '/body/action/instances', message: expect.stringMatching(/^a cron trigger carries no payload to name an instance: list the instances \(ids\), choose them by tag \(tags\)/) }]);
    const made = await env.api('POST', '/api/v1/rules', { name: `stop ${team}`, trigger, action: { type: 'cloud', operation: 'stop', region: 'eu-west-1', credentialId, instances: { tags: { team } } }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' });
    expect(made.statusCode, made.body).toBe(201);
    const ruleId = made.json().id as string;
    const next = await env.store.db.selectFrom('schedules').select('next_at').where('rule_id', '=', ruleId).executeTakeFirstOrThrow();
    await env.app.context.scheduler.pass(Number(next.next_at));
    const events = (await env.api('GET', `/api/v1/rules/${ruleId}/events`)).json().items as Array<{ id: string; outcome: string }>;
    expect(events.map((e) => e.outcome)).toEqual(['accepted']);
    await waitFor(() => dev.every((id) => ec2.instance(id)!.state === 'stopped'), 'the tagged instances stopped');
    const runs = (await env.api('GET', `/api/v1/executions?ruleId=${ruleId}`)).json().items as Array<{ id: string; hostname: string }>;
    expect(runs.map((run) => run.hostname).sort()).toEqual(['(service)', ...dev].sort());
  });

  it('reboots a tag’s instances one at a time (maxConcurrency), and stops a list after its first failure (maxErrors)', async () => {
    const role = `rolling-${dialect}`;
    const fleet = [instance('running', 'eu-west-1', { role }), instance('running', 'eu-west-1', { role }), instance('running', 'eu-west-1', { role })];
    const rolling = await cloudRule({ operation: 'reboot', instances: { tags: { role } }, maxConcurrency: 1 });
    const found = await waitState(env, (await fire(rolling.triggerId, {})).executionIds[0]!, 'succeeded');
    const runs = () => env.api('GET', `/api/v1/executions?eventId=${String(found.eventId)}`).then((r) => (r.json().items as Array<{ id: string; hostname: string }>).filter((run) => run.hostname !== '(service)'));
    expect((await runs()).length).toBe(3);
    const ended = [];
    for (const run of await runs()) ended.push(await waitState(env, run.id, 'succeeded'));
    const spans = ended.map((run) => [Date.parse(String(run.startedAt)), Date.parse(String(run.finishedAt))] as const).sort((a, b) => a[0] - b[0]);
    // Each started only once the one before it had ended.
    expect(spans.slice(1).every(([start], i) => start >= spans[i]![1])).toBe(true);
    expect(fleet.map((id) => ec2.instance(id)!.reboots)).toEqual([1, 1, 1]);

    const [stopped, a, b] = [instance('stopped'), instance('running'), instance('running')];
    const careful = await cloudRule({ operation: 'reboot', instances: { ids: [stopped, a, b] }, maxConcurrency: 1, maxErrors: 1 });
    const reply = await fire(careful.triggerId, {});
    expect(reply.executionIds).toHaveLength(3);
    await waitState(env, reply.executionIds[0]!, 'failed');
    for (const id of reply.executionIds.slice(1)) {
      expect(await waitState(env, id, 'cancelled')).toMatchObject({ reason: 'cancelled before it ran: 1 instance of this fan-out failed (maxErrors 1), so the rest were stopped' });
    }
    expect([calls('RebootInstances', a).length, calls('RebootInstances', b).length]).toEqual([0, 0]);
  });

  it('says what EC2 answered when it refuses, and what the payload lacks', async () => {
    const rule = await cloudRule({ operation: 'start' });
    const missing = await fire(rule.triggerId, { InstanceId: 'i-0000000000000dead' });
    const notFound = await waitState(env, missing.executionIds[0]!, 'failed');
    expect(notFound).toMatchObject({ reason: expect.stringMatching(/^AWS refused ec2:StartInstances on i-0000000000000dead in eu-west-1: InvalidInstanceID\.NotFound \(HTTP 400\): .*i-0000000000000dead/) });
    // One log line for the failed run, with what an operator searches by and the reason.
    const logged = env.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'cloud action failed' && line.executionId === notFound.id);
    expect(logged).toEqual([expect.objectContaining({ level: 40, executionId: notFound.id, ruleId: rule.id, provider: 'aws', operation: 'start', region: 'eu-west-1', instanceId: 'i-0000000000000dead', reason: notFound.reason })]);
    // In another region than the rule's: EC2 does not know it there.
    const elsewhere = instance('stopped', 'us-west-2');
    expect(await waitState(env, (await fire(rule.triggerId, { InstanceId: elsewhere })).executionIds[0]!, 'failed')).toMatchObject({ reason: expect.stringMatching(/InvalidInstanceID\.NotFound/) });
    expect(await fire(rule.triggerId, {})).toMatchObject({ outcome: 'no_target', reason: 'the payload names no instance (send its id in InstanceId, or set the action\'s instances.field), nor a host whose cloud instance id is set (HostName)' });
    expect(await fire(rule.triggerId, { HostName: 'nowhere-7' })).toMatchObject({ outcome: 'no_target', reason: expect.stringMatching(/^the payload names no instance \(.*\), and no host named "nowhere-7" has an agent in this tenant/) });
    expect(await fire(rule.triggerId, { InstanceId: 'web-1' })).toMatchObject({ outcome: 'no_target', reason: 'InstanceId is "web-1", not an EC2 instance id (i- and 8 or 17 hexadecimal digits)' });
    const field = await cloudRule({ operation: 'start', instances: { from: 'payload', field: 'Ec2Id' } });
    const byField = instance('stopped');
    expect(await waitState(env, (await fire(field.triggerId, { MetaData: { Ec2Id: byField } })).executionIds[0]!, 'succeeded')).toBeTruthy();

    // A rotated key EC2 does not know: refused, the secret nowhere in the reason.
    await env.api('PATCH', `/api/v1/credentials/${credentialId}`, { secret: { accessKeyId: KEY.accessKeyId, secretAccessKey: 'not-the-key-any-more-0123456789' } });
    try {
      const refused = await fire(rule.triggerId, { InstanceId: instance('stopped') });
      const execution = await waitState(env, refused.executionIds[0]!, 'failed');
      expect(execution.reason).toMatch(/^AWS refused ec2:StartInstances .*: AuthFailure \(HTTP 401\)/);
      expect(JSON.stringify(execution)).not.toContain('not-the-key-any-more');
    } finally {
      await env.api('PATCH', `/api/v1/credentials/${credentialId}`, { secret: KEY });
    }
  });

  it('acts on the cloud instance of the host the alert names, or of the hosts of its tags', async () => {
    const db1 = await env.enrol(`db-1-${dialect}`, ['workers']);
    const db2 = await env.enrol(`db-2-${dialect}`, ['workers']);
    const rule = await cloudRule({ operation: 'start' });
    const unmapped = await fire(rule.triggerId, { HostName: `db-1-${dialect}` });
    expect(unmapped).toMatchObject({ outcome: 'no_target', reason: expect.stringMatching(new RegExp(`and host db-1-${dialect} has no cloud instance id: set it with PATCH`)) });
    const [i1, i2] = [instance('stopped'), instance('stopped')];
    const set = await env.api('PATCH', `/api/v1/hosts/${db1.hostId}`, { cloudInstanceId: i1 });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().cloudInstanceId).toBe(i1);
    await env.api('PATCH', `/api/v1/hosts/${db2.hostId}`, { cloudInstanceId: i2 });
    const byHost = await fire(rule.triggerId, { HostName: `db-1-${dialect}` });
    expect((await waitState(env, byHost.executionIds[0]!, 'succeeded')).hostname).toBe(i1);
    const tags = await cloudRule({ operation: 'stop' }, { target: { type: 'specific_tags', tags: ['workers'] } });
    const fanned = await fire(tags.triggerId, {});
    expect(fanned.executionIds).toHaveLength(2);
    for (const id of fanned.executionIds) await waitState(env, id, 'succeeded');
    expect([ec2.instance(i1)!.state, ec2.instance(i2)!.state]).toEqual(['stopped', 'stopped']);
    expect((await env.api('PATCH', `/api/v1/hosts/${db1.hostId}`, { cloudInstanceId: null })).json().cloudInstanceId).toBeNull();
  });

  it('refuses a rule whose cloud, credential or region does not fit, saying which fits', async () => {
    const azureKey = (await env.api('POST', '/api/v1/credentials', { name: 'azure', provider: 'azure', secret: { tenantId: '8f6a1c1e-0d6f-4d1b-9a43-5b0f1c2d3e4f', clientId: '2b7e1d4c-3a5f-4e6d-8c9b-0a1b2c3d4e5f', clientSecret: 'x'.repeat(20), subscriptionId: '11111111-2222-4333-8444-555555555555' } })).json();
    const mismatch = await env.api('POST', '/api/v1/rules', { name: 'x', trigger: { type: 'webhook' }, action: { type: 'cloud', provider: 'aws', operation: 'start', region: 'eu-west-1', credentialId }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_GCP' });
    expect(mismatch.json().errors).toEqual([{ path: '/body/action/provider', message: 'aws actions belong to infrastructure type CLOUD_EC2, not CLOUD_GCP; change one of them' }]);
    const wrongKey = await env.api('POST', '/api/v1/rules', { name: 'z', trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'start', region: 'eu-west-1', credentialId: azureKey.id }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' });
    expect(wrongKey.json().errors).toEqual([{ path: '/body/action/credentialId', message: 'credential "azure" is for azure, and this action for aws: pick one for aws' }]);
    const noRegion = await env.api('POST', '/api/v1/rules', { name: 'y', trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'start', credentialId }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' });
    expect(noRegion.json().errors).toEqual([{ path: '/body/action/region', message: 'an AWS action needs the region of its instances, e.g. eu-west-1' }]);
    const noKey = await env.api('POST', '/api/v1/rules', { name: 'w', trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'start', region: 'eu-west-1' }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2' });
    expect(noKey.json().errors).toEqual([{ path: '/body/action/credentialId', message: "a cloud action acts with one of the tenant's credentials: store one (POST /api/v1/credentials) and give its id" }]);
  });

  it('never writes the secret into a log line', async () => {
    await waitFor(() => env.logs.length > 0, 'log lines');
    const logs = env.logs.join('\n');
    expect(logs).not.toContain(KEY.secretAccessKey);
    expect(logs).not.toContain('not-the-key-any-more');
  });
});
