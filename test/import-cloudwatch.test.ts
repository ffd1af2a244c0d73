import { createSign } from 'node:crypto';
import selfsigned from 'selfsigned';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PitcrewError } from '../src/errors/catalogue.js';
import { CloudwatchImporter, policyRequestHandler } from '../src/integrations/cloudwatch-sns/import.js';
import { parseCloudwatchSns } from '../src/integrations/cloudwatch-sns/parse.js';
import { observationOf } from '../src/integrations/notification.js';
import { stringToSign } from '../src/integrations/cloudwatch-sns/signature.js';
import { cloudwatchImportNeeds } from '../src/integrations/cloudwatch-sns/import-needs.js';
import { firingBeforeResolved, importAll, lines, loopbackFetch, readOnlyFetch } from './support/import-run.js';
import { startCloudwatchEmulator, type CloudwatchEmulator } from './support/cloudwatch-emulator.js';
import { loopbackOnly } from './support/loopback-only.js';
import { startStsEmulator } from './support/sts-emulator.js';

/*
 * The CloudWatch importer, driving the real @aws-sdk/client-cloudwatch through the import's
 * egress-checked fetch, against the emulator of DescribeAlarms and DescribeAlarmHistory
 * (test/support/cloudwatch-emulator.ts: the SDK's AWS JSON 1.0 protocol, the CloudWatch API
 * Reference, SigV4 checked with the EC2 emulator's verifier). Two items a page.
 */

const KEY = { accessKeyId: 'AKIAEMULATORCW000001', secretAccessKey: 'cloudwatch/emulator/secret/0000000000000' };
const DAY = 86_400_000;
const NOW = Date.now() - (Date.now() % 1000);
const iso = (ms: number) => new Date(ms).toISOString();

let cw: CloudwatchEmulator;
let guard: ReturnType<typeof loopbackOnly>;
const arn = (name: string) => `arn:aws:cloudwatch:eu-west-1:123456789012:alarm:${name}`;

function importer() {
  return new CloudwatchImporter({ awsEndpoint: cw.url });
}

function setup(overrides: { now?: number; secret?: unknown } = {}) {
  return { config: { region: 'eu-west-1' }, secret: overrides.secret ?? KEY, since: NOW - 30 * DAY, now: overrides.now ?? NOW };
}

beforeAll(() => {
  // Nothing but the emulator: no instance metadata, no real CloudWatch endpoint.
  guard = loopbackOnly();
});

afterAll(() => guard.restore());

beforeEach(async () => {
  cw = await startCloudwatchEmulator();
  cw.addKey(KEY.accessKeyId, KEY.secretAccessKey);
  cw.alarm({ name: 'cpu-web-1', instanceId: 'i-0a1b2c3d4e5f60001', state: 'OK', since: NOW - 50 * DAY });
  cw.change('cpu-web-1', 'ALARM', NOW - 40 * DAY);
  cw.alarm({ name: 'cpu-web-2', instanceId: 'i-0a1b2c3d4e5f60002', state: 'OK', since: NOW - 50 * DAY });
  cw.change('cpu-web-2', 'ALARM', NOW - 10 * DAY);
  cw.change('cpu-web-2', 'OK', NOW - 9 * DAY);
  cw.alarm({ name: 'disk-db-1', instanceId: 'i-0a1b2c3d4e5f60003', math: true, state: 'OK', since: NOW - 50 * DAY });
  cw.change('disk-db-1', 'ALARM', NOW - 5 * DAY);
  cw.alarm({ name: 'site-down', composite: true, state: 'OK', since: NOW - 50 * DAY });
  cw.change('site-down', 'ALARM', NOW - 3 * DAY);
  cw.change('site-down', 'OK', NOW - 2 * DAY);
  cw.alarm({ name: 'flappy', instanceId: 'i-0a1b2c3d4e5f60004', state: 'OK', since: NOW - 50 * DAY });
  cw.change('flappy', 'INSUFFICIENT_DATA', NOW - 4 * DAY);
  cw.alarm({ name: 'gone', instanceId: 'i-0a1b2c3d4e5f60005', state: 'OK', since: NOW - 50 * DAY });
  cw.change('gone', 'ALARM', NOW - 6 * DAY);
  cw.change('gone', 'OK', NOW - 5.5 * DAY);
  cw.remove('gone');
  cw.alarm({ name: 'cpu-web-3', instanceId: 'i-0a1b2c3d4e5f60006', state: 'OK', since: NOW - 50 * DAY });
  cw.change('cpu-web-3', 'ALARM', NOW - 10_000);
});

afterEach(async () => {
  expect(cw.failures).toEqual([]);
  await cw.close();
});

describe('CloudWatch import', () => {
  it('reads the state history of the look-back and the alarms in ALARM from before it, keyed by ARN, across pages', async () => {
    const { fetch, urls } = loopbackFetch();
    const run = await importAll(importer(), setup(), null, fetch);
    expect(lines(run.observations)).toEqual(
      [
        `${arn('cpu-web-1')} firing ${iso(NOW - 40 * DAY)}`,
        `${arn('cpu-web-2')} firing ${iso(NOW - 10 * DAY)}`,
        `${arn('cpu-web-2')} resolved ${iso(NOW - 9 * DAY)}`,
        `${arn('gone')} firing ${iso(NOW - 6 * DAY)}`,
        `${arn('gone')} resolved ${iso(NOW - 5.5 * DAY)}`,
        `${arn('disk-db-1')} firing ${iso(NOW - 5 * DAY)}`,
        `${arn('site-down')} firing ${iso(NOW - 3 * DAY)}`,
        `${arn('site-down')} resolved ${iso(NOW - 2 * DAY)}`,
      ].sort(),
    );
    expect(firingBeforeResolved(run.observations)).toBe(true);
    expect(run.observations.find((o) => o.incidentKey === arn('cpu-web-2'))).toEqual({ incidentKey: arn('cpu-web-2'), alarmName: 'cpu-web-2', hostname: 'i-0a1b2c3d4e5f60002', severity: null, state: 'firing', at: NOW - 10 * DAY });
    // A metric-math alarm: the instance is on its metric; a composite alarm has none.
    expect(run.observations.find((o) => o.incidentKey === arn('disk-db-1'))!.hostname).toBe('i-0a1b2c3d4e5f60003');
    expect(run.observations.find((o) => o.incidentKey === arn('site-down'))!.hostname).toBeNull();
    const history = cw.calls.filter((c) => c.action === 'DescribeAlarmHistory');
    expect(history.length).toBeGreaterThanOrEqual(4);
    expect(history.slice(1).every((c) => typeof c.input.NextToken === 'string')).toBe(true);
    expect(history.every((c) => c.input.HistoryItemType === 'StateUpdate' && c.input.ScanBy === 'TimestampAscending' && c.input.StartDate === (NOW - 30 * DAY) / 1000)).toBe(true);
    expect(cw.calls.every((c) => c.status === 200 && c.accessKeyId === KEY.accessKeyId)).toBe(true);
    // Every call of the SDK went through the import's fetch.
    expect(urls).toHaveLength(cw.calls.length);
    expect(guard.connections.every((c) => c === '127.0.0.1')).toBe(true);
  });

  it('resumes from its cursor: the next run reads only the changes since', async () => {
    const first = await importAll(importer(), setup());
    cw.change('disk-db-1', 'OK', NOW + 1000);
    cw.change('cpu-web-1', 'OK', NOW + 2000);
    const second = await importAll(importer(), setup({ now: NOW + 3_600_000 }), first.cursor);
    expect(lines(second.observations)).toEqual([`${arn('cpu-web-3')} firing ${iso(NOW - 10_000)}`, `${arn('disk-db-1')} resolved ${iso(NOW + 1000)}`, `${arn('cpu-web-1')} resolved ${iso(NOW + 2000)}`].sort());
    const third = await importAll(importer(), setup({ now: NOW + 3_700_000 }), second.cursor);
    expect(third.observations).toEqual([]);
  });

  it('a restart between pages repeats nothing', async () => {
    const once = await importAll(importer(), setup());
    const restarted = await importAll(() => importer(), setup());
    expect(lines(restarted.observations)).toEqual(lines(once.observations));
  });

  it('a wrong secret or an unknown key is CloudWatch\'s refusal in words, without the secret', async () => {
    const wrongSecret = { accessKeyId: KEY.accessKeyId, secretAccessKey: 'not/the/secret/000000000000000000000000' };
    const mismatch = await importAll(importer(), setup({ secret: wrongSecret })).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(PitcrewError);
    expect((mismatch as PitcrewError).code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect((mismatch as PitcrewError).message).toMatch(/^CloudWatch refused DescribeAlarms at http:\/\/127\.0\.0\.1:\d+\/: SignatureDoesNotMatch \(HTTP 403\): The request signature we calculated does not match/);
    const unknown = await importAll(importer(), setup({ secret: { accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: KEY.secretAccessKey } })).catch((e: unknown) => e);
    expect((unknown as PitcrewError).message).toMatch(/^CloudWatch refused DescribeAlarms at http:\/\/127\.0\.0\.1:\d+\/: InvalidClientTokenId \(HTTP 403\): The security token included in the request is invalid\.$/);
    expect(JSON.stringify([(mismatch as Error).message, (unknown as Error).message])).not.toMatch(/not\/the\/secret|cloudwatch\/emulator\/secret/);
  });

  it('the egress policy applies to the SDK\'s calls: an endpoint on a refused network is never reached', async () => {
    // The production policy: no private network allowed, so the emulator on loopback is refused.
    const { policyFetch } = await import('../src/egress/fetch.js');
    const { EgressPolicy } = await import('../src/egress/policy.js');
    const error = await importAll(importer(), setup(), null, policyFetch(new EgressPolicy([]))).catch((e: unknown) => e);
    expect((error as PitcrewError).code).toBe('PITCREW_ERR_TOOL_UNAVAILABLE');
    expect((error as PitcrewError).message).toMatch(/^CloudWatch did not answer DescribeAlarms at http:\/\/127\.0\.0\.1:\d+\/: .*private, loopback or link-local/);
    expect(cw.calls).toEqual([]);
  });

  it('with a roleArn, the role is assumed at STS with the keys (through the same fetch) and CloudWatch is read with its credentials', async () => {
    const roleArn = 'arn:aws:iam::123456789012:role/pitcrew-readonly';
    const sts = await startStsEmulator((issued) => cw.addKey(issued.accessKeyId, issued.secretAccessKey, issued.sessionToken));
    try {
      const user = { accessKeyId: 'AKIAUSERFORROLE00001', secretAccessKey: 'user/secret/for/role/0000000000000000000' };
      sts.addKey(user.accessKeyId, user.secretAccessKey, 'arn:aws:iam::123456789012:user/pitcrew');
      sts.addRole(roleArn, { trusts: ['arn:aws:iam::123456789012:user/pitcrew'], externalId: 'ext-42' });
      const { fetch, urls } = loopbackFetch();
      const run = await importAll(new CloudwatchImporter({ awsEndpoint: cw.url, stsEndpoint: sts.url }), setup({ secret: { ...user, roleArn, externalId: 'ext-42' } }), null, fetch);
      expect(run.observations).toHaveLength(8);
      // Assumed once for the whole import (its pages reuse the role's credentials until they near expiry).
      expect(sts.requests.map((r) => [r.roleArn, r.externalId, r.status])).toEqual([[roleArn, 'ext-42', 200]]);
      expect(cw.calls.every((c) => c.accessKeyId?.startsWith('ASIA'))).toBe(true);
      expect(urls.filter((u) => u.startsWith(sts.url))).toHaveLength(sts.requests.length);
    } finally {
      await sts.close();
    }
  });

  it('an imported alarm has the key, name and host its SNS notification gives', async () => {
    const run = await importAll(importer(), setup());
    // The SNS notification of the same change, signed with a test certificate (as parse.test.ts does).
    const signer = await selfsigned.generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256', notBeforeDate: new Date(NOW - DAY), notAfterDate: new Date(NOW + DAY) });
    const message = {
      AlarmName: 'cpu-web-2', AlarmDescription: null, AWSAccountId: '123456789012', NewStateValue: 'ALARM', NewStateReason: 'Threshold Crossed', StateChangeTime: iso(NOW - 10 * DAY).replace('Z', '+0000'),
      Region: 'EU (Ireland)', AlarmArn: arn('cpu-web-2'), OldStateValue: 'OK', Trigger: { MetricName: 'CPUUtilization', Namespace: 'AWS/EC2', Dimensions: [{ value: 'i-0a1b2c3d4e5f60002', name: 'InstanceId' }] },
    };
    const envelope: Record<string, string> = {
      Type: 'Notification', MessageId: 'e7c82e01-7cd8-5569-9ac1-774d893afc02', TopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', Subject: 'ALARM: "cpu-web-2" in EU (Ireland)',
      Message: JSON.stringify(message), Timestamp: new Date(NOW).toISOString(), SignatureVersion: '2', SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem', UnsubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe',
    };
    envelope.Signature = createSign('RSA-SHA256').update(stringToSign('Notification', envelope)).sign(signer.private, 'base64');
    const parsed = await parseCloudwatchSns(
      { rawBody: JSON.stringify(envelope), body: undefined, headers: { 'x-amz-sns-message-type': 'Notification' }, config: {}, secret: undefined, now: NOW + 1000 },
      { fetchCertificate: async () => signer.cert, get: async () => undefined },
    );
    if (parsed.kind !== 'alerts') throw new Error(JSON.stringify(parsed));
    const webhook = observationOf(parsed.alerts[0]!);
    const imported = run.observations.find((o) => o.incidentKey === arn('cpu-web-2') && o.state === 'firing')!;
    // One incident: the parser's key (AlarmArn) is the import's, and so are name, host (InstanceId), severity and time (StateChangeTime).
    expect(imported).toEqual(webhook);
    expect(webhook.incidentKey).toBe(message.AlarmArn);
  });

  it('imports through the runner\'s read-only fetch, Describe* only; a write the SDK signs is refused before it leaves', async () => {
    const { fetch } = readOnlyFetch(cloudwatchImportNeeds);
    const run = await importAll(importer(), setup(), null, fetch);
    expect(lines(run.observations)).toEqual(lines((await importAll(importer(), setup())).observations));
    expect(new Set(cw.calls.map((c) => c.action))).toEqual(new Set(['DescribeAlarms', 'DescribeAlarmHistory']));
    const asked = cw.calls.length;
    const { CloudWatchClient, SetAlarmStateCommand, PutMetricAlarmCommand } = await import('@aws-sdk/client-cloudwatch');
    const client = new CloudWatchClient({ region: 'eu-west-1', endpoint: cw.url, credentials: KEY, maxAttempts: 1, requestHandler: policyRequestHandler(fetch, AbortSignal.timeout(10_000)) });
    await expect(client.send(new SetAlarmStateCommand({ AlarmName: 'cpu-web-1', StateValue: 'OK', StateReason: 'test' }))).rejects.toThrow(/pitcrew did not send POST http:\/\/127\.0\.0\.1:\d+\/: an import only reads from CloudWatch/);
    await expect(client.send(new PutMetricAlarmCommand({ AlarmName: 'new', EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanThreshold' }))).rejects.toThrow(/pitcrew did not send POST/);
    client.destroy();
    expect(cw.calls).toHaveLength(asked);
  });

  it('the emulator records a write as a failure (what the afterEach assertion would catch)', async () => {
    const { CloudWatchClient, SetAlarmStateCommand } = await import('@aws-sdk/client-cloudwatch');
    const client = new CloudWatchClient({ region: 'eu-west-1', endpoint: cw.url, credentials: KEY, maxAttempts: 1 });
    await expect(client.send(new SetAlarmStateCommand({ AlarmName: 'cpu-web-1', StateValue: 'OK', StateReason: 'test' }))).rejects.toThrow();
    client.destroy();
    expect(cw.failures).toEqual(['SetAlarmState: not one of the reads the import may make']);
    cw.failures.length = 0;
  });
});
