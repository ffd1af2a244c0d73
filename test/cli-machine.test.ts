import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { execFileSync } from 'node:child_process';
import { startEc2Emulator, type Ec2Emulator } from './support/ec2-emulator.js';
import { startStsEmulator, type StsEmulator } from './support/sts-emulator.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitState } from './support/notify.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 19.4: the CLI Machine runs a rule's CLI runbook on the service side, as a child process
 * with a clean environment holding only the rule's credentials. Debian's real `aws` CLI (package
 * awscli, installed by .ci/run) starts an EC2 instance at the EC2 emulator
 * (test/support/ec2-emulator.ts), which checks the SigV4 signature of every call with the key
 * the credential holds. The credential's secret never shows in stored output, live output,
 * replies or logs.
 */
const AWS_CLI = '/usr/bin/aws';
const KEY = { accessKeyId: 'AKIAIOSFODNN7CLIMACH', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzCLIMACHINE' };
const SECRET_PATTERN = new RegExp(`${KEY.secretAccessKey}|${KEY.accessKeyId}`);
/** A user's key that may only assume the role: EC2 does not know it, so a call EC2 takes was made as the role. */
const ROLE_USER = { accessKeyId: 'AKIAJ7CLIROLEUSEREXA', secretAccessKey: 'cliRoleUserSecret/0123456789abcdefEXAMPLE', arn: 'arn:aws:iam::123456789012:user/pitcrew-cli' };
const ROLE = { arn: 'arn:aws:iam::210987654321:role/pitcrew-cli-ops', externalId: 'pitcrew-cli-ext-51d2' };

describe.each(testDialects())('the CLI Machine on %s', (dialect) => {
  let env: TestEnv;
  let ec2: Ec2Emulator;
  let sts: StsEmulator;
  let credentialId: string;
  const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-test-'));
  const root = process.getuid?.() === 0;

  beforeAll(async () => {
    ec2 = await startEc2Emulator();
    ec2.transitionPolls = 0;
    ec2.addKey(KEY.accessKeyId, KEY.secretAccessKey);
    sts = await startStsEmulator((issued) => ec2.addKey(issued.accessKeyId, issued.secretAccessKey, issued.sessionToken));
    sts.addKey(ROLE_USER.accessKeyId, ROLE_USER.secretAccessKey, ROLE_USER.arn);
    sts.addRole(ROLE.arn, { trusts: [ROLE_USER.arn], externalId: ROLE.externalId });
    fs.chmodSync(scratchDir, 0o755);
    env = await startTestEnv(dialect, {
      awsEndpoint: ec2.url,
      awsStsEndpoint: sts.url,
      listen: true,
      cli: { scratchDir, maxPerTenant: 1, maxOutputBytes: 4096, runAs: root ? { name: 'nobody', uid: 65534, gid: 65534 } : undefined },
    });
    credentialId = (await env.api('POST', '/api/v1/credentials', { name: 'aws-cli', provider: 'aws', secret: KEY })).json().id;
  });
  afterAll(async () => {
    await env?.close();
    await ec2?.close();
    await sts?.close();
    fs.rmSync(scratchDir, { recursive: true, force: true });
  });

  const cliRule = async (script: string, action: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const response = await env.api('POST', '/api/v1/rules', {
      name: `cli-${Math.random().toString(36).slice(2, 8)}`, trigger: { type: 'webhook' }, infrastructureType: 'CLOUD_EC2',
      action: { type: 'cli', runbook: { script }, credentialIds: [credentialId], ...action }, target: { type: 'cli_machine' }, ...extra,
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().trigger.triggerId as string;
  };
  const fire = async (triggerId: string, body: Record<string, unknown> = {}) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { eventId: string; outcome: string; executionIds: string[]; skippedEnv: Array<{ name: string; reason: string }> };
  };
  const ended = async (id: string, state: string) => (await waitState(env, id, state)) as { stdout: string; stderr: string; exitCode: number | null; reason: string | null; stdoutTruncated: boolean; startedAt: string; finishedAt: string };

  it("runs Debian's aws CLI with the rule's credential: a signed StartInstances at EC2, its answer in the output", async () => {
    expect(fs.existsSync(AWS_CLI), `${AWS_CLI} (Debian package awscli, installed by .ci/run)`).toBe(true);
    const id = `i-${(dialect === 'sqlite' ? 0xc1000001 : 0xc2000001).toString(16)}`;
    ec2.addInstance({ id, region: 'eu-west-1', state: 'stopped' });
    const triggerId = await cliRule('aws --endpoint-url "$AWS_ENDPOINT_URL_EC2" --region eu-west-1 --output json ec2 start-instances --instance-ids "$InstanceId"');
    const reply = await fire(triggerId, { HostName: 'web-1', InstanceId: id });
    expect(reply.outcome).toBe('accepted');
    const execution = await ended(reply.executionIds[0]!, 'succeeded');
    expect(JSON.parse(execution.stdout)).toMatchObject({ StartingInstances: [{ InstanceId: id, PreviousState: { Name: 'stopped' }, CurrentState: { Name: expect.stringMatching(/^(pending|running)$/) } }] });
    expect(ec2.instance(id)!.state).toBe('running');
    const calls = ec2.requests.filter((r) => r.action === 'StartInstances' && r.params['InstanceId.1'] === id);
    expect(calls).toEqual([expect.objectContaining({ accessKeyId: KEY.accessKeyId, region: 'eu-west-1', authorized: true, status: 200 })]);
  }, 60_000);

  it("reaches the operator's EC2 and STS endpoints with Debian's aws 2.9, which reads neither from its environment: a role assumed, a runbook with no --endpoint-url", async () => {
    // Debian 12's awscli predates the endpoint variables of 2.13 (docs/cli-machine.md): the shim on PATH gives them.
    expect(execFileSync(AWS_CLI, ['--version'], { encoding: 'utf8' })).toMatch(/^aws-cli\/2\.9\./);
    const roleCredential = (await env.api('POST', '/api/v1/credentials', { name: `aws-role-${dialect}`, provider: 'aws', secret: { accessKeyId: ROLE_USER.accessKeyId, secretAccessKey: ROLE_USER.secretAccessKey, roleArn: ROLE.arn, externalId: ROLE.externalId } })).json().id as string;
    const id = `i-${(dialect === 'sqlite' ? 0xc1000002 : 0xc2000002).toString(16)}`;
    ec2.addInstance({ id, region: 'eu-west-1', state: 'running' });
    const assumedBefore = sts.requests.length;
    const triggerId = await cliRule('aws --region eu-west-1 --output json ec2 describe-instances --instance-ids "$InstanceId"', { credentialIds: [roleCredential] });
    const execution = await ended((await fire(triggerId, { HostName: 'web-8', InstanceId: id })).executionIds[0]!, 'succeeded');
    expect(JSON.parse(execution.stdout)).toMatchObject({ Reservations: [{ Instances: [{ InstanceId: id, State: { Name: 'running' } }] }] });
    // The role was assumed at the operator's STS with the stored keys, and EC2 saw only the role's temporary key.
    expect(sts.requests.slice(assumedBefore)).toEqual([{ accessKeyId: ROLE_USER.accessKeyId, roleArn: ROLE.arn, sessionName: 'pitcrew-cli', externalId: ROLE.externalId, status: 200 }]);
    const calls = ec2.requests.filter((r) => r.action === 'DescribeInstances' && r.params['InstanceId.1'] === id);
    expect(calls).toEqual([expect.objectContaining({ accessKeyId: expect.stringMatching(/^ASIA/), region: 'eu-west-1', authorized: true, status: 200 })]);
    expect(JSON.stringify(execution)).not.toContain(ROLE_USER.secretAccessKey);

    // STS refusing the role fails the run before anything runs, saying what STS answered.
    await env.api('PATCH', `/api/v1/credentials/${roleCredential}`, { secret: { accessKeyId: ROLE_USER.accessKeyId, secretAccessKey: ROLE_USER.secretAccessKey, roleArn: ROLE.arn, externalId: 'not-the-external-id' } });
    const refused = await ended((await fire(triggerId, { HostName: 'web-8', InstanceId: id })).executionIds[0]!, 'failed');
    expect(refused.reason).toBe(`AWS refused sts:AssumeRole of ${ROLE.arn} (for a CLI runbook): AccessDenied (HTTP 403): User: ${ROLE_USER.arn} is not authorized to perform: sts:AssumeRole on resource: ${ROLE.arn}; nothing was run`);
    expect(refused.stdout).toBe('');
    expect(ec2.requests.filter((r) => r.action === 'DescribeInstances' && r.params['InstanceId.1'] === id)).toHaveLength(1);
  }, 60_000);

  it('never shows a credential value: not in stored or live output, replies or logs', async () => {
    // The runbook prints its whole environment, the key twice, and a line cut inside the secret.
    const script = 'env; echo "key=$AWS_SECRET_ACCESS_KEY"; printf "%s" "$AWS_SECRET_ACCESS_KEY" | head -c 20; echo; echo "id=$AWS_ACCESS_KEY_ID" >&2';
    const triggerId = await cliRule(script);
    const [id] = (await fire(triggerId, { HostName: 'web-2' })).executionIds;
    const stream = fetch(`${env.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${env.tenant.token}` } }).then((r) => r.text());
    const execution = await ended(id!, 'succeeded');
    const live = await stream;
    expect(execution.stdout).toContain('key=********');
    expect(execution.stdout).toContain('AWS_SECRET_ACCESS_KEY=********');
    expect(execution.stderr).toContain('id=********');
    const seen = [execution.stdout, execution.stderr, live, (await env.api('GET', `/api/v1/executions/${id}`)).body, (await env.api('GET', `/api/v1/credentials/${credentialId}`)).body, env.logs.join('\n')];
    for (const text of seen) expect(text).not.toMatch(SECRET_PATTERN);
    // The part of the secret that head cut out is masked too.
    expect(execution.stdout).not.toContain(KEY.secretAccessKey.slice(0, 20));
    expect(execution.stdout.split('\n').filter((line) => line === '********')).toHaveLength(1);
  });

  it('gives a clean environment: no service variables, a throwaway HOME outside the data directory, removed after', async () => {
    process.env.PITCREW_TEST_SERVICE_ONLY = 'service-side';
    const triggerId = await cliRule('echo "home=$HOME"; echo "path=$PATH"; env | cut -d= -f1 | sort | tr "\\n" " "; echo; pwd; touch "$HOME/made"; id -un');
    const reply = await fire(triggerId, { HostName: 'web-3', AWS_ENDPOINT_URL_EC2: 'http://attacker.example', Note: 'kept', PATH: '/tmp/evil', MetaData: { LD_PRELOAD: '/tmp/evil.so', HOME: '/root', KUBECONFIG: '/tmp/k' } });
    // Every name left out is in the reply, with why: those refused for any runbook and those the CLI Machine refuses.
    const skipped = Object.fromEntries(reply.skippedEnv.map(({ name, reason }) => [name, reason]));
    expect(Object.keys(skipped).sort()).toEqual(['AWS_ENDPOINT_URL_EC2', 'HOME', 'KUBECONFIG', 'LD_PRELOAD', 'PATH']);
    for (const name of ['PATH', 'LD_PRELOAD', 'HOME']) expect(skipped[name]).toBe('reserved: it would change how the script process runs');
    for (const name of ['AWS_ENDPOINT_URL_EC2', 'KUBECONFIG']) expect(skipped[name]).toBe("reserved on the CLI Machine: it would choose where a cloud CLI sends the tenant's credentials, or which ones it uses");
    const [id] = reply.executionIds;
    const stored = (await env.api('GET', `/api/v1/events/${reply.eventId}`)).json();
    expect(stored.skippedEnv).toEqual(reply.skippedEnv);
    expect(Object.keys(stored.env).sort()).toEqual(['HostName', 'Note']);
    const execution = await ended(id!, 'succeeded');
    delete process.env.PITCREW_TEST_SERVICE_ONLY;
    const home = /^home=(.*)$/m.exec(execution.stdout)![1]!;
    expect(path.dirname(home)).toBe(scratchDir);
    expect(home.startsWith(env.database.dataDir)).toBe(false);
    expect(fs.existsSync(home)).toBe(false);
    // The CLI Machine's PATH, behind the shim that gives old AWS CLIs the operator's endpoints.
    expect(execution.stdout).toContain(`path=${home}/.pitcrew/bin:/usr/local/bin:/usr/bin:/bin`);
    const names = execution.stdout.split('\n')[2]!.trim().split(' ');
    expect(names).not.toContain('PITCREW_TEST_SERVICE_ONLY');
    expect(names).not.toContain('DATABASE_URL');
    expect(names).toEqual(expect.arrayContaining(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_EC2_METADATA_DISABLED', 'Note', 'PITCREW_EXECUTION_ID', 'HOME']));
    // The payload cannot point the CLI's credentialed calls elsewhere: the service's endpoint stays.
    expect(execution.stdout).not.toContain('attacker.example');
    expect(execution.stdout).toMatch(new RegExp(`^${home}/work$`, 'm'));
    expect(execution.stdout.trim().split('\n').at(-1)).toBe(root ? 'nobody' : os.userInfo().username);
  });

  it.runIf(root)('runs as its own user, who cannot read the data directory', async () => {
    const triggerId = await cliRule(`ls "${env.database.dataDir}" && echo READ`);
    const [id] = (await fire(triggerId, { HostName: 'web-4' })).executionIds;
    const execution = await ended(id!, 'failed');
    expect(execution.stderr).toMatch(/Permission denied/);
    expect(execution.stdout).not.toContain('READ');
  });

  it('stops a runbook past its timeout, with what it printed, and nothing it started lives on', async () => {
    const marker = `pitcrew-cli-marker-${dialect}-${Date.now()}`;
    const triggerId = await cliRule('', { runbook: { script: `echo begun; (exec -a ${marker} sleep 300) & sleep 300`, interpreter: 'bash' }, timeoutSeconds: 1 });
    const [id] = (await fire(triggerId, { HostName: 'web-5' })).executionIds;
    const execution = await ended(id!, 'timed_out');
    expect(execution.stdout).toBe('begun\n');
    expect(execution.reason).toMatch(/ran past its timeout of 1 s/);
    await waitFor(() => !fs.readdirSync('/proc').some((pid) => /^\d+$/.test(pid) && readCmdline(pid).startsWith(marker)), 'the background process to be gone', 5000);
  });

  it('stops a running runbook a person cancels, keeping what it printed', async () => {
    // Cancelled once it has printed (a marker file says so): "running" alone comes before the
    // shell's first line, and a cancel then finds nothing printed yet (seen on a loaded machine).
    // In a directory of its own that the runbook's user (nobody, when the tests run as root) may
    // write to: $TMPDIR itself need not be world-writable.
    const markers = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-markers-'));
    fs.chmodSync(markers, 0o777);
    onTestFinished(() => fs.rmSync(markers, { recursive: true, force: true }));
    const printed = path.join(markers, 'printed');
    const triggerId = await cliRule(`echo waiting; touch ${printed}; sleep 300`);
    const [id] = (await fire(triggerId, { HostName: 'web-7' })).executionIds;
    await waitFor(() => fs.existsSync(printed), 'the runbook to print');
    fs.rmSync(printed, { force: true });
    expect((await env.api('POST', `/api/v1/executions/${id}/cancel`)).statusCode).toBe(202);
    const execution = await ended(id!, 'cancelled');
    expect(execution.stdout).toBe('waiting\n');
    expect(execution.reason).toMatch(/^cancelled on request/);
  });

  it('keeps output within its limit and says it was cut', async () => {
    const triggerId = await cliRule('yes pitcrew | head -c 100000');
    const [id] = (await fire(triggerId, { HostName: 'web-6' })).executionIds;
    const execution = await ended(id!, 'succeeded');
    expect(execution.stdout.length).toBe(4096);
    expect(execution.stdoutTruncated).toBe(true);
  });

  it("runs a tenant's runbooks one at a time with a cap of 1: the second waits queued", async () => {
    const triggerId = await cliRule('sleep 0.5');
    const ids = [...(await fire(triggerId, { HostName: 'a' })).executionIds, ...(await fire(triggerId, { HostName: 'b' })).executionIds];
    const [first, second] = await Promise.all(ids.map((id) => ended(id, 'succeeded')));
    const runs = [first!, second!].sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt));
    expect(Date.parse(runs[1]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(runs[0]!.finishedAt));
  });

  it('refuses a rule whose credential is not this tenant’s, and two credentials of one provider', async () => {
    const other = await env.addTenant(`other-${dialect}`);
    const theirs = (await env.api('POST', '/api/v1/credentials', { name: 'theirs', provider: 'aws', secret: KEY }, other.token)).json().id as string;
    const body = (credentialIds: string[]) => ({ name: 'x', trigger: { type: 'webhook' }, infrastructureType: 'CLOUD_EC2', action: { type: 'cli', runbook: { script: 'true' }, credentialIds }, target: { type: 'cli_machine' } });
    const foreign = await env.api('POST', '/api/v1/rules', body([theirs]));
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().errors[0]).toMatchObject({ path: '/body/action/credentialIds/0', message: expect.stringMatching(/^no credential .* in this tenant/) });
    const second = (await env.api('POST', '/api/v1/credentials', { name: 'aws-2', provider: 'aws', secret: KEY })).json().id as string;
    const twice = await env.api('POST', '/api/v1/rules', body([credentialId, second]));
    expect(twice.statusCode).toBe(400);
    expect(twice.json().errors[0]).toMatchObject({ path: '/body/action/credentialIds/1', message: expect.stringContaining('both for aws') });
  });
});

function readCmdline(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

// The separate worker mode (docs/cli-machine.md): an API node with its CLI Machine off leaves CLI
// runs to a worker node on the same PostgreSQL, which runs them in its own scratch directory.
describe.skipIf(!testDialects().includes('postgres'))('a CLI worker node beside an API node on PostgreSQL', () => {
  let api: TestEnv;
  let worker: TestEnv;
  const workerScratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-cli-worker-'));

  beforeAll(async () => {
    fs.chmodSync(workerScratch, 0o755);
    api = await startTestEnv('postgres', { cli: { enabled: false } });
    worker = await startTestEnv('postgres', { database: api.database, cli: { scratchDir: workerScratch } });
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
    fs.rmSync(workerScratch, { recursive: true, force: true });
  });

  it('runs on the worker what the API node accepted', async () => {
    const rule = await api.api('POST', '/api/v1/rules', {
      name: 'on the worker', trigger: { type: 'webhook' }, infrastructureType: 'On_Premise',
      action: { type: 'cli', runbook: { script: 'echo "$HOME"' } }, target: { type: 'cli_machine' },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const reply = await api.webhook(rule.json().trigger.triggerId, { HostName: 'db-1' });
    expect(reply.statusCode).toBe(202);
    const execution = (await waitState(api, reply.json().executionIds[0], 'succeeded')) as { stdout: string };
    expect(path.dirname(execution.stdout.trim())).toBe(workerScratch);
    expect(api.logs.join('\n')).toMatch(/no runner for this kind of service run on this node/);
  });
});
