import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GceInstances } from '../src/actions/cloud/gcp.js';
import type { CloudSpec } from '../src/actions/cloud/kind.js';
import { PitcrewError } from '../src/errors/catalogue.js';
import { startGceEmulator, type GceEmulator, type ServiceAccount } from './support/gce-emulator.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitState } from './support/notify.js';
import { freePort } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 19: cloud actions on Google Compute Engine with a service account's JSON key, through the
 * real @google-cloud/compute (REST) and google-auth-library, against the token endpoint and
 * Compute emulator (test/support/gce-emulator.ts), which checks each assertion's signature with
 * the key it issued and refuses every Compute call without a token it issued for the account.
 * Every key file here names a trap as its token_uri, and the metadata server's address is the
 * trap too: the service must post to neither (the operator's endpoints only, never the machine's
 * own identity).
 */
const ZONE = 'europe-west1-b';
const PROJECT = 'shop-prod';

interface Trap {
  url: string;
  hits: string[];
  close(): Promise<void>;
}

/** A server that should hear nothing: it records what reaches it. */
async function startTrap(): Promise<Trap> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Lines of the private key long enough to be recognised anywhere they might leak. */
const keyLines = (account: ServiceAccount) => account.privateKey.split('\n').filter((line) => line.length >= 32 && !line.startsWith('-----'));

describe.each(testDialects())('cloud actions on Google Compute Engine on %s', (dialect) => {
  let env: TestEnv;
  let gce: GceEmulator;
  let trap: Trap;
  let account: ServiceAccount;
  let credentialId: string;
  let n = 0;

  beforeAll(async () => {
    gce = await startGceEmulator();
    trap = await startTrap();
    // Were the service to look for the machine's own identity, it would ask here.
    vi.stubEnv('GCE_METADATA_HOST', trap.url.slice('http://'.length));
    account = gce.addServiceAccount({ projects: [PROJECT, 'shop-shared'], tokenUri: `${trap.url}/token` });
    gce.addServiceAccount({ projects: ['other-project'] });
    env = await startTestEnv(dialect, { gcp: { tokenUrl: gce.tokenUrl, computeUrl: gce.url } });
    const made = await env.api('POST', '/api/v1/credentials', { name: 'gcp', provider: 'gcp', secret: { serviceAccountJson: account.keyFile } });
    expect(made.statusCode, made.body).toBe(201);
    credentialId = made.json().id;
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await env.close();
    await gce.close();
    await trap.close();
  });

  const instance = (status: 'RUNNING' | 'TERMINATED', options: { project?: string; zone?: string; labels?: Record<string, string>; stuck?: boolean } = {}) => {
    n += 1;
    const name = `vm-${dialect === 'sqlite' ? 's' : 'p'}${n}`;
    gce.addInstance({ project: options.project ?? PROJECT, zone: options.zone ?? ZONE, name, status, labels: options.labels, stuck: options.stuck });
    return { name, path: `projects/${options.project ?? PROJECT}/zones/${options.zone ?? ZONE}/instances/${name}` };
  };
  const rule = (operation: string, extra: Record<string, unknown> = {}, ruleExtra: Record<string, unknown> = {}) => env.createWebhookRule({
    action: { type: 'cloud', operation, credentialId, ...extra }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_GCP', ...ruleExtra,
  });
  const fire = async (triggerId: string, body: Record<string, unknown>) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { outcome: string; reason: string | null; executionIds: string[] };
  };
  /** Runs one webhook to its end; the calls it made, as `call path` (the token request as `token`). */
  const runOne = async (triggerId: string, body: Record<string, unknown>, state = 'succeeded') => {
    const before = gce.requests.length;
    const reply = await fire(triggerId, body);
    expect(reply.executionIds, JSON.stringify(reply)).toHaveLength(1);
    const execution = await waitState(env, reply.executionIds[0]!, state);
    const calls = gce.requests.slice(before).map((r) => (r.call === 'token' ? 'token' : `${r.call} ${r.path.replace('/compute/v1/', '').replace(/operations\/operation-[\w-]+/, 'operations/…')}`));
    return { execution, calls };
  };
  const ops = (call: string, name: string) => gce.requests.filter((r) => r.call === call && r.path.includes(`/instances/${name}`));

  it('tests the key with a token and one page of the instance list; refuses a key Google does not hold, without quoting it', async () => {
    const before = gce.requests.length;
    const tested = await env.api('POST', `/api/v1/credentials/${credentialId}/test`);
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json()).toMatchObject({ ok: true, call: 'oauth2 token, compute.instances.aggregatedList', message: `GCP accepted the key of ${account.email}: it can list the instances of project ${PROJECT}` });
    expect(gce.requests.slice(before)).toEqual([
      expect.objectContaining({ call: 'token', path: '/token', serviceAccount: account.email, authorized: true, status: 200 }),
      expect.objectContaining({ call: 'compute.instances.list', path: `/compute/v1/projects/${PROJECT}/aggregated/instances`, query: expect.objectContaining({ maxResults: '1' }), serviceAccount: account.email, authorized: true, status: 200 }),
    ]);

    const forged = gce.forgedKeyFile(account);
    const wrong = (await env.api('POST', '/api/v1/credentials', { name: 'gcp forged', provider: 'gcp', secret: { serviceAccountJson: forged } })).json();
    const refused = await env.api('POST', `/api/v1/credentials/${wrong.id}/test`);
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toMatchObject({
      code: 'PITCREW_ERR_PROVIDER_REFUSED',
      detail: `GCP refused a token for ${account.email} (for oauth2 token, compute.instances.aggregatedList in project ${PROJECT}): invalid_grant (HTTP 400): Invalid JWT Signature.`,
    });
    expect(gce.requests.at(-1)).toMatchObject({ call: 'token', serviceAccount: account.email, authorized: false, status: 400 });
    const forgedPem = (JSON.parse(forged) as { private_key: string }).private_key;
    for (const line of forgedPem.split('\n').filter((l) => l.length >= 32)) expect(refused.body).not.toContain(line);

    // A key file whose private key is no key: nothing is sent, and the tenant is told to store the file whole.
    const truncated = JSON.stringify({ ...JSON.parse(account.keyFile), private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC-cut-here\n-----END PRIVATE KEY-----\n' });
    const broken = (await env.api('POST', '/api/v1/credentials', { name: 'gcp truncated', provider: 'gcp', secret: { serviceAccountJson: truncated } })).json();
    const asked = gce.requests.length;
    const unusable = await env.api('POST', `/api/v1/credentials/${broken.id}/test`);
    expect(unusable.statusCode).toBe(400);
    expect(unusable.json().detail).toBe("the private_key of the credential's key file is not a PEM private key: store the whole key file Google gave for the service account (PATCH the credential's secret); GCP was not called");
    expect(unusable.body).not.toContain('cut-here');
    const start = await rule('start', { credentialId: broken.id });
    const run = await runOne(start.triggerId, { InstanceId: `${ZONE}/anything` }, 'failed');
    expect(run.execution.reason).toBe("the private_key of the credential's key file is not a PEM private key: GCP was not called");
    expect(gce.requests.length).toBe(asked);
  });

  it('says when GCP cannot be reached', async () => {
    const closed = await startTestEnv(dialect, { gcp: { tokenUrl: gce.tokenUrl, computeUrl: `http://127.0.0.1:${await freePort()}` } });
    try {
      const made = (await closed.api('POST', '/api/v1/credentials', { name: 'gcp', provider: 'gcp', secret: { serviceAccountJson: account.keyFile } })).json();
      const down = await closed.api('POST', `/api/v1/credentials/${made.id}/test`);
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ code: 'PITCREW_ERR_PROVIDER_UNAVAILABLE', detail: expect.stringMatching(/^GCP did not answer oauth2 token, compute\.instances\.aggregatedList in project shop-prod: .*ECONNREFUSED.*; check the service's network access to the provider \(PITCREW_GCP_COMPUTE_URL, PITCREW_GCP_TOKEN_URL\)$/) });
      for (const line of keyLines(account)) expect(down.body).not.toContain(line);
    } finally {
      await closed.close();
    }
  });

  it('starts, stops, resets and deletes instances named in the payload in each form, with the exact Compute calls, waiting for each status', async () => {
    const [a, b, c, d] = [instance('TERMINATED'), instance('RUNNING'), instance('RUNNING'), instance('RUNNING')];
    const tokensBefore = gce.tokens().filter((t) => t.serviceAccount === account.email).length;

    const start = await rule('start');
    const started = await runOne(start.triggerId, { InstanceId: a.path });
    expect(started.execution).toMatchObject({ hostId: null, hostname: a.path, reason: expect.stringMatching(new RegExp(`^started ${a.path} \\(compute\\.instances\\.start\\): TERMINATED → RUNNING after \\d+\\.\\d s$`)) });
    expect(started.calls.filter((call) => call !== 'token')).toEqual([
      `compute.instances.get projects/${PROJECT}/zones/${ZONE}/instances/${a.name}`,
      `compute.instances.start projects/${PROJECT}/zones/${ZONE}/instances/${a.name}/start`,
      `compute.zoneOperations.get projects/${PROJECT}/zones/${ZONE}/operations/…`,
      `compute.instances.get projects/${PROJECT}/zones/${ZONE}/instances/${a.name}`,
    ]);

    // Its selfLink, as GCE's own answers and alerts carry it: recorded in the one form.
    const stop = await rule('stop');
    const stopped = await runOne(stop.triggerId, { InstanceId: `https://www.googleapis.com/compute/v1/${b.path}` });
    expect(stopped.execution).toMatchObject({ hostname: b.path, reason: expect.stringMatching(new RegExp(`^stopped ${b.path} \\(compute\\.instances\\.stop\\): RUNNING → TERMINATED after`)) });
    expect(stopped.calls).toEqual([
      `compute.instances.get ${b.path}`, `compute.instances.stop ${b.path}/stop`, `compute.zoneOperations.get projects/${PROJECT}/zones/${ZONE}/operations/…`, `compute.instances.get ${b.path}`,
    ]);

    // ZONE/NAME, in the key's project.
    const reboot = await rule('reboot');
    const rebooted = await runOne(reboot.triggerId, { InstanceId: `${ZONE}/${c.name}` });
    expect(rebooted.execution).toMatchObject({ hostname: `${ZONE}/${c.name}`, reason: expect.stringMatching(new RegExp(`^rebooted ${c.path} \\(compute\\.instances\\.reset\\): RUNNING → RUNNING after`)) });
    expect(rebooted.calls).toEqual([`compute.instances.get ${c.path}`, `compute.instances.reset ${c.path}/reset`, `compute.zoneOperations.get projects/${PROJECT}/zones/${ZONE}/operations/…`, `compute.instances.get ${c.path}`]);

    // The name alone, with the zone as the action's region.
    const remove = await rule('terminate', { confirmTerminate: true, region: ZONE }, { approval: { required: false } });
    const removed = await runOne(remove.triggerId, { InstanceId: d.name });
    expect(removed.execution).toMatchObject({ hostname: `${ZONE}/${d.name}`, reason: expect.stringMatching(new RegExp(`^terminated ${d.path} \\(compute\\.instances\\.delete\\): RUNNING → deleted after`)) });
    expect(removed.calls).toEqual([`compute.instances.get ${d.path}`, `compute.instances.delete ${d.path}`, `compute.zoneOperations.get projects/${PROJECT}/zones/${ZONE}/operations/…`, `compute.instances.get ${d.path}`]);

    expect([gce.instance(PROJECT, ZONE, a.name)!.status, gce.instance(PROJECT, ZONE, b.name)!.status, gce.instance(PROJECT, ZONE, c.name)!.resets, gce.instance(PROJECT, ZONE, d.name)!.deleted]).toEqual(['RUNNING', 'TERMINATED', 1, true]);
    // One token for all four runs, issued for this account; every Compute call carried one the token endpoint issued for it.
    const mine = gce.tokens().filter((t) => t.serviceAccount === account.email);
    expect(mine.length - tokensBefore).toBeLessThanOrEqual(1);
    const compute = gce.requests.filter((r) => r.call !== 'token' && r.serviceAccount === account.email);
    expect(compute.length).toBeGreaterThanOrEqual(16);
    expect(compute.every((r) => r.authorized && mine.some((t) => t.token === r.token))).toBe(true);
    expect(mine.every((t) => t.scopes.join(' ') === 'https://www.googleapis.com/auth/compute')).toBe(true);
  });

  it('acts on a fixed list and on the instance of the host the alert names, one execution each', async () => {
    const [e, f, h] = [instance('TERMINATED'), instance('TERMINATED', { zone: 'us-central1-a' }), instance('TERMINATED')];
    const list = await rule('start', { instances: { ids: [`${ZONE}/${e.name}`, f.path] } });
    const reply = await fire(list.triggerId, {});
    expect(reply.executionIds).toHaveLength(2);
    for (const id of reply.executionIds) await waitState(env, id, 'succeeded');
    const host = await env.enrol(`gce-host-${dialect}`);
    await env.api('PATCH', `/api/v1/hosts/${host.hostId}`, { cloudInstanceId: h.path });
    const byHost = await rule('start');
    expect((await runOne(byHost.triggerId, { HostName: `gce-host-${dialect}` })).execution.hostname).toBe(h.path);
    expect([e, f, h].map((i) => gce.instance(PROJECT, i === f ? 'us-central1-a' : ZONE, i.name)!.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
  });

  it('says what Compute answered: another project, an instance that is not there, a failed operation, a payload without an instance', async () => {
    const start = await rule('start');
    const theirs = instance('TERMINATED', { project: 'other-project' });
    const refused = await runOne(start.triggerId, { InstanceId: theirs.path }, 'failed');
    expect(refused.execution.reason).toBe(`GCP refused compute.instances.get on ${theirs.path}: forbidden (HTTP 403): Required 'compute.instances.get' permission for '${theirs.path}'`);
    expect(refused.calls).toEqual([`compute.instances.get ${theirs.path}`]);
    expect(gce.instance('other-project', ZONE, theirs.name)!.status).toBe('TERMINATED');

    const missing = await runOne(start.triggerId, { InstanceId: `${ZONE}/not-there` }, 'failed');
    expect(missing.execution.reason).toBe(`GCP refused compute.instances.start on projects/${PROJECT}/zones/${ZONE}/instances/not-there: notFound (HTTP 404): The resource 'projects/${PROJECT}/zones/${ZONE}/instances/not-there' was not found`);

    n += 1;
    const full = `full-${dialect}-${n}`;
    gce.addInstance({ project: PROJECT, zone: ZONE, name: full, status: 'TERMINATED', startError: { code: 'ZONE_RESOURCE_POOL_EXHAUSTED', message: `The zone 'projects/${PROJECT}/zones/${ZONE}' does not have enough resources available to fulfill the request.  Try a different zone, or try again later.`, httpStatus: 503, httpMessage: 'SERVICE UNAVAILABLE' } });
    const exhausted = await runOne(start.triggerId, { InstanceId: `${ZONE}/${full}` }, 'failed');
    expect(exhausted.execution.reason).toBe(`GCP refused compute.instances.start on projects/${PROJECT}/zones/${ZONE}/instances/${full}: ZONE_RESOURCE_POOL_EXHAUSTED (HTTP 503): The zone 'projects/${PROJECT}/zones/${ZONE}' does not have enough resources available to fulfill the request.  Try a different zone, or try again later.`);

    expect(await fire(start.triggerId, { InstanceId: 'web-1' })).toMatchObject({ outcome: 'no_target', reason: expect.stringMatching(/^InstanceId is "web-1", not a Compute Engine instance: projects\/PROJECT\/zones\/ZONE\/instances\/NAME/) });
    expect(await fire(start.triggerId, { InstanceId: 'i-0123456789abcdef0' })).toMatchObject({ outcome: 'no_target' });
    const badZone = await env.api('POST', '/api/v1/rules', { name: 'gcp zone', trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'start', credentialId, region: 'europe-west1' }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_GCP' });
    expect(badZone.json().errors).toEqual([{ path: '/body/action/region', message: expect.stringMatching(/^a GCP action's region is the Compute Engine zone of its instances, e\.g\. europe-west1-b .*"europe-west1" is not a zone$/) }]);
    const badLabel = await env.api('POST', '/api/v1/rules', { name: 'gcp labels', trigger: { type: 'webhook' }, action: { type: 'cloud', operation: 'start', credentialId, instances: { tags: { Env: 'Prod' } } }, target: { type: 'trigger_host' }, infrastructureType: 'CLOUD_GCP' });
    expect(badLabel.json().errors).toEqual([{ path: '/body/action/instances/tags', message: expect.stringMatching(/^"Env": "Prod" cannot be a Compute Engine label/) }]);
  });

  it('asks for a new token when Compute no longer takes its own, once', async () => {
    const vm = instance('TERMINATED');
    const start = await rule('start');
    gce.revokeTokens();
    const issued = gce.tokens().length;
    const run = await runOne(start.triggerId, { InstanceId: vm.path });
    expect(run.calls.slice(0, 3)).toEqual([`compute.instances.get ${vm.path}`, 'token', `compute.instances.get ${vm.path}`]);
    expect(gce.requests.filter((r) => r.call !== 'token').at(-4)).toMatchObject({ status: 200, authorized: true });
    expect(gce.tokens().length).toBe(issued + 1);
  });

  it('calls Compute exactly the action limit’s number of times per instance in a storm', async () => {
    const [x, y] = [instance('RUNNING'), instance('RUNNING')];
    const reboot = await rule('reboot', {}, { actionLimit: { max: 2, windowSeconds: 3600 } });
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => fire(reboot.triggerId, { InstanceId: `${ZONE}/${(i % 2 === 0 ? x : y).name}` })));
    const started = replies.flatMap((r) => r.executionIds);
    expect(started).toHaveLength(4);
    expect(replies.filter((r) => r.outcome === 'limited')).toHaveLength(20);
    expect(replies.find((r) => r.outcome === 'limited')!.reason).toMatch(new RegExp(`^the cloud action ran twice on instance ${ZONE}/vm-\\w+ within 3600 s, its action limit \\(max 2\\): not called again`));
    for (const id of started) await waitState(env, id, 'succeeded');
    expect([ops('compute.instances.reset', x.name).length, ops('compute.instances.reset', y.name).length]).toEqual([2, 2]);
    expect([gce.instance(PROJECT, ZONE, x.name)!.resets, gce.instance(PROJECT, ZONE, y.name)!.resets]).toEqual([2, 2]);
  });

  it('waits no longer than its timeout for a status that never comes, and stops when the run is stopped', async () => {
    const provider = new GceInstances({ tokenUrl: gce.tokenUrl, computeUrl: gce.url, pollMs: 20 });
    const secret = { serviceAccountJson: account.keyFile };
    const spec = (vm: { path: string }, waitSeconds: number): CloudSpec => ({ kind: 'cloud', provider: 'gcp', operation: 'start', region: '', credentialId: 'c', instanceId: vm.path, waitSeconds, timeoutSeconds: waitSeconds + 60 });
    try {
      const stuck = instance('TERMINATED', { stuck: true });
      const t0 = performance.now();
      const end = await provider.run(spec(stuck, 0.3), secret, 'key-1', new AbortController().signal);
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(end).toEqual({ state: 'failed', reason: expect.stringMatching(new RegExp(`^compute\\.instances\\.start on ${stuck.path}: TERMINATED → its operation operation-[\\w-]+ RUNNING after 0\\.\\d s, not RUNNING \\(timeoutSeconds 0\\.3\\)$`)) });

      const held = instance('TERMINATED', { stuck: true });
      const stop = new AbortController();
      const running = provider.run(spec(held, 600), secret, 'key-1', stop.signal);
      await waitFor(() => ops('compute.instances.start', held.name).length === 1, 'the start call');
      const t1 = performance.now();
      stop.abort(new Error('cancelled'));
      await expect(running).rejects.toThrow('cancelled');
      expect(performance.now() - t1).toBeLessThan(2000);
    } finally {
      provider.close();
    }
  });

  it('lists the key’s project’s instances carrying every label, for tag filters', async () => {
    const provider = new GceInstances({ tokenUrl: gce.tokenUrl, computeUrl: gce.url, pollMs: 20 });
    const secret = { serviceAccountJson: account.keyFile };
    const labels = { team: `shop-${dialect}`, role: 'web' };
    try {
      const web1 = instance('RUNNING', { labels });
      const web2 = instance('TERMINATED', { labels: { ...labels, extra: 'x' }, zone: 'us-central1-a' });
      instance('RUNNING', { labels: { team: labels.team, role: 'db' } });
      instance('RUNNING', { labels: { team: 'other', role: 'web' } });
      instance('RUNNING', { labels, project: 'shop-shared' });
      instance('RUNNING', { labels, project: 'other-project' });
      const leaving = instance('RUNNING', { labels, stuck: true });
      await provider.run({ kind: 'cloud', provider: 'gcp', operation: 'terminate', region: '', credentialId: 'c', instanceId: leaving.path, waitSeconds: 0.05, timeoutSeconds: 60 }, secret, 'key-2', new AbortController().signal);
      expect(gce.instance(PROJECT, ZONE, leaving.name)!.status).toBe('STOPPING');

      const before = gce.requests.length;
      const found = await provider.instancesTagged(labels, '', secret, 'key-2', new AbortController().signal);
      expect(found).toEqual([web1.path, web2.path].sort());
      expect(gce.requests.slice(before)).toEqual([expect.objectContaining({ call: 'compute.instances.list', path: `/compute/v1/projects/${PROJECT}/aggregated/instances`, query: expect.objectContaining({ filter: `(labels.team = "${labels.team}") (labels.role = "web")` }), status: 200 })]);
      expect(await provider.instancesTagged(labels, 'us-central1-a', secret, 'key-2', new AbortController().signal)).toEqual([web2.path]);
      expect(await provider.instancesTagged({ team: 'nobody-has-this' }, '', secret, 'key-2', new AbortController().signal)).toEqual([]);

      const forged = { serviceAccountJson: gce.forgedKeyFile(account) };
      const refusal = await provider.instancesTagged(labels, '', forged, 'key-3', new AbortController().signal).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(PitcrewError);
      expect((refusal as PitcrewError).message).toBe(`GCP refused a token for ${account.email} (for compute.instances.aggregatedList in project ${PROJECT}): invalid_grant (HTTP 400): Invalid JWT Signature.`);
    } finally {
      provider.close();
    }
  });

  it('never posts to the key file’s token_uri nor asks the metadata server, and never shows the private key', async () => {
    expect(gce.requests.filter((r) => r.call === 'token').length).toBeGreaterThan(0);
    expect(trap.hits).toEqual([]);
    const seen = [
      (await env.api('GET', '/api/v1/executions?limit=1000')).body,
      (await env.api('GET', '/api/v1/credentials')).body,
      (await env.api('GET', `/api/v1/credentials/${credentialId}`)).body,
      env.logs.join('\n'),
    ].join('\n');
    expect(seen).toContain(account.email);
    for (const line of keyLines(account)) expect(seen).not.toContain(line);
    expect(seen).not.toContain(JSON.stringify(account.privateKey).slice(1, 60));
  });
});
