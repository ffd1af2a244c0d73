import https from 'node:https';
import { ComputeManagementClient, isRestError, RestError } from '@azure/arm-compute';
import { ClientSecretCredential } from '@azure/identity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackOnly } from './loopback-only.js';
import { type AzureEmulator, startAzureEmulator } from './azure-emulator.js';

/**
 * The Entra ID + Resource Manager emulator (test/support/azure-emulator.ts) driven by the real
 * @azure/identity and @azure/arm-compute, and by plain HTTPS where a client would not send what a
 * check needs. What it emulates and where each behaviour was checked is cited at the top of that
 * file; the facts these assertions rest on:
 * - MSAL fetches {authority}/{tenant}/v2.0/.well-known/openid-configuration, then POSTs
 *   client_credentials to its token_endpoint (msal-common Authority.mjs, msal-node
 *   ClientCredentialClient.mjs); a wrong secret is 401 invalid_client AADSTS7000215, an unknown
 *   tenant 400 invalid_tenant AADSTS90002 (bodies quoted in the issues the emulator cites).
 * - ARM: 401 AuthenticationFailed without a token, InvalidAuthenticationToken for one it did not
 *   issue, InvalidAuthenticationTokenAudience, ExpiredAuthenticationToken,
 *   InvalidAuthenticationTokenTenant; 403 AuthorizationFailed naming the action before any 404;
 *   404 ResourceNotFound / ResourceGroupNotFound / SubscriptionNotFound; 400
 *   MissingApiVersionParameter; long-running operations as 202 with Azure-AsyncOperation and
 *   Location (azure-resource-manager-rpc async-api-reference.md); 409 OperationNotAllowed "The
 *   operation requires the VM to be running (or set to run)." for a restart of a stopped VM.
 */

const TENANT = '6a1f3c2e-8b4d-4e5f-9a0b-1c2d3e4f5a6b';
const OTHER_TENANT = '0f9e8d7c-6b5a-4493-8271-605f4e3d2c1b';
const SP = { tenantId: TENANT, clientId: 'a3b4c5d6-e7f8-4901-a2b3-c4d5e6f7a8b9', clientSecret: 'eMu~lator.Secret-0123456789abcdefXYZ' };
const READER = { tenantId: TENANT, clientId: 'b4c5d6e7-f8a9-4012-b3c4-d5e6f7a8b9c0', clientSecret: 'reader~secret-0123456789abcdef0123' };
const OUTSIDER = { tenantId: OTHER_TENANT, clientId: 'c5d6e7f8-a9b0-4123-84d5-e6f7a8b9c0d1', clientSecret: 'outsider~secret-0123456789abcdef01' };
const SUB = '1e2d3c4b-5a69-4788-9766-554433221100';
const SUB_OTHER_TENANT = '99887766-5544-4332-8110-ffeeddccbbaa';

let emulator: AzureEmulator;
let guard: ReturnType<typeof loopbackOnly>;

function credential(principal: typeof SP): ClientSecretCredential {
  return new ClientSecretCredential(principal.tenantId, principal.clientId, principal.clientSecret, {
    authorityHost: emulator.authorityHost,
    disableInstanceDiscovery: true,
    tlsOptions: { ca: [emulator.caPem] },
    retryOptions: { maxRetries: 0 },
  });
}

function compute(principal: typeof SP = SP, subscriptionId = SUB): ComputeManagementClient {
  return new ComputeManagementClient(credential(principal), subscriptionId, {
    endpoint: emulator.resourceManagerUrl,
    credentials: { scopes: [`${emulator.resourceManagerUrl}/.default`] },
    tlsOptions: { ca: [emulator.caPem] },
    retryOptions: { maxRetries: 0 },
  });
}

/** A request over HTTPS trusting the emulator's certificate: status, headers, parsed body. */
function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: init.method ?? 'GET', headers: init.headers, ca: emulator.caPem }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

async function token(principal: typeof SP = SP, scope = `${emulator.resourceManagerUrl}/.default`): Promise<string> {
  return (await credential(principal).getToken(scope)).token;
}

async function refusal(promise: Promise<unknown>): Promise<RestError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(isRestError(error), String(error)).toBe(true);
  return error as RestError;
}

const vmPath = (group: string, name: string, sub = SUB) => `/subscriptions/${sub}/resourceGroups/${group}/providers/Microsoft.Compute/virtualMachines/${name}`;
const API = 'api-version=2026-03-01';

beforeAll(async () => {
  guard = loopbackOnly();
  emulator = await startAzureEmulator();
  for (const principal of [SP, READER, OUTSIDER]) emulator.addServicePrincipal(principal);
  emulator.addSubscription(SUB, TENANT);
  emulator.addSubscription(SUB_OTHER_TENANT, OTHER_TENANT);
  emulator.grant(SP.clientId, `/subscriptions/${SUB}`);
  emulator.grant(READER.clientId, `/subscriptions/${SUB}/resourceGroups/web`, ['Microsoft.Compute/*/read']);
});

afterAll(async () => {
  guard.restore();
  await emulator?.close();
});

describe('Entra ID token endpoint', () => {
  it('issues an RS256 JWT for the right secret, with the ARM audience, tenant, app id and expiry', async () => {
    const issued = await token();
    const [head, body] = issued.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(head).toMatchObject({ typ: 'JWT', alg: 'RS256', kid: expect.any(String) });
    expect(body).toMatchObject({ aud: emulator.resourceManagerUrl, tid: TENANT, appid: SP.clientId, iss: `https://sts.windows.net/${TENANT}/`, ver: '1.0' });
    expect((body!.exp as number) - (body!.iat as number)).toBe(3599);
    const asked = emulator.requests.filter((r) => r.service === 'entra');
    expect(asked.map((r) => r.action)).toEqual(['openid-configuration', 'token']);
    expect(asked[1]!.form).toMatchObject({ client_id: SP.clientId, scope: `${emulator.resourceManagerUrl}/.default`, grant_type: 'client_credentials', 'x-client-SKU': 'msal.js.node' });
    expect(asked[1]!.form).not.toHaveProperty('client_secret');
    expect(emulator.tokens().at(-1)).toMatchObject({ token: issued, clientId: SP.clientId, tenantId: TENANT });
    // MSAL asked nothing of login.microsoftonline.com (instance discovery is off).
    expect(guard.connections.every((c) => /^(127\.0\.0\.1|localhost|::1)$/.test(c))).toBe(true);
  });

  it('refuses a wrong secret (401 AADSTS7000215), an unknown client, an unknown tenant, a scope without /.default and another resource', async () => {
    const endpoint = `${emulator.authorityHost}/${TENANT}/oauth2/v2.0/token`;
    const form = (fields: Record<string, string>) => call(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    const base = { client_id: SP.clientId, client_secret: SP.clientSecret, grant_type: 'client_credentials', scope: `${emulator.resourceManagerUrl}/.default` };
    const wrong = await form({ ...base, client_secret: 'not-the-secret' });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ error: 'invalid_client', error_codes: [7000215], error_description: expect.stringMatching(new RegExp(`^AADSTS7000215: Invalid client secret provided\\. .*for a secret added to app '${SP.clientId}'\\.\\r\\nTrace ID: `)) });
    expect(JSON.stringify(wrong.json)).not.toContain('not-the-secret');
    expect((await form({ ...base, client_id: '00000000-0000-4000-8000-000000000000' })).json).toMatchObject({ error: 'unauthorized_client', error_codes: [700016] });
    expect((await form({ ...base, client_id: OUTSIDER.clientId, client_secret: OUTSIDER.clientSecret })).json).toMatchObject({ error: 'unauthorized_client' });
    expect((await form({ ...base, scope: emulator.resourceManagerUrl })).json).toMatchObject({ error: 'invalid_scope', error_codes: [1002012] });
    expect((await form({ ...base, scope: 'https://management.azure.com/.default' })).json).toMatchObject({ error: 'invalid_resource', error_codes: [500011] });
    const unknown = await call(`${emulator.authorityHost}/11111111-2222-4333-8444-555555555555/v2.0/.well-known/openid-configuration`);
    expect(unknown).toMatchObject({ status: 400, json: { error: 'invalid_tenant', error_codes: [90002], error_description: expect.stringMatching(/^AADSTS90002: Tenant '11111111-2222-4333-8444-555555555555' not found\./) } });
    const viaSdk = await credential({ ...SP, clientSecret: 'not-the-secret' }).getToken(`${emulator.resourceManagerUrl}/.default`).then(() => null, (e: Error) => e);
    expect(viaSdk?.message).toMatch(/invalid_client.*AADSTS7000215/);
  });

  it('serves the signing key the tokens verify with', async () => {
    const keys = await call(`${emulator.authorityHost}/${TENANT}/discovery/v2.0/keys`);
    const header = JSON.parse(Buffer.from((await token()).split('.')[0]!, 'base64url').toString('utf8')) as { kid: string };
    expect(keys.json).toMatchObject({ keys: [{ kty: 'RSA', use: 'sig', kid: header.kid, n: expect.any(String), e: 'AQAB' }] });
  });
});

describe('Resource Manager authentication and authorization', () => {
  it('refuses no token, a malformed header, a token it did not sign, another audience, an expired token and another tenant', async () => {
    const url = `${emulator.resourceManagerUrl}${vmPath('web', 'nothing')}/instanceView?${API}`;
    const none = await call(url);
    expect(none).toMatchObject({ status: 401, json: { error: { code: 'AuthenticationFailed', message: "Authentication failed. The 'Authorization' header is missing." } } });
    expect(none.headers['www-authenticate']).toMatch(/^Bearer authorization_uri=".*", error="invalid_token"/);
    expect((await call(url, { headers: { authorization: 'Basic abc' } })).json).toMatchObject({ error: { code: 'AuthenticationFailedInvalidHeader' } });
    const good = await token();
    const [head, body] = good.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), tid: OTHER_TENANT })).toString('base64url')}.${good.split('.')[2]}`;
    expect((await call(url, { headers: { authorization: `Bearer ${forged}` } })).json).toEqual({ error: { code: 'InvalidAuthenticationToken', message: 'The access token is invalid.' } });
    expect((await call(url, { headers: { authorization: `Bearer ${good}` } })).json).toMatchObject({ error: { code: 'ResourceGroupNotFound' } });
    const graph = await call(url, { headers: { authorization: `Bearer ${await token(SP, 'https://graph.microsoft.com/.default')}` } });
    expect(graph).toMatchObject({ status: 401, json: { error: { code: 'InvalidAuthenticationTokenAudience', message: `The access token has been obtained for wrong audience or resource 'https://graph.microsoft.com'. It should exactly match with one of the allowed audiences '${emulator.resourceManagerUrl}/','${emulator.resourceManagerUrl}'.` } } });
    emulator.advanceClock(2 * 3600_000);
    try {
      const expired = await call(url, { headers: { authorization: `Bearer ${good}` } });
      expect(expired).toMatchObject({ status: 401, json: { error: { code: 'ExpiredAuthenticationToken', message: expect.stringMatching(/^The access token expiry UTC time '\d+\/\d+\/\d{4} \d+:\d{2}:\d{2} [AP]M' is earlier than current UTC time '.*'\.$/) } } });
    } finally {
      emulator.advanceClock(-2 * 3600_000);
    }
    const outsider = await call(`${emulator.resourceManagerUrl}${vmPath('web', 'nothing')}?${API}`, { headers: { authorization: `Bearer ${await token(OUTSIDER)}` } });
    expect(outsider).toMatchObject({ status: 401, json: { error: { code: 'InvalidAuthenticationTokenTenant', message: expect.stringContaining(`must match the tenant 'https://sts.windows.net/${TENANT}/' associated with this subscription`) } } });
    expect((await call(`${emulator.resourceManagerUrl}${vmPath('web', 'nothing')}`, { headers: { authorization: `Bearer ${good}` } })).json).toMatchObject({ error: { code: 'MissingApiVersionParameter' } });
    const unknown = await call(`${emulator.resourceManagerUrl}${vmPath('web', 'nothing', '12345678-1234-4234-8234-123456789abc')}?${API}`, { headers: { authorization: `Bearer ${good}` } });
    expect(unknown.json).toEqual({ error: { code: 'SubscriptionNotFound', message: "The subscription '12345678-1234-4234-8234-123456789abc' could not be found." } });
  });

  it('refuses with the action a role lacks before saying whether the VM exists; 404s name the group or the VM', async () => {
    const id = emulator.addVm({ subscriptionId: SUB, resourceGroup: 'web', name: 'web-reader', powerState: 'running' });
    const reader = compute(READER).virtualMachines;
    expect((await reader.instanceView('web', 'web-reader')).statuses?.map((s) => s.code)).toEqual(['ProvisioningState/succeeded', 'PowerState/running']);
    const denied = await refusal(reader.start('web', 'web-reader').submitted());
    expect([denied.statusCode, denied.code]).toEqual([403, 'AuthorizationFailed']);
    expect(denied.message).toMatch(new RegExp(`^The client '${READER.clientId}' with object id '[0-9a-f-]{36}' does not have authorization to perform action 'Microsoft\\.Compute/virtualMachines/start/action' over scope '${id.replaceAll('.', '\\.')}' or the scope is invalid\\. If access was recently granted, please refresh your credentials\\.$`));
    const elsewhere = await refusal(reader.instanceView('db', 'db-1'));
    expect([elsewhere.statusCode, elsewhere.code]).toEqual([403, 'AuthorizationFailed']);
    const vms = compute().virtualMachines;
    const noVm = await refusal(vms.instanceView('web', 'no-such-vm'));
    expect([noVm.statusCode, noVm.code, noVm.message]).toEqual([404, 'ResourceNotFound', "The Resource 'Microsoft.Compute/virtualMachines/no-such-vm' under resource group 'web' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix"]);
    const noGroup = await refusal(vms.instanceView('nowhere', 'web-reader'));
    expect([noGroup.statusCode, noGroup.code, noGroup.message]).toEqual([404, 'ResourceGroupNotFound', "Resource group 'nowhere' could not be found."]);
    // Names are case-insensitive, as ARM's are.
    expect((await vms.get('WEB', 'Web-Reader')).id).toBe(id);
  });
});

describe('virtual machine operations through the real SDK', () => {
  it('deallocates: 202 with Azure-AsyncOperation and Location, InProgress, then Succeeded and PowerState/deallocated', async () => {
    const id = emulator.addVm({ subscriptionId: SUB, resourceGroup: 'app', name: 'app-1', powerState: 'running', transitionPolls: 2 });
    const vms = compute().virtualMachines;
    const poller = vms.deallocate('app', 'app-1');
    await poller.submitted();
    const accepted = emulator.requests.filter((r) => r.action === 'Microsoft.Compute/virtualMachines/deallocate/action').at(-1);
    expect(accepted).toMatchObject({ method: 'POST', apiVersion: '2026-03-01', authorized: true, status: 202, clientId: SP.clientId });
    expect(emulator.vm(id)?.powerState).toBe('deallocating');
    const first = await vms.instanceView('app', 'app-1');
    expect(first.statuses?.map((s) => s.code)).toEqual(['ProvisioningState/updating', 'PowerState/deallocating']);
    await poller.poll();
    expect(poller.isDone).toBe(false);
    await poller.pollUntilDone();
    expect(poller.operationState?.status).toBe('succeeded');
    expect((await vms.instanceView('app', 'app-1')).statuses?.map((s) => s.code)).toEqual(['ProvisioningState/succeeded', 'PowerState/deallocated']);
    const statusReads = emulator.requests.filter((r) => r.action === 'Microsoft.Compute/locations/operations/read');
    expect(statusReads.length).toBeGreaterThanOrEqual(2);
    expect(statusReads.every((r) => r.authorized && r.path.startsWith(`/subscriptions/${SUB}/providers/Microsoft.Compute/locations/westeurope/operations/`))).toBe(true);
  });

  it('starts and restarts; a restart of a deallocated VM is 409 OperationNotAllowed', async () => {
    emulator.addVm({ subscriptionId: SUB, resourceGroup: 'app', name: 'app-2', powerState: 'deallocated' });
    const vms = compute().virtualMachines;
    const conflict = await refusal(vms.restart('app', 'app-2').submitted());
    expect([conflict.statusCode, conflict.code, conflict.message]).toEqual([409, 'OperationNotAllowed', 'The operation requires the VM to be running (or set to run).']);
    await vms.start('app', 'app-2', { updateIntervalInMs: 5 }).pollUntilDone();
    expect(emulator.vm(vmPath('app', 'app-2'))?.powerState).toBe('running');
    await vms.restart('app', 'app-2', { updateIntervalInMs: 5 }).pollUntilDone();
    expect(emulator.vm(vmPath('app', 'app-2'))).toMatchObject({ powerState: 'running', restarts: 1 });
  });

  it('deletes: the operation succeeds and the VM is gone (404)', async () => {
    const id = emulator.addVm({ subscriptionId: SUB, resourceGroup: 'app', name: 'app-3', powerState: 'running' });
    const vms = compute().virtualMachines;
    await vms.delete('app', 'app-3', { updateIntervalInMs: 5 }).pollUntilDone();
    expect(emulator.vm(id)?.deleted).toBe(true);
    expect((await refusal(vms.get('app', 'app-3'))).code).toBe('ResourceNotFound');
  });

  it('fails an operation with ARM error words, and a newer operation cancels the one in flight', async () => {
    const id = emulator.addVm({ subscriptionId: SUB, resourceGroup: 'app', name: 'app-4', powerState: 'deallocated' });
    emulator.failNextOperation(id, { code: 'AllocationFailed', message: 'Allocation failed. We do not have sufficient capacity for the requested VM size in this region.' });
    const vms = compute().virtualMachines;
    const failed = await vms.start('app', 'app-4', { updateIntervalInMs: 5 }).pollUntilDone().then(() => null, (e: Error) => e);
    expect(failed?.message).toMatch(/AllocationFailed\. Allocation failed\. We do not have sufficient capacity/);
    expect(emulator.vm(id)?.powerState).toBe('deallocated');
    emulator.addVm({ subscriptionId: SUB, resourceGroup: 'app', name: 'app-5', powerState: 'running', transitionPolls: 5 });
    const first = vms.deallocate('app', 'app-5');
    await first.submitted();
    await vms.start('app', 'app-5').submitted();
    const canceled = await first.poll().then(() => null, (e: Error) => e);
    expect([canceled?.message, first.operationState?.status]).toEqual(['Operation was canceled', 'canceled']);
  });

  it('lists the subscription’s VMs page by page (nextLink), not another subscription’s', async () => {
    emulator.addVm({ subscriptionId: SUB_OTHER_TENANT, resourceGroup: 'theirs', name: 'their-vm', powerState: 'running', tags: { env: 'prod' } });
    emulator.grant(OUTSIDER.clientId, `/subscriptions/${SUB_OTHER_TENANT}`);
    emulator.listPageSize = 2;
    try {
      const names: string[] = [];
      for await (const vm of compute().virtualMachines.listAll()) names.push(vm.name!);
      expect(names.length).toBeGreaterThan(2);
      expect(names).not.toContain('their-vm');
      const pages = emulator.requests.filter((r) => r.path === `/subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachines`);
      expect(pages.length).toBe(Math.ceil(names.length / 2));
      const theirs = [];
      for await (const vm of compute(OUTSIDER, SUB_OTHER_TENANT).virtualMachines.listAll()) theirs.push([vm.name, vm.tags]);
      expect(theirs).toEqual([['their-vm', { env: 'prod' }]]);
    } finally {
      emulator.listPageSize = 100;
    }
  });
});
