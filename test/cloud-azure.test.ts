import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AzureVms } from '../src/actions/cloud/azure.js';
import type { CloudSpec } from '../src/actions/cloud/kind.js';
import { PitcrewError } from '../src/errors/catalogue.js';
import { startAzureEmulator, type AzureEmulator } from './support/azure-emulator.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitState } from './support/notify.js';
import { freePort } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 19: cloud actions on Azure VMs with a service principal, through the real @azure/identity
 * and @azure/arm-compute, against the Entra ID + Resource Manager emulator
 * (test/support/azure-emulator.ts): it issues RS256 tokens only for the principal's client secret,
 * and ARM checks each call's token (signature, audience, expiry, tenant) and the principal's role
 * assignments, then runs the VM's long-running operation. Both serve HTTPS with a self-signed
 * certificate, which the service trusts through its Azure CA setting (PITCREW_AZURE_CA_FILE).
 */
const TENANT = '3c9d2e1f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const SP = { tenantId: TENANT, clientId: '7d8e9f0a-1b2c-4d3e-9f4a-5b6c7d8e9f0a', clientSecret: 'Az~pitcrew.ClientSecret-7f3b9c1d2e4a6b8c0d' };
const WRONG_SECRET = 'Az~wrong.Secret-0000000000000000000000';
const SUB = '5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d';
/** A subscription of the same tenant where the principal has no role. */
const UNREACHABLE = 'aa11bb22-cc33-4d44-9e55-ff6677889900';
/** The custom role docs/credentials.md gives pitcrew's principal: these actions and no others. */
const PITCREW_ROLE = [
  'Microsoft.Compute/virtualMachines/read',
  'Microsoft.Compute/virtualMachines/instanceView/read',
  'Microsoft.Compute/virtualMachines/start/action',
  'Microsoft.Compute/virtualMachines/deallocate/action',
  'Microsoft.Compute/virtualMachines/restart/action',
  'Microsoft.Compute/virtualMachines/delete',
  'Microsoft.Compute/locations/operations/read',
];
const MUTATING = /\/(start|deallocate|restart)\/action$|\/delete$/;

describe.each(testDialects())('cloud actions on Azure VMs on %s', (dialect) => {
  let env: TestEnv;
  let azure: AzureEmulator;
  let credentialId: string;
  let endpoints: { authorityHost: string; resourceManagerUrl: string; caPem: string };

  beforeAll(async () => {
    azure = await startAzureEmulator();
    azure.addServicePrincipal(SP);
    azure.addSubscription(SUB, TENANT);
    azure.addSubscription(UNREACHABLE, TENANT);
    azure.grant(SP.clientId, `/subscriptions/${SUB}`, PITCREW_ROLE);
    endpoints = { authorityHost: azure.authorityHost, resourceManagerUrl: azure.resourceManagerUrl, caPem: azure.caPem };
    env = await startTestEnv(dialect, { azure: endpoints });
    const made = await env.api('POST', '/api/v1/credentials', { name: 'azure', provider: 'azure', secret: { ...SP, subscriptionId: SUB } });
    expect(made.statusCode, made.body).toBe(201);
    credentialId = made.json().id;
  });
  afterAll(async () => {
    await env.close();
    await azure.close();
  });

  let n = 0;
  const vm = (powerState: 'running' | 'deallocated', options: { group?: string; subscriptionId?: string; tags?: Record<string, string>; location?: string; transitionPolls?: number } = {}) => {
    n += 1;
    return azure.addVm({ subscriptionId: options.subscriptionId ?? SUB, resourceGroup: options.group ?? 'web', name: `${dialect}-vm-${n}`, powerState, ...options });
  };
  const shortForm = (id: string) => id.split('/').filter((_, i) => i === 4 || i === 8).join('/');
  const rule = (operation: string, extra: Record<string, unknown> = {}, ruleExtra: Record<string, unknown> = {}) => env.createWebhookRule({
    action: { type: 'cloud', operation, credentialId, ...extra }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_AZURE', ...ruleExtra,
  });
  const fire = async (triggerId: string, body: Record<string, unknown>) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { outcome: string; reason: string | null; executionIds: string[] };
  };
  /** ARM calls about one VM (by its name), in order: method and authorization action. */
  const armCalls = (id: string) => azure.requests.filter((r) => r.service === 'arm' && r.path.toLowerCase().startsWith(id.toLowerCase()));
  const issuedToSp = () => new Set(azure.tokens().filter((t) => t.clientId === SP.clientId && t.tenantId === TENANT).map((t) => t.token));
  const direct = (pollMs = 20) => new AzureVms({ ...endpoints, pollMs });
  const spec = (operation: CloudSpec['operation'], instanceId: string, waitSeconds = 30): CloudSpec => ({ kind: 'cloud', provider: 'azure', operation, region: '', credentialId, instanceId, waitSeconds, timeoutSeconds: waitSeconds + 60 });
  const secret = { ...SP, subscriptionId: SUB };

  it('tests the credential with a token and a VM list; a wrong secret is refused in Entra ID’s words, the secret nowhere', async () => {
    vm('running');
    const tested = await env.api('POST', `/api/v1/credentials/${credentialId}/test`);
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json()).toMatchObject({ ok: true, call: 'entra:token, Microsoft.Compute/virtualMachines/read', message: expect.stringMatching(new RegExp(`^Azure accepted the service principal: \\d+ VMs? in subscription ${SUB} visible to it$`)) });
    const wrong = (await env.api('POST', '/api/v1/credentials', { name: 'azure wrong', provider: 'azure', secret: { ...SP, clientSecret: WRONG_SECRET, subscriptionId: SUB } })).json();
    const refused = await env.api('POST', `/api/v1/credentials/${wrong.id}/test`);
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toMatchObject({ code: 'PITCREW_ERR_PROVIDER_REFUSED', detail: expect.stringMatching(new RegExp(`^Azure refused a token and a VM list: invalid_client \\(HTTP 401\\): Entra ID: AADSTS7000215: Invalid client secret provided\\. .* for a secret added to app '${SP.clientId}'\\.$`)) });
    expect(refused.body).not.toContain(WRONG_SECRET);
    // The token request carried the secret; ARM was never called with the wrong one.
    expect(azure.requests.filter((r) => r.service === 'entra' && r.action === 'token' && !r.authorized).length).toBeGreaterThan(0);
  });

  it('says when Entra ID or Resource Manager does not answer (503), without waiting long', async () => {
    const closed = `https://127.0.0.1:${await freePort()}`;
    // Registered in the tenant, so the token is issued and only Resource Manager is silent.
    azure.addResource(closed);
    const started = performance.now();
    for (const settings of [{ authorityHost: closed }, { resourceManagerUrl: closed }]) {
      const error = await new AzureVms({ ...endpoints, ...settings }).probe(secret).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(PitcrewError);
      expect(error).toMatchObject({ code: 'PITCREW_ERR_PROVIDER_UNAVAILABLE', message: expect.stringMatching(/^Azure did not answer a token and a VM list: /) });
      expect((error as Error).message).not.toContain(SP.clientSecret);
    }
    expect(performance.now() - started).toBeLessThan(8000);
  });

  it('starts, stops (deallocates), reboots and deletes VMs named in the payload by resource id or group/name, waiting for each state', async () => {
    const [a, b, c, d] = [vm('deallocated'), vm('running'), vm('running'), vm('running')];
    const start = await rule('start');
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: a })).executionIds[0]!, 'succeeded')).toMatchObject({
      hostId: null, hostname: a, reason: expect.stringMatching(new RegExp(`^started ${a} \\(Azure virtualMachines/start\\): PowerState/deallocated → PowerState/running after \\d+\\.\\d s$`)),
    });
    const stop = await rule('stop');
    expect(await waitState(env, (await fire(stop.triggerId, { InstanceId: shortForm(b) })).executionIds[0]!, 'succeeded')).toMatchObject({
      hostname: shortForm(b), reason: expect.stringMatching(/^stopped web\/.* \(Azure virtualMachines\/deallocate\): PowerState\/running → PowerState\/deallocated after/),
    });
    // Segment names in any case, as ARM reads them.
    const reboot = await rule('reboot');
    await waitState(env, (await fire(reboot.triggerId, { InstanceId: c.replace('resourceGroups', 'resourcegroups').replace('Microsoft.Compute/virtualMachines', 'microsoft.compute/VirtualMachines') })).executionIds[0]!, 'succeeded');
    const remove = await rule('terminate', { confirmTerminate: true }, { approval: { required: false } });
    expect(await waitState(env, (await fire(remove.triggerId, { InstanceId: d })).executionIds[0]!, 'succeeded')).toMatchObject({ reason: expect.stringMatching(/^terminated .* \(Azure virtualMachines\/delete\): PowerState\/running → deleted after/) });
    // A restart counts once its operation settled, which only the run's own reads make happen: the
    // reboot waited for its operation, not for the first PowerState/running it read.
    expect([azure.vm(a)!.powerState, azure.vm(b)!.powerState, azure.vm(c)!.restarts, azure.vm(d)!.deleted]).toEqual(['running', 'deallocated', 1, true]);

    // Exactly one operation per VM, the one asked for; the rest reads of its state and of the operation.
    const mutations = (id: string) => armCalls(id).filter((r) => MUTATING.test(r.action)).map((r) => `${r.method} ${r.action.split('virtualMachines/')[1]}`);
    expect([a, b, c, d].map(mutations)).toEqual([['POST start/action'], ['POST deallocate/action'], ['POST restart/action'], ['DELETE delete']]);
    const reads = new Set(azure.requests.filter((r) => r.service === 'arm' && !MUTATING.test(r.action)).map((r) => r.action));
    expect(reads).toEqual(new Set(['Microsoft.Compute/virtualMachines/instanceView/read', 'Microsoft.Compute/locations/operations/read', 'Microsoft.Compute/virtualMachines/read']));
    // Every ARM call carried a token Entra ID issued for this principal, with the SDK's api-version.
    const arm = azure.requests.filter((r) => r.service === 'arm');
    const issued = issuedToSp();
    expect(arm.every((r) => r.authorized && r.clientId === SP.clientId && r.token !== null && issued.has(r.token))).toBe(true);
    expect(new Set(arm.map((r) => r.apiVersion))).toEqual(new Set(['2026-03-01']));
  });

  it('acts on a fixed list, on a host’s VM, and on the VMs a tag filter finds', async () => {
    const ids = [vm('deallocated'), vm('deallocated')];
    const list = await rule('start', { instances: { ids: [ids[0], shortForm(ids[1]!)] } });
    const reply = await fire(list.triggerId, {});
    expect(reply.executionIds).toHaveLength(2);
    for (const id of reply.executionIds) await waitState(env, id, 'succeeded');
    expect(ids.map((id) => azure.vm(id)!.powerState)).toEqual(['running', 'running']);

    // Both forms fit a host's cloudInstanceId.
    const host = await env.enrol(`az-host-${dialect}`);
    const hostVm = vm('running');
    for (const form of [shortForm(hostVm), hostVm]) {
      const set = await env.api('PATCH', `/api/v1/hosts/${host.hostId}`, { cloudInstanceId: form });
      expect(set.statusCode, set.body).toBe(200);
    }
    const stop = await rule('stop');
    expect((await waitState(env, (await fire(stop.triggerId, { HostName: `az-host-${dialect}` })).executionIds[0]!, 'succeeded')).hostname).toBe(hostVm);
    expect(azure.vm(hostVm)!.powerState).toBe('deallocated');

    const batch = `batch-${dialect}`;
    const tagged = [vm('deallocated', { tags: { role: batch } }), vm('deallocated', { tags: { Role: batch, env: 'prod' } })];
    vm('deallocated', { tags: { role: 'web' } });
    const byTag = await rule('start', { instances: { tags: { role: batch } } });
    const resolver = await waitState(env, (await fire(byTag.triggerId, {})).executionIds[0]!, 'succeeded');
    expect(resolver.reason).toContain(`start queued for ${[...tagged].sort().join(', ')}`);
    const runs = (await env.api('GET', `/api/v1/executions?ruleId=${byTag.id}&limit=10`)).json().items as Array<{ id: string; hostname: string }>;
    for (const run of runs.filter((r) => r.id !== resolver.id)) await waitState(env, run.id, 'succeeded');
    expect(tagged.map((id) => azure.vm(id)!.powerState)).toEqual(['running', 'running']);
  });

  it('calls Resource Manager exactly the action limit’s number of times per VM in a storm', async () => {
    const [x, y] = [vm('running'), vm('running')];
    const reboot = await rule('reboot', {}, { actionLimit: { max: 2, windowSeconds: 3600 } });
    // Each restart settles as it is made, so two on one VM do not cancel each other.
    azure.transitionPolls = 0;
    try {
      const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => fire(reboot.triggerId, { InstanceId: i % 2 === 0 ? x : y })));
      const started = replies.flatMap((r) => r.executionIds);
      expect(started).toHaveLength(4);
      expect(replies.filter((r) => r.outcome === 'limited')).toHaveLength(20);
      expect(replies.find((r) => r.outcome === 'limited')!.reason).toMatch(/^the cloud action ran twice on instance \/subscriptions\/.* within 3600 s, its action limit \(max 2\): not called again/);
      for (const id of started) await waitState(env, id, 'succeeded');
    } finally {
      azure.transitionPolls = 1;
    }
    const restarts = (id: string) => armCalls(id).filter((r) => r.action.endsWith('/restart/action')).length;
    expect([restarts(x), restarts(y)]).toEqual([2, 2]);
    expect([azure.vm(x)!.restarts, azure.vm(y)!.restarts]).toEqual([2, 2]);
  });

  it('says what Azure answered: a VM the principal cannot reach, one that does not exist, an operation that failed, a payload without a VM', async () => {
    const start = await rule('start');
    const theirs = vm('deallocated', { subscriptionId: UNREACHABLE });
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: theirs })).executionIds[0]!, 'failed')).toMatchObject({
      reason: expect.stringMatching(new RegExp(`^Azure refused virtualMachines/start on ${theirs}: AuthorizationFailed \\(HTTP 403\\): The client '${SP.clientId}' with object id '[0-9a-f-]{36}' does not have authorization to perform action 'Microsoft\\.Compute/virtualMachines/instanceView/read' over scope '${theirs.replaceAll('.', '\\.')}' or the scope is invalid\\.`)),
    });
    expect(azure.vm(theirs)!.powerState).toBe('deallocated');
    const missing = `web/${dialect}-no-such-vm`;
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: missing })).executionIds[0]!, 'failed')).toMatchObject({
      reason: `Azure refused virtualMachines/start on ${missing}: ResourceNotFound (HTTP 404): The Resource 'Microsoft.Compute/virtualMachines/${dialect}-no-such-vm' under resource group 'web' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    });
    const full = vm('deallocated');
    azure.failNextOperation(full, { code: 'AllocationFailed', message: 'Allocation failed. We do not have sufficient capacity for the requested VM size in this region.' });
    expect(await waitState(env, (await fire(start.triggerId, { InstanceId: full })).executionIds[0]!, 'failed')).toMatchObject({
      reason: expect.stringMatching(/^Azure virtualMachines\/start on .*: the operation failed after \d+\.\d s \(PowerState\/deallocated → PowerState\/deallocated\): AllocationFailed\. Allocation failed\. We do not have sufficient capacity/),
    });
    expect(await fire(start.triggerId, { InstanceId: 'i-0123456789abcdef0' })).toMatchObject({ outcome: 'no_target', reason: expect.stringMatching(/^InstanceId is "i-0123456789abcdef0", not an Azure VM \(/) });
    expect(await fire(start.triggerId, { InstanceId: '../providers/x' })).toMatchObject({ outcome: 'no_target' });
  });

  it('gives up at its timeout when the state never comes, and stops at once when cancelled', async () => {
    const stuck = vm('deallocated', { transitionPolls: Number.POSITIVE_INFINITY });
    const started = performance.now();
    const end = await direct().run(spec('start', stuck, 0.4), secret, 'key-1', new AbortController().signal);
    expect(end).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^Azure virtualMachines\/start on .*: PowerState\/deallocated → PowerState\/starting after \d+\.\d s, not PowerState\/running, the operation still running \(timeoutSeconds 0\.4\)$/) });
    expect(performance.now() - started).toBeLessThan(5000);
    const cancel = new AbortController();
    const running = direct().run(spec('stop', vm('running', { transitionPolls: Number.POSITIVE_INFINITY }), 300), secret, 'key-2', cancel.signal);
    const before = azure.requests.length;
    await waitFor(() => azure.requests.slice(before).some((r) => r.action === 'Microsoft.Compute/locations/operations/read'), 'the stop operation polled');
    const cancelledAt = performance.now();
    cancel.abort();
    await expect(running).rejects.toThrow();
    expect(performance.now() - cancelledAt).toBeLessThan(2000);
  });

  it('finds the subscription’s VMs that carry every tag (names in any case, values exactly), sorted, not another subscription’s', async () => {
    const tag = `t-${dialect}`;
    const both = [vm('running', { group: 'zeta', tags: { team: tag, env: 'prod' } }), vm('deallocated', { group: 'alpha', tags: { Team: tag, ENV: 'prod', extra: '1' } })];
    vm('running', { tags: { team: tag } });
    vm('running', { tags: { team: tag, env: 'Prod' } });
    vm('running', { subscriptionId: UNREACHABLE, tags: { team: tag, env: 'prod' } });
    const elsewhere = vm('running', { location: 'eastus', tags: { team: tag, env: 'prod' } });
    azure.listPageSize = 3;
    try {
      const found = await direct().instancesTagged({ team: tag, env: 'prod' }, '', secret, 'key-3', new AbortController().signal);
      expect(found).toEqual([...both, elsewhere].sort());
      expect(await direct().instancesTagged({ team: tag, env: 'prod' }, 'WestEurope', secret, 'key-3', new AbortController().signal)).toEqual([...both].sort());
    } finally {
      azure.listPageSize = 100;
    }
    const wrong = await direct().instancesTagged({ team: tag }, '', { ...secret, clientSecret: WRONG_SECRET }, 'key-4', new AbortController().signal).then(() => null, (e: unknown) => e);
    expect(wrong).toMatchObject({ code: 'PITCREW_ERR_PROVIDER_REFUSED', message: expect.stringMatching(/^Azure refused virtualMachines\/listAll in subscription .*: invalid_client \(HTTP 401\): Entra ID: AADSTS7000215/) });
  });

  it('asks Entra ID for a token once per credential as saved, not once per run', async () => {
    const tokens = () => azure.requests.filter((r) => r.service === 'entra' && r.action === 'token' && r.clientId === SP.clientId && r.authorized).length;
    const start = await rule('start');
    await waitState(env, (await fire(start.triggerId, { InstanceId: vm('deallocated') })).executionIds[0]!, 'succeeded');
    const before = tokens();
    for (let i = 0; i < 3; i += 1) await waitState(env, (await fire(start.triggerId, { InstanceId: vm('deallocated') })).executionIds[0]!, 'succeeded');
    expect(tokens()).toBe(before);
    const saved = await env.api('PATCH', `/api/v1/credentials/${credentialId}`, { secret: { ...SP, subscriptionId: SUB } });
    expect(saved.statusCode, saved.body).toBe(200);
    await waitState(env, (await fire(start.triggerId, { InstanceId: vm('deallocated') })).executionIds[0]!, 'succeeded');
    expect(tokens()).toBe(before + 1);
  });

  it('never writes the client secret into a stored output, reason, reply or log line', async () => {
    const executions = (await env.api('GET', '/api/v1/executions?limit=1000')).body;
    const credentials = (await env.api('GET', '/api/v1/credentials')).body;
    const seen = `${executions}\n${credentials}\n${env.logs.join('\n')}`;
    expect(executions).toContain('Azure');
    for (const value of [SP.clientSecret, WRONG_SECRET]) expect(seen).not.toContain(value);
  });
});
