import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator, type Ec2Emulator } from './support/ec2-emulator.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { freePort } from './support/process.js';

/*
 * Issue 19, the credentials vault: a tenant's cloud secrets are stored sealed, never returned,
 * masked in every view, kept out of the log, usable only by the tenant's own rules, and tested
 * with one harmless read at the provider. AWS is tested against the EC2 emulator, which checks
 * each request's SigV4 signature with the key it was given (test/support/ec2-emulator.ts).
 */
const AWS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const AZURE = { tenantId: '8f6a1c1e-0d6f-4d1b-9a43-5b0f1c2d3e4f', clientId: '2b7e1d4c-3a5f-4e6d-8c9b-0a1b2c3d4e5f', clientSecret: 'azure-client-secret-value-123', subscriptionId: '11111111-2222-4333-8444-555555555555' };
const GCP_KEY = JSON.stringify({ type: 'service_account', project_id: 'shop-prod', client_email: 'pitcrew@shop-prod.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASC-gcp-private-key\\n-----END PRIVATE KEY-----\\n', private_key_id: 'abc' });
const SECRETS = [AWS.secretAccessKey, AZURE.clientSecret, 'MIIEvgIBADANBgkqhkiG9w0BAQEFAASC-gcp-private-key', 'rotated-secret-access-key-0000000000'];

describe.each(testDialects())('credentials on %s', (dialect) => {
  let env: TestEnv;
  let ec2: Ec2Emulator;
  const replies: string[] = [];

  beforeAll(async () => {
    ec2 = await startEc2Emulator();
    ec2.addKey(AWS.accessKeyId, AWS.secretAccessKey);
    env = await startTestEnv(dialect, { awsEndpoint: ec2.url });
  });
  afterAll(async () => {
    await env.close();
    await ec2.close();
  });

  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, token?: string) => {
    const response = await env.api(method, url, body, token);
    replies.push(response.body);
    return response;
  };
  const store = async (name: string, provider: string, secret: unknown) => api('POST', '/api/v1/credentials', { name, provider, secret });

  it('stores each provider’s secret sealed and shows only what identifies it', async () => {
    const aws = await store('aws prod', 'aws', AWS);
    expect(aws.statusCode, aws.body).toBe(201);
    expect(aws.json()).toEqual({
      id: expect.any(String), name: 'aws prod', provider: 'aws', summary: { accessKeyId: 'AKIA…MPLE' }, lastTest: null, createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    expect((await store('azure prod', 'azure', AZURE)).json().summary).toEqual({ tenantId: AZURE.tenantId, clientId: AZURE.clientId, subscriptionId: AZURE.subscriptionId });
    expect((await store('gcp prod', 'gcp', { serviceAccountJson: GCP_KEY })).json().summary).toEqual({ projectId: 'shop-prod', clientEmail: 'pitcrew@shop-prod.iam.gserviceaccount.com' });
    const openstack = await store('openstack', 'openstack', { authUrl: 'https://keystone.example.com:5000/v3', applicationCredentialId: 'a1b2c3d4e5f60718293a4b5c', applicationCredentialSecret: 'os-app-cred-secret' });
    expect(openstack.json().summary).toEqual({ authUrl: 'https://keystone.example.com:5000/v3', applicationCredentialId: 'a1b2…4b5c' });

    const listed = await api('GET', '/api/v1/credentials');
    expect(listed.json().items.map((c: { name: string }) => c.name)).toEqual(['aws prod', 'azure prod', 'gcp prod', 'openstack']);
    expect((await api('GET', `/api/v1/credentials/${aws.json().id}`)).json().summary).toEqual({ accessKeyId: 'AKIA…MPLE' });
    // At rest: sealed, bound to its row.
    const rows = await env.store.db.selectFrom('credentials').selectAll().execute();
    for (const row of rows) expect(row.secret).toMatch(/^v1:[0-9a-f]{8}:/);
    for (const secret of SECRETS.slice(0, 3)) expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain('os-app-cred-secret');
    expect((await store('aws prod', 'aws', AWS)).statusCode).toBe(409);
  });

  it('refuses a secret of the wrong shape at the field to fix, without quoting it', async () => {
    const short = await store('bad aws', 'aws', { accessKeyId: AWS.accessKeyId, secretAccessKey: 'short-secret' });
    expect(short.statusCode).toBe(400);
    expect(short.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(short.json().errors).toEqual([{ path: '/body/secret/secretAccessKey', message: expect.stringMatching(/16/) }]);
    expect(short.body).not.toContain('short-secret');
    const azure = await store('bad azure', 'azure', { ...AZURE, subscriptionId: undefined });
    expect(azure.json().errors.map((e: { path: string }) => e.path)).toContain('/body/secret/subscriptionId');
    const notJson = await store('bad gcp', 'gcp', { serviceAccountJson: '{"type": "service_account",' });
    expect(notJson.json().errors).toEqual([{ path: '/body/secret/serviceAccountJson', message: 'is not JSON: paste the whole key file Google gave for the service account' }]);
    const user = await store('bad gcp', 'gcp', { serviceAccountJson: JSON.stringify({ type: 'authorized_user', project_id: 'p', client_email: 'e', private_key: 'k' }) });
    expect(user.json().errors[0].message).toMatch(/type "authorized_user"; a service account key \(type service_account\) is needed/);
    const unknown = await store('bad', 'digitalocean', { token: 'x' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors).toEqual([{ path: '/body/provider', message: 'unknown provider "digitalocean"; use one of aws, azure, gcp, openstack' }]);
  });

  it('tests an AWS key with one signed read, and says what AWS answered when it refuses', async () => {
    const good = (await store('aws tested', 'aws', AWS)).json();
    const before = ec2.requests.length;
    const tested = await api('POST', `/api/v1/credentials/${good.id}/test`);
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json()).toMatchObject({ ok: true, call: 'ec2:DescribeRegions', message: expect.stringMatching(/^AWS accepted the key: \d+ regions? visible to it$/) });
    expect(ec2.requests.slice(before)).toEqual([expect.objectContaining({ action: 'DescribeRegions', accessKeyId: AWS.accessKeyId, authorized: true, status: 200 })]);
    expect((await api('GET', `/api/v1/credentials/${good.id}`)).json().lastTest).toMatchObject({ ok: true });

    const wrong = (await store('aws wrong secret', 'aws', { ...AWS, secretAccessKey: 'rotated-secret-access-key-0000000000' })).json();
    const refused = await api('POST', `/api/v1/credentials/${wrong.id}/test`);
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toMatchObject({ code: 'PITCREW_ERR_PROVIDER_REFUSED', detail: expect.stringMatching(/^AWS refused ec2:DescribeRegions: (AuthFailure|SignatureDoesNotMatch) \(HTTP 40[13]\)/) });
    expect(ec2.requests.at(-1)).toMatchObject({ accessKeyId: AWS.accessKeyId, authorized: false });
    expect((await api('GET', `/api/v1/credentials/${wrong.id}`)).json().lastTest).toMatchObject({ ok: false, message: expect.stringMatching(/^AWS refused/) });

    // A new secret, whole: the last test no longer holds.
    const rotated = await api('PATCH', `/api/v1/credentials/${wrong.id}`, { secret: AWS });
    expect(rotated.json()).toMatchObject({ lastTest: null, summary: { accessKeyId: 'AKIA…MPLE' } });
    expect((await api('POST', `/api/v1/credentials/${wrong.id}/test`)).statusCode).toBe(200);
    expect((await api('PATCH', `/api/v1/credentials/${wrong.id}`, { secret: { accessKeyId: AWS.accessKeyId } })).json().errors).toEqual([{ path: '/body/secret/secretAccessKey', message: 'is required' }]);
  });

  it('says when AWS cannot be reached', async () => {
    const closed = await startTestEnv(dialect, { awsEndpoint: `http://127.0.0.1:${await freePort()}` });
    try {
      const made = (await closed.api('POST', '/api/v1/credentials', { name: 'aws', provider: 'aws', secret: AWS })).json();
      const down = await closed.api('POST', `/api/v1/credentials/${made.id}/test`);
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ code: 'PITCREW_ERR_PROVIDER_UNAVAILABLE', detail: expect.stringMatching(/^AWS did not answer ec2:DescribeRegions: .*PITCREW_AWS_ENDPOINT_URL/) });
      expect(down.body).not.toContain(AWS.secretAccessKey);
    } finally {
      await closed.close();
    }
  });

  it('lets only the tenant’s own rules use a credential, and keeps it while a rule does', async () => {
    const mine = (await store('aws for rules', 'aws', AWS)).json();
    const other = await env.addTenant(`other-${dialect}`);
    const theirs = (await env.api('POST', '/api/v1/credentials', { name: 'theirs', provider: 'aws', secret: AWS }, other.token)).json();
    const rule = (credentialId: string) => ({
      name: `restart ${credentialId}`, trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'reboot', region: 'eu-west-1', credentialId }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_EC2',
    });
    const refused = await api('POST', '/api/v1/rules', rule(theirs.id));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([{ path: '/body/action/credentialId', message: expect.stringMatching(/^no credential .* in this tenant/) }]);
    const made = await api('POST', '/api/v1/rules', rule(mine.id));
    expect(made.statusCode, made.body).toBe(201);
    const kept = await api('DELETE', `/api/v1/credentials/${mine.id}`);
    expect(kept.statusCode).toBe(409);
    expect(kept.json().detail).toBe(`credential "aws for rules" is used by rule "restart ${mine.id}"; change or delete it first`);
    expect((await api('GET', `/api/v1/credentials/${theirs.id}`)).statusCode).toBe(404);
    expect((await api('DELETE', `/api/v1/rules/${made.json().id}`)).statusCode).toBe(204);
    expect((await api('DELETE', `/api/v1/credentials/${mine.id}`)).statusCode).toBe(204);
  });

  it('never shows a secret value in a reply or the log', () => {
    const seen = [...replies, ...env.logs].join('\n');
    for (const secret of SECRETS) expect(seen).not.toContain(secret);
    expect(replies.length).toBeGreaterThan(20);
    expect(env.logs.length).toBeGreaterThan(0);
  });
});
