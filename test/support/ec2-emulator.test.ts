import {
  DescribeInstancesCommand,
  DescribeRegionsCommand,
  EC2Client,
  type EC2ClientConfig,
  EC2ServiceException,
  RebootInstancesCommand,
  StartInstancesCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
  waitUntilInstanceRunning,
  waitUntilInstanceStopped,
  waitUntilInstanceTerminated,
} from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackOnly } from './loopback-only.js';
import { type Ec2Emulator, type RawRequest, sigV4, startEc2Emulator } from './ec2-emulator.js';

/**
 * The EC2 emulator (test/support/ec2-emulator.ts) driven by the real @aws-sdk/client-ec2. What it
 * emulates and where each behaviour was checked is cited at the top of that file; the key facts
 * the assertions below rest on:
 * - EC2 refuses a wrong secret and an unknown access key alike with 401 AuthFailure "AWS was not
 *   able to validate the provided access credentials" (getmoto/moto moto/iam/access_control.py,
 *   IAMRequest: "if self._service == 'ec2': raise AuthFailureError()"; moto/core/exceptions.py).
 * - SigV4 known answers from the AWS Signature Version 4 test suite (aws-sig-v4-test-suite, as
 *   vendored in the scratchstack-aws-signature crate: post-vanilla, post-vanilla-query,
 *   get-vanilla-query-order-value, post-sts-token/post-sts-header-before).
 * - RequestExpired 400 past 15 minutes of skew
 *   (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/CommonErrors.html).
 */

const KEY = { accessKeyId: 'AKIAEMULATOR0000TEST', secretAccessKey: 'emulator/secret/key/0000000000000000000' };
const SESSION = { accessKeyId: 'ASIAEMULATOR0000TEST', secretAccessKey: 'session/secret/key/000000000000000000000', sessionToken: 'FwoGZXIvYXdzEXAMPLEsessiontoken' };
const WEB = 'i-0a1b2c3d4e5f60001';
const DB = 'i-0a1b2c3d4e5f60002';
const BATCH = 'i-0a1b2c3d4e5f60003';
const GONE = 'i-0a1b2c3d4e5f6ffff';
const US_ONLY = 'i-0a1b2c3d4e5f60004';

let emulator: Ec2Emulator;
const clients: EC2Client[] = [];

/** A client pointed at the emulator with everything given, so nothing is looked up elsewhere. */
function client(config: Partial<EC2ClientConfig> = {}): EC2Client {
  const c = new EC2Client({ region: 'eu-west-1', endpoint: emulator.url, credentials: KEY, maxAttempts: 1, ...config });
  clients.push(c);
  return c;
}

/** Where every TCP connection of this file went: nothing may leave loopback (no IMDS, no real endpoints). */
let guard: ReturnType<typeof loopbackOnly>;

async function refusal(promise: Promise<unknown>): Promise<EC2ServiceException> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EC2ServiceException);
  return error as EC2ServiceException;
}

const waiter = (c: EC2Client) => ({ client: c, maxWaitTime: 10, minDelay: 0.01, maxDelay: 0.05 });

beforeAll(async () => {
  guard = loopbackOnly();
  emulator = await startEc2Emulator();
  emulator.addKey(KEY.accessKeyId, KEY.secretAccessKey);
  emulator.addKey(SESSION.accessKeyId, SESSION.secretAccessKey, SESSION.sessionToken);
  emulator.addInstance({ id: WEB, region: 'eu-west-1', state: 'stopped', tags: { Name: 'web-1', env: 'prod' } });
  emulator.addInstance({ id: DB, region: 'eu-west-1', state: 'running', tags: { Name: 'db-1', env: 'prod' } });
  emulator.addInstance({ id: BATCH, region: 'eu-west-1', state: 'running', tags: { Name: 'batch-1', env: 'staging' } });
  emulator.addInstance({ id: US_ONLY, region: 'us-east-1', state: 'running', tags: { env: 'prod' } });
});

afterAll(async () => {
  guard.restore();
  for (const c of clients) c.destroy();
  await emulator?.close();
});

describe('SigV4 as the AWS test suite computes it', () => {
  // aws-sig-v4-test-suite: credentials AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY,
  // 20150830T123600Z, scope 20150830/us-east-1/service/aws4_request, Host example.amazonaws.com.
  const secretAccessKey = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
  const signed = (signedHeaders: string[]) => ({ signedHeaders, amzDate: '20150830T123600Z', scope: '20150830/us-east-1/service/aws4_request', secretAccessKey });
  const request = (method: string, target: string, extra: Array<[string, string]> = []): RawRequest => {
    const [path = '/', query = ''] = target.split('?');
    return { method, path, query, headers: [['Host', 'example.amazonaws.com'], ['X-Amz-Date', '20150830T123600Z'], ...extra], body: '' };
  };

  it('post-vanilla', () => {
    expect(sigV4(request('POST', '/'), signed(['host', 'x-amz-date'])).signature).toBe('5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b');
  });

  it('post-vanilla-query', () => {
    const result = sigV4(request('POST', '/?Param1=value1'), signed(['host', 'x-amz-date']));
    expect(result.canonicalRequest).toBe('POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(result.signature).toBe('28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11');
  });

  it('get-vanilla-query-order-value (repeated names sort by value)', () => {
    expect(sigV4(request('GET', '/?Param1=value2&Param1=value1'), signed(['host', 'x-amz-date'])).signature).toBe('5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694');
  });

  it('post-sts-header-before (a signed session token)', () => {
    const token =
      'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';
    const result = sigV4(request('POST', '/', [['X-Amz-Security-Token', token]]), signed(['host', 'x-amz-date', 'x-amz-security-token']));
    expect(result.signature).toBe('85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead');
  });
});

describe('instance actions through the real SDK', () => {
  it('starts a stopped instance: pending, then running once DescribeInstances has polled', async () => {
    const ec2 = client();
    emulator.transitionPolls = 2;
    try {
      const started = await ec2.send(new StartInstancesCommand({ InstanceIds: [WEB] }));
      expect(started.StartingInstances).toEqual([{ InstanceId: WEB, CurrentState: { Code: 0, Name: 'pending' }, PreviousState: { Code: 80, Name: 'stopped' } }]);
      const first = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [WEB] }));
      expect(first.Reservations?.[0]?.Instances?.[0]?.State).toEqual({ Code: 0, Name: 'pending' });
      const waited = await waitUntilInstanceRunning(waiter(ec2), { InstanceIds: [WEB] });
      expect(waited.state).toBe('SUCCESS');
      expect(emulator.instance(WEB)?.state).toBe('running');
    } finally {
      emulator.transitionPolls = 1;
    }
    const last = emulator.requests.filter((r) => r.action === 'StartInstances').at(-1);
    expect(last).toMatchObject({ params: { Action: 'StartInstances', Version: '2016-11-15', 'InstanceId.1': WEB }, accessKeyId: KEY.accessKeyId, region: 'eu-west-1', authorized: true, status: 200 });
  });

  it('stops a running instance: stopping, then stopped', async () => {
    const ec2 = client();
    const stopped = await ec2.send(new StopInstancesCommand({ InstanceIds: [WEB] }));
    expect(stopped.StoppingInstances?.[0]).toEqual({ InstanceId: WEB, CurrentState: { Code: 64, Name: 'stopping' }, PreviousState: { Code: 16, Name: 'running' } });
    expect(emulator.instance(WEB)?.state).toBe('stopping');
    expect((await waitUntilInstanceStopped(waiter(ec2), { InstanceIds: [WEB] })).state).toBe('SUCCESS');
    expect(emulator.instance(WEB)?.state).toBe('stopped');
  });

  it('reboots a running instance, which stays running, and refuses to reboot a stopped one', async () => {
    const ec2 = client();
    const rebooted = await ec2.send(new RebootInstancesCommand({ InstanceIds: [DB] }));
    expect(rebooted.$metadata.httpStatusCode).toBe(200);
    expect(emulator.instance(DB)).toMatchObject({ state: 'running', reboots: 1 });
    const error = await refusal(ec2.send(new RebootInstancesCommand({ InstanceIds: [WEB] })));
    expect(error.name).toBe('IncorrectInstanceState');
    expect(emulator.instance(WEB)?.reboots).toBe(0);
  });

  it('terminates an instance: shutting-down, then terminated, and it cannot be started again', async () => {
    const ec2 = client();
    const terminated = await ec2.send(new TerminateInstancesCommand({ InstanceIds: [BATCH] }));
    expect(terminated.TerminatingInstances?.[0]).toEqual({ InstanceId: BATCH, CurrentState: { Code: 32, Name: 'shutting-down' }, PreviousState: { Code: 16, Name: 'running' } });
    expect((await waitUntilInstanceTerminated(waiter(ec2), { InstanceIds: [BATCH] })).state).toBe('SUCCESS');
    const error = await refusal(ec2.send(new StartInstancesCommand({ InstanceIds: [BATCH] })));
    expect(error.name).toBe('IncorrectInstanceState');
    expect(error.$metadata.httpStatusCode).toBe(400);
  });

  it('filters DescribeInstances by tag and by state, in the credential scope region only', async () => {
    const ec2 = client();
    const ids = async (filters: { Name: string; Values: string[] }[]) =>
      (await ec2.send(new DescribeInstancesCommand({ Filters: filters }))).Reservations?.flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId).sort();
    expect(await ids([{ Name: 'tag:env', Values: ['prod'] }])).toEqual([WEB, DB].sort());
    expect(await ids([{ Name: 'tag:Name', Values: ['db-*', 'nothing'] }])).toEqual([DB]);
    expect(await ids([{ Name: 'tag:env', Values: ['prod'] }, { Name: 'instance-state-name', Values: ['running'] }])).toEqual([DB]);
    const all = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [DB] }));
    expect(all.Reservations?.[0]?.Instances?.[0]?.Tags).toEqual(expect.arrayContaining([{ Key: 'Name', Value: 'db-1' }, { Key: 'env', Value: 'prod' }]));
    const us = await client({ region: 'us-east-1' }).send(new DescribeInstancesCommand({}));
    expect(us.Reservations?.flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId)).toEqual([US_ONLY]);
  });

  it('lists regions', async () => {
    const regions = await client().send(new DescribeRegionsCommand({}));
    expect(regions.Regions).toEqual(expect.arrayContaining([{ RegionName: 'eu-west-1', Endpoint: 'ec2.eu-west-1.amazonaws.com', OptInStatus: 'opt-in-not-required' }]));
    expect(regions.Regions?.length).toBe(emulator.regions.length);
  });

  it('answers an unknown instance, or one of another region, with InvalidInstanceID.NotFound naming it', async () => {
    const unknown = await refusal(client().send(new StopInstancesCommand({ InstanceIds: [GONE] })));
    expect(unknown.name).toBe('InvalidInstanceID.NotFound');
    expect(unknown.message).toBe(`The instance ID '${GONE}' does not exist`);
    expect(unknown.$metadata.httpStatusCode).toBe(400);
    const elsewhere = await refusal(client().send(new TerminateInstancesCommand({ InstanceIds: [DB, US_ONLY] })));
    expect(elsewhere.name).toBe('InvalidInstanceID.NotFound');
    expect(elsewhere.message).toContain(US_ONLY);
    expect(emulator.instance(DB)?.state).toBe('running'); // all or nothing
    expect(emulator.instance(US_ONLY)?.state).toBe('running');
  });

  it('answers DryRun with DryRunOperation and changes nothing', async () => {
    const error = await refusal(client().send(new StopInstancesCommand({ InstanceIds: [DB], DryRun: true })));
    expect(error.name).toBe('DryRunOperation');
    expect(emulator.instance(DB)?.state).toBe('running');
  });
});

describe('authentication', () => {
  it('refuses a signature made with the wrong secret with AuthFailure (what EC2 sends, not SignatureDoesNotMatch)', async () => {
    const before = emulator.requests.length;
    const error = await refusal(client({ credentials: { ...KEY, secretAccessKey: `${KEY.secretAccessKey}x` } }).send(new StopInstancesCommand({ InstanceIds: [DB] })));
    expect(error.name).toBe('AuthFailure');
    expect(error.message).toBe('AWS was not able to validate the provided access credentials');
    expect(error.$metadata.httpStatusCode).toBe(401);
    expect(emulator.requests.slice(before)).toEqual([expect.objectContaining({ action: 'StopInstances', accessKeyId: KEY.accessKeyId, region: 'eu-west-1', authorized: false, status: 401 })]);
    expect(emulator.instance(DB)?.state).toBe('running');
  });

  it('refuses an unknown access key with AuthFailure', async () => {
    const error = await refusal(client({ credentials: { accessKeyId: 'AKIANOBODY0000000000', secretAccessKey: KEY.secretAccessKey } }).send(new DescribeRegionsCommand({})));
    expect(error.name).toBe('AuthFailure');
    expect(emulator.requests.at(-1)).toMatchObject({ accessKeyId: 'AKIANOBODY0000000000', authorized: false, status: 401 });
  });

  it('refuses a request whose body changed after it was signed', async () => {
    const ec2 = client();
    // The deserialize step runs after finalizeRequest (where the SDK signs), just before sending.
    ec2.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { body?: unknown; headers: Record<string, string> };
        if (typeof request.body === 'string') {
          const tampered = request.body.replace(DB, WEB);
          request.body = tampered;
          request.headers['content-length'] = String(Buffer.byteLength(tampered));
        }
        return next(args);
      },
      { step: 'deserialize', name: 'tamperAfterSigning' },
    );
    const error = await refusal(ec2.send(new RebootInstancesCommand({ InstanceIds: [DB] })));
    expect(error.name).toBe('AuthFailure');
    expect(emulator.requests.at(-1)).toMatchObject({ params: { 'InstanceId.1': WEB }, authorized: false });
    expect(emulator.instance(WEB)?.reboots).toBe(0);
  });

  it('accepts session credentials with their token, and refuses them with a wrong or missing token', async () => {
    const ok = await client({ credentials: SESSION }).send(new DescribeRegionsCommand({}));
    expect(ok.Regions?.length).toBeGreaterThan(0);
    expect(emulator.requests.at(-1)).toMatchObject({ accessKeyId: SESSION.accessKeyId, authorized: true });
    const wrong = await refusal(client({ credentials: { ...SESSION, sessionToken: 'another-token' } }).send(new DescribeRegionsCommand({})));
    expect(wrong.name).toBe('AuthFailure');
    const missing = await refusal(client({ credentials: { accessKeyId: SESSION.accessKeyId, secretAccessKey: SESSION.secretAccessKey } }).send(new DescribeRegionsCommand({})));
    expect(missing.name).toBe('AuthFailure');
  });

  it('refuses a request signed 20 minutes off with RequestExpired, and the SDK takes its clock from the reply', async () => {
    const ec2 = client({ systemClockOffset: -20 * 60 * 1000 });
    const skewed = await refusal(ec2.send(new DescribeRegionsCommand({})));
    expect(skewed.name).toBe('RequestExpired');
    expect(skewed.$metadata.httpStatusCode).toBe(400);
    expect(emulator.requests.at(-1)).toMatchObject({ action: 'DescribeRegions', authorized: false, status: 400 });
    // The SDK resets its clock offset from the reply's Date header (AwsSdkSigV4Signer.errorHandler), as against EC2.
    const corrected = await ec2.send(new DescribeRegionsCommand({}));
    expect(corrected.Regions?.length).toBeGreaterThan(0);
    expect(emulator.requests.at(-1)).toMatchObject({ authorized: true, status: 200 });
  });
});

describe('isolation', () => {
  it('connected nowhere but the emulator', () => {
    expect(guard.connections.length).toBeGreaterThan(0);
    expect(guard.connections.filter((host) => host !== '127.0.0.1')).toEqual([]);
  });
});
