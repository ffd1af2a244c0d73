import { createPrivateKey, sign } from 'node:crypto';
import { InstancesClient, ZoneOperationsClient } from '@google-cloud/compute';
import { gaxios, JWT, OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOGLE_TOKEN_AUDIENCE, startGceEmulator, type GceEmulator, type ServiceAccount } from './gce-emulator.js';

/**
 * The token endpoint and Compute emulator (test/support/gce-emulator.ts) driven by Google's own
 * libraries: google-auth-library's JWT client (gtoken) signs the assertions, and
 * @google-cloud/compute's InstancesClient and ZoneOperationsClient (REST) make the calls; plain
 * fetch only for requests those libraries would never send. What it emulates and where each
 * behaviour was checked is cited at the top of that file; the facts these assertions rest on:
 * - the JWT-bearer grant and its answer {access_token, expires_in, token_type: Bearer}, aud
 *   "always https://oauth2.googleapis.com/token" (developers.google.com/identity/protocols/oauth2/service-account);
 * - 400 {"error":"invalid_grant","error_description":"Invalid JWT Signature."} for a key Google does
 *   not hold (googleapis/google-cloud-python#10004), "Invalid grant: account not found"
 *   (googleapis/google-cloud-php#3622);
 * - Compute's paths and the filter syntax from compute.proto; 404 notFound "The resource '…' was
 *   not found" (GoogleCloudPlatform/magic-modules#4377), 403 "Required 'compute.instances.get'
 *   permission for '…'" (udacity/devops-intro-project#77), 401 UNAUTHENTICATED.
 */

const ZONE = 'us-central1-a';
let gce: GceEmulator;
let account: ServiceAccount;

/** google-auth-library's JWT client, its token request sent to the emulator instead of Google's fixed URL. */
function googleJwt(key: ServiceAccount, privateKey = key.privateKey): JWT {
  const transporter = new gaxios.Gaxios();
  transporter.interceptors.request.add({
    resolved: async (config) => (String(config.url) === GOOGLE_TOKEN_AUDIENCE ? { ...config, url: new URL(gce.tokenUrl) } : config),
  });
  return new JWT({ email: key.email, key: privateKey, scopes: ['https://www.googleapis.com/auth/compute'], transporter });
}

async function tokenOf(key: ServiceAccount): Promise<string> {
  return (await googleJwt(key).authorize()).access_token!;
}

/** A hand-made assertion, for claims no library would sign. */
function assertion(key: ServiceAccount, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), createPrivateKey(key.privateKey)).toString('base64url')}`;
}

async function grant(body: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(gce.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function clients(token: string) {
  const auth = new OAuth2Client();
  auth.setCredentials({ access_token: token, expiry_date: Date.now() + 3_600_000 });
  const options = { authClient: auth, apiEndpoint: '127.0.0.1', port: Number(new URL(gce.url).port), protocol: 'http', fallback: true };
  return { instances: new InstancesClient(options), operations: new ZoneOperationsClient(options) };
}

/** The SDK's rejection: the HTTP status and Google's error body. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; error: { code: number; message: string; status?: string; errors: Array<{ reason: string }> } }> {
  const error = (await call.then(() => undefined, (e: unknown) => e)) as { status?: number; message?: string } | undefined;
  if (!error) throw new Error('the call succeeded');
  return { status: error.status!, error: (JSON.parse(error.message!) as { error: never }).error };
}

beforeAll(async () => {
  gce = await startGceEmulator();
  account = gce.addServiceAccount({ projects: ['proj-a'] });
  gce.addServiceAccount({ projects: ['proj-b'] });
});
afterAll(async () => {
  await gce.close();
});

describe('the GCE emulator’s token endpoint', () => {
  it('issues a token for an assertion google-auth-library signs with the key it issued', async () => {
    const jwt = googleJwt(account);
    const tokens = await jwt.authorize();
    expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^ya29\.emulated-/), token_type: 'Bearer' });
    expect(tokens.expiry_date! - Date.now()).toBeGreaterThan(3_500_000);
    expect(gce.requests.at(-1)).toMatchObject({ method: 'POST', path: '/token', call: 'token', serviceAccount: account.email, authorized: true, token: tokens.access_token, status: 200 });
    expect(gce.tokens().find((t) => t.token === tokens.access_token)).toMatchObject({ serviceAccount: account.email, scopes: ['https://www.googleapis.com/auth/compute'] });
    expect(JSON.parse(account.keyFile)).toMatchObject({ type: 'service_account', project_id: 'proj-a', client_email: account.email, token_uri: gce.tokenUrl, private_key: account.privateKey });
  });

  it('refuses an assertion signed with another key, or naming an account it does not know, as Google words it', async () => {
    const forged = JSON.parse(gce.forgedKeyFile(account)) as { private_key: string };
    await expect(googleJwt(account, forged.private_key).authorize()).rejects.toThrow('invalid_grant: Invalid JWT Signature.');
    expect(gce.requests.at(-1)).toMatchObject({ serviceAccount: account.email, authorized: false, status: 400 });
    await expect(googleJwt({ ...account, email: 'nobody@proj-a.iam.gserviceaccount.com' }).authorize()).rejects.toThrow('invalid_grant: Invalid grant: account not found');
  });

  it('checks the grant type, the audience, the assertion’s lifetime and its scope', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: account.email, scope: 'https://www.googleapis.com/auth/compute', aud: GOOGLE_TOKEN_AUDIENCE, iat: now, exp: now + 3600 };
    const jwtBearer = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
    expect(await grant({ grant_type: jwtBearer, assertion: assertion(account, claims) })).toMatchObject({ status: 200, json: { token_type: 'Bearer', expires_in: 3599 } });
    expect(await grant({ grant_type: 'client_credentials', assertion: assertion(account, claims) })).toEqual({ status: 400, json: { error: 'unsupported_grant_type', error_description: 'Invalid grant_type: client_credentials' } });
    expect(await grant({ grant_type: jwtBearer, assertion: assertion(account, { ...claims, aud: gce.tokenUrl }) })).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    expect(await grant({ grant_type: jwtBearer, assertion: assertion(account, { ...claims, exp: now + 7200 }) })).toMatchObject({ status: 400, json: { error: 'invalid_grant', error_description: expect.stringMatching(/^Invalid JWT: Token must be a short-lived token \(60 minutes\)/) } });
    expect(await grant({ grant_type: jwtBearer, assertion: assertion(account, { ...claims, scope: undefined }) })).toMatchObject({ status: 400, json: { error: 'invalid_scope' } });
    expect(await grant({ grant_type: jwtBearer, assertion: 'not.a-jwt' })).toMatchObject({ status: 400, json: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } });
  });
});

describe('the GCE emulator’s Compute API', () => {
  it('starts, stops, resets and deletes an instance through zone operations that finish after transitionPolls reads', async () => {
    const { instances, operations } = clients(await tokenOf(account));
    gce.addInstance({ project: 'proj-a', zone: ZONE, name: 'web-1', status: 'TERMINATED', labels: { env: 'prod' } });
    const ref = { project: 'proj-a', zone: ZONE, instance: 'web-1' };
    const [before] = await instances.get(ref);
    expect(before).toMatchObject({ name: 'web-1', status: 'TERMINATED', labels: { env: 'prod' }, zone: `https://www.googleapis.com/compute/v1/projects/proj-a/zones/${ZONE}`, selfLink: `https://www.googleapis.com/compute/v1/projects/proj-a/zones/${ZONE}/instances/web-1` });

    const [started] = await instances.start(ref);
    const operation = started.latestResponse as unknown as { name: string; status: string; operationType: string; targetLink: string };
    expect(operation).toMatchObject({ name: expect.stringMatching(/^operation-\d+-[0-9a-f]+-[0-9a-f]+-[0-9a-f]+$/), status: 'RUNNING', operationType: 'start', targetLink: before.selfLink });
    expect(gce.instance('proj-a', ZONE, 'web-1')!.status).toBe('STAGING');
    const [done] = await operations.get({ project: 'proj-a', zone: ZONE, operation: operation.name });
    expect(done).toMatchObject({ status: 'DONE', progress: 100 });
    expect((await instances.get(ref))[0].status).toBe('RUNNING');

    const [reset] = await instances.reset(ref);
    expect((reset.latestResponse as unknown as { operationType: string }).operationType).toBe('reset');
    expect(gce.instance('proj-a', ZONE, 'web-1')).toMatchObject({ status: 'RUNNING', resets: 1 });
    expect((await instances.get(ref))[0].status).toBe('RUNNING');
    await instances.stop(ref);
    expect((await instances.get(ref))[0].status).toBe('TERMINATED');
    expect(await refusal(instances.reset(ref))).toMatchObject({ status: 400, error: { errors: [{ reason: 'resourceNotReady' }] } });
    await instances.delete(ref);
    expect(gce.instance('proj-a', ZONE, 'web-1')).toMatchObject({ status: 'STOPPING', deleted: false });
    expect(await refusal(instances.get(ref))).toEqual({ status: 404, error: { code: 404, message: `The resource 'projects/proj-a/zones/${ZONE}/instances/web-1' was not found`, errors: [{ message: `The resource 'projects/proj-a/zones/${ZONE}/instances/web-1' was not found`, domain: 'global', reason: 'notFound' }] } });
    expect(gce.requests.filter((r) => r.call !== 'token').map((r) => r.call)).toEqual([
      'compute.instances.get', 'compute.instances.start', 'compute.zoneOperations.get', 'compute.instances.get', 'compute.instances.reset', 'compute.instances.get', 'compute.instances.stop',
      'compute.instances.get', 'compute.instances.reset', 'compute.instances.delete', 'compute.instances.get',
    ]);
  });

  it('answers a failed operation DONE with its error, and an instance held `stuck` never settles', async () => {
    const { instances, operations } = clients(await tokenOf(account));
    gce.addInstance({ project: 'proj-a', zone: ZONE, name: 'full', status: 'TERMINATED', startError: { code: 'ZONE_RESOURCE_POOL_EXHAUSTED', message: 'no room', httpStatus: 503, httpMessage: 'SERVICE UNAVAILABLE' } });
    const [started] = await instances.start({ project: 'proj-a', zone: ZONE, instance: 'full' });
    const [failed] = await operations.get({ project: 'proj-a', zone: ZONE, operation: (started.latestResponse as { name: string }).name });
    expect(failed).toMatchObject({ status: 'DONE', error: { errors: [{ code: 'ZONE_RESOURCE_POOL_EXHAUSTED', message: 'no room' }] }, httpErrorStatusCode: 503, httpErrorMessage: 'SERVICE UNAVAILABLE' });
    expect(gce.instance('proj-a', ZONE, 'full')!.status).toBe('TERMINATED');

    gce.addInstance({ project: 'proj-a', zone: ZONE, name: 'held', status: 'RUNNING', stuck: true });
    const [stopping] = await instances.stop({ project: 'proj-a', zone: ZONE, instance: 'held' });
    for (let read = 0; read < 5; read += 1) await operations.get({ project: 'proj-a', zone: ZONE, operation: (stopping.latestResponse as { name: string }).name });
    expect(gce.instance('proj-a', ZONE, 'held')!.status).toBe('STOPPING');
  });

  it('refuses a call without a token it issued (401), and one on a project the account has no role in (403)', async () => {
    const { instances } = clients(await tokenOf(account));
    gce.addInstance({ project: 'proj-b', zone: ZONE, name: 'theirs', status: 'RUNNING' });
    expect(await refusal(instances.get({ project: 'proj-b', zone: ZONE, instance: 'theirs' }))).toMatchObject({ status: 403, error: { message: `Required 'compute.instances.get' permission for 'projects/proj-b/zones/${ZONE}/instances/theirs'`, errors: [{ reason: 'forbidden' }] } });
    const stranger = clients('ya29.not-issued-here');
    expect(await refusal(stranger.instances.get({ project: 'proj-a', zone: ZONE, instance: 'theirs' }))).toMatchObject({ status: 401, error: { status: 'UNAUTHENTICATED', errors: [{ reason: 'authError' }] } });
    expect(gce.requests.at(-1)).toMatchObject({ call: 'compute.instances.get', authorized: false, serviceAccount: null, status: 401 });
    gce.revokeTokens();
    expect(await refusal(instances.get({ project: 'proj-a', zone: ZONE, instance: 'theirs' }))).toMatchObject({ status: 401 });
  });

  it('lists the project’s instances by zone, filtered on labels, page by page', async () => {
    const { instances } = clients(await tokenOf(account));
    gce.addInstance({ project: 'proj-a', zone: 'europe-west1-b', name: 'l1', status: 'RUNNING', labels: { app: 'shop', tier: 'web' } });
    gce.addInstance({ project: 'proj-a', zone: 'europe-west1-c', name: 'l2', status: 'TERMINATED', labels: { app: 'shop', tier: 'web' } });
    gce.addInstance({ project: 'proj-a', zone: 'europe-west1-b', name: 'l3', status: 'RUNNING', labels: { app: 'shop', tier: 'db' } });
    gce.addInstance({ project: 'proj-b', zone: 'europe-west1-b', name: 'l4', status: 'RUNNING', labels: { app: 'shop', tier: 'web' } });
    const list = async (filter: string, maxResults = 500) => {
      const names: string[] = [];
      const scopes: string[] = [];
      for await (const [scope, found] of instances.aggregatedListAsync({ project: 'proj-a', filter, maxResults }, { autoPaginate: false })) {
        scopes.push(scope);
        names.push(...(found.instances ?? []).map((i) => i.name!));
        if (!found.instances?.length) expect(found.warning).toMatchObject({ code: 'NO_RESULTS_ON_PAGE' });
      }
      return { names: names.sort(), scopes };
    };
    const both = await list('(labels.app = "shop") (labels.tier = "web")');
    expect(both.names).toEqual(['l1', 'l2']);
    expect(both.scopes).toEqual(expect.arrayContaining(['zones/europe-west1-b', 'zones/europe-west1-c', `zones/${ZONE}`]));
    expect((await list('(labels.app = "shop") AND (labels.tier != "web")')).names).toEqual(['l3']);
    expect((await list('labels.tier:*', 1)).names).toEqual(['l1', 'l2', 'l3']);
    expect(gce.requests.filter((r) => r.call === 'compute.instances.list').at(-1)!.query.pageToken).toBeTruthy();
    expect(await refusal(list('labels.tier ~ web'))).toMatchObject({ status: 400, error: { errors: [{ reason: 'invalid' }] } });
  });
});
