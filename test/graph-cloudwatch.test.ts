import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CloudwatchGraphSource } from '../src/integrations/cloudwatch-sns/graph.js';
import { captureOf, failureOf, HOUR } from './support/graph-capture.js';
import { startCloudwatchEmulator, type CloudwatchEmulator } from './support/cloudwatch-emulator.js';
import { loopbackOnly } from './support/loopback-only.js';
import { pngSize } from './support/png.js';
import { startStsEmulator } from './support/sts-emulator.js';

/*
 * CloudWatch's graph source (src/integrations/cloudwatch-sns/graph.ts), driving the real
 * @aws-sdk/client-cloudwatch through the capture's egress-checked fetch, against the CloudWatch
 * emulator (test/support/cloudwatch-emulator.ts: the SDK's AWS JSON 1.0 protocol, GetMetricData and
 * GetMetricWidgetImage as the API Reference gives them, SigV4 checked with the EC2 emulator's verifier).
 */

const KEY = { accessKeyId: 'AKIAEMULATORCWGRAPH01', secretAccessKey: 'cloudwatch/graph/emulator/secret/00000000' };
const TO = Math.floor(Date.now() / 60_000) * 60_000;
const INSTANCE = 'i-0f672ea50a80cda4b';
/** The alarm of an SNS notification as CloudWatch publishes it (the Seoul example of cloudwatch-sns/parse.test.ts), in eu-west-1. */
const ALARM = {
  AlarmName: 'EC2-CPU', AlarmDescription: null, AWSAccountId: '123456789012', NewStateValue: 'ALARM', NewStateReason: 'Threshold Crossed: 1 out of the last 1 datapoints was greater than the threshold (15.0).',
  StateChangeTime: new Date(TO - 600_000).toISOString().replace('Z', '+0000'), Region: 'EU (Ireland)', AlarmArn: 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:EC2-CPU', OldStateValue: 'OK',
  Trigger: { MetricName: 'CPUUtilization', Namespace: 'AWS/EC2', StatisticType: 'Statistic', Statistic: 'AVERAGE', Unit: null, Dimensions: [{ value: INSTANCE, name: 'InstanceId' }], Period: 300, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanThreshold', Threshold: 15.0, TreatMissingData: 'missing', EvaluateLowSampleCountPercentile: '' },
};

let cw: CloudwatchEmulator;
let guard: ReturnType<typeof loopbackOnly>;

beforeAll(() => {
  // Nothing but the emulators: no instance metadata, no real CloudWatch endpoint.
  guard = loopbackOnly();
});
afterAll(() => guard.restore());

beforeEach(async () => {
  cw = await startCloudwatchEmulator();
  cw.addKey(KEY.accessKeyId, KEY.secretAccessKey);
  cw.metrics.push({ namespace: 'AWS/EC2', name: 'CPUUtilization', dimensions: { InstanceId: INSTANCE }, points: Array.from({ length: 24 }, (_, i) => [TO - 2 * HOUR + i * 300_000, 10 + i] as [number, number]) });
  cw.metrics.push({ namespace: 'AWS/EC2', name: 'CPUUtilization', dimensions: { InstanceId: 'i-0000000000000dead' }, points: [] });
});

afterEach(async () => {
  // Reads only: the emulator records any action it does not serve (a write would be there).
  expect(cw.failures).toEqual([]);
  expect(cw.calls.every((c) => c.action === 'GetMetricData' || c.action === 'GetMetricWidgetImage')).toBe(true);
  await cw.close();
});

const source = () => new CloudwatchGraphSource({ awsEndpoint: cw.url });

describe('CloudWatch graph source', () => {
  it('draws the alarm’s metric over the window with its threshold and the alert marked, after checking it has data', async () => {
    const request = captureOf({ config: { region: 'eu-west-1' }, secret: KEY, to: TO, alert: { payload: ALARM, startedAt: TO - 600_000 } });
    const [graph, ...rest] = await source().capture(request);
    expect(rest).toEqual([]);
    expect(graph).toMatchObject({ kind: 'image', title: 'EC2-CPU', query: `AWS/EC2/CPUUtilization{InstanceId=${INSTANCE}} Average`, contentType: 'image/png', width: 600, height: 300 });
    expect(pngSize((graph as { bytes: Uint8Array }).bytes)).toEqual({ width: 600, height: 300 });
    expect(cw.calls.map((c) => `${c.action} ${c.status}`)).toEqual(['GetMetricData 200', 'GetMetricWidgetImage 200']);
    expect(cw.calls.every((c) => c.accessKeyId === KEY.accessKeyId)).toBe(true);
    expect(cw.calls[0]!.input).toEqual({
      MetricDataQueries: [{ Id: 'm1', MetricStat: { Metric: { Namespace: 'AWS/EC2', MetricName: 'CPUUtilization', Dimensions: [{ Name: 'InstanceId', Value: INSTANCE }] }, Period: 300, Stat: 'Average' }, ReturnData: true }],
      StartTime: (TO - HOUR) / 1000, EndTime: TO / 1000,
    });
    expect(cw.widgets[0]).toMatchObject({
      metrics: [['AWS/EC2', 'CPUUtilization', 'InstanceId', INSTANCE, { stat: 'Average', period: 300 }]], title: 'EC2-CPU', width: 600, height: 300,
      start: new Date(TO - HOUR).toISOString(), end: new Date(TO).toISOString(),
      annotations: { horizontal: [{ label: 'EC2-CPU threshold', value: 15 }], vertical: [{ label: 'alert', value: new Date(TO - 600_000).toISOString() }] },
    });
    // Every call the SDK made went through the capture's fetch.
    expect(request.sent.urls).toHaveLength(2);
  });

  it('reads the region from the alarm when the integration gives none, and a role’s credentials from STS', async () => {
    const sts = await startStsEmulator((issued) => cw.addKey(issued.accessKeyId, issued.secretAccessKey, issued.sessionToken));
    const stsKey = { accessKeyId: 'AKIAEMULATORSTSBASE1', secretAccessKey: 'sts/base/secret/000000000000000000000000' };
    const roleArn = 'arn:aws:iam::123456789012:role/pitcrew-graphs';
    sts.addKey(stsKey.accessKeyId, stsKey.secretAccessKey, 'arn:aws:iam::123456789012:user/pitcrew');
    sts.addRole(roleArn, { trusts: ['arn:aws:iam::123456789012:user/pitcrew'] });
    try {
      const [graph] = await new CloudwatchGraphSource({ awsEndpoint: cw.url, stsEndpoint: sts.url }).capture(captureOf({ config: {}, secret: { ...stsKey, roleArn }, to: TO, alert: { payload: ALARM } }));
      expect(graph!.kind).toBe('image');
      expect(cw.calls.every((c) => c.status === 200 && c.accessKeyId !== stsKey.accessKeyId)).toBe(true);
      expect(sts.requests.map((r) => `${r.roleArn} ${r.status}`)).toEqual([`${roleArn} 200`]);
    } finally {
      await sts.close();
    }
  });

  it('a wrong secret is CloudWatch’s refusal in words, without the secret', async () => {
    const error = await failureOf(source().capture(captureOf({ config: { region: 'eu-west-1' }, secret: { ...KEY, secretAccessKey: 'not/the/secret/000000000000000000000000' }, to: TO, alert: { payload: ALARM } })));
    expect(error.code).toBe('PITCREW_ERR_TOOL_REFUSED');
    expect(error.message).toMatch(/^CloudWatch refused GetMetricData at http:\/\/127\.0\.0\.1:\d+\/: SignatureDoesNotMatch \(HTTP 403\): The request signature we calculated does not match/);
    expect(error.message).not.toMatch(/not\/the\/secret|cloudwatch\/graph\/emulator/);
  });

  it('an invalid widget is CloudWatch’s ValidationError; a metric without data in the window is no data, not a blank picture', async () => {
    const invalid = await failureOf(source().capture(captureOf({ config: { region: 'eu-west-1' }, secret: KEY, to: TO, graphs: ['{"metrics": [["AWS/EC2"]]}'] })));
    expect(invalid.message).toMatch(/^CloudWatch refused GetMetricWidgetImage at http:\/\/127\.0\.0\.1:\d+\/: ValidationException \(HTTP 400\): The parameter MetricWidget is not valid: metrics\[0\]/);
    const quiet = { ...ALARM, Trigger: { ...ALARM.Trigger, Dimensions: [{ value: 'i-0000000000000dead', name: 'InstanceId' }] } };
    const empty = await failureOf(source().capture(captureOf({ config: { region: 'eu-west-1' }, secret: KEY, to: TO, alert: { payload: quiet } })));
    expect(empty.message).toBe(`CloudWatch refused GetMetricData at ${cw.url}/: no data for AWS/EC2/CPUUtilization{InstanceId=i-0000000000000dead} Average between ${new Date(TO - HOUR).toISOString()} and ${new Date(TO).toISOString()}`);
    expect(cw.calls.filter((c) => c.action === 'GetMetricWidgetImage' && c.status === 200)).toEqual([]);
  });
});
