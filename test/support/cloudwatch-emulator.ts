import { randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAuthorization, rawRequestOf, sigV4, type RawRequest } from './ec2-emulator.js';
import { solidPng } from './png.js';

/**
 * An emulator of Amazon CloudWatch's DescribeAlarms and DescribeAlarmHistory as the official SDK
 * (@aws-sdk/client-cloudwatch 3.1164) calls them, for the tests of
 * src/integrations/cloudwatch-sns/import.ts. Where each behaviour comes from:
 *
 * - The wire protocol: the SDK speaks AWS JSON 1.0 to CloudWatch (its runtime config: protocol
 *   AwsJson1_0Protocol, serviceTarget "GraniteServiceVersion20100801", awsQueryCompatible): POST /
 *   with `X-Amz-Target: GraniteServiceVersion20100801.<Action>`, `Content-Type:
 *   application/x-amz-json-1.0`, `x-amzn-query-mode: true`, the input as JSON, timestamps as epoch
 *   seconds (@aws-sdk/core AwsJsonRpcProtocol.serializeRequest, JsonCodec default timestamp format).
 *   Errors are JSON {__type, message} with `x-amzn-query-error: <Code>;<Sender|Receiver>`, from which
 *   the SDK takes the error's name (ProtocolLib.setQueryCompatError / loadJsonRpcErrorCode).
 * - The actions (CloudWatch API Reference, DescribeAlarms, DescribeAlarmHistory, AlarmHistoryItem,
 *   MetricAlarm): MaxRecords 1-100, NextToken paging; DescribeAlarmHistory HistoryItemType,
 *   StartDate/EndDate, ScanBy TimestampAscending|TimestampDescending (default descending), AlarmTypes
 *   (omitted: metric alarms only); items {AlarmName, AlarmType, Timestamp, HistoryItemType,
 *   HistorySummary "Alarm updated from OK to ALARM", HistoryData JSON {version, oldState:{stateValue,
 *   stateReason}, newState:{...}}} (the AWS CLI's describe-alarm-history example). DescribeAlarms
 *   AlarmNames (at most 100) or AlarmNamePrefix, StateValue, AlarmTypes; {MetricAlarms, CompositeAlarms, NextToken}.
 * - Signature Version 4 with the signing name "monitoring", checked by recomputing it from the raw
 *   request (test/support/ec2-emulator.ts's verifier, itself checked against the AWS SigV4 test
 *   suite). CloudWatch's common errors (API Reference, "Common Errors"): InvalidClientTokenId 403 "The
 *   security token included in the request is invalid.", SignatureDoesNotMatch 403,
 *   MissingAuthenticationToken 403, RequestExpired 400, ValidationError 400.
 *
 * - The graph capture's reads (src/integrations/cloudwatch-sns/graph.ts; API Reference GetMetricData,
 *   MetricDataQuery, MetricDataResult, GetMetricWidgetImage, and "GetMetricWidgetImage: Metric Widget
 *   Structure and Syntax"): GetMetricData {MetricDataQueries:[{Id (^[a-z][a-zA-Z0-9_]*$), MetricStat:
 *   {Metric:{Namespace, MetricName, Dimensions:[{Name, Value}]}, Period (a multiple of 60), Stat},
 *   ReturnData}], StartTime, EndTime} -> {MetricDataResults:[{Id, Label, Timestamps, Values,
 *   StatusCode:"Complete"}], Messages:[]}, newest first; a metric without data in the window has
 *   empty Timestamps and Values. GetMetricWidgetImage {MetricWidget (JSON), OutputFormat "png"} ->
 *   {MetricWidgetImage: the PNG, base64 in the JSON protocol (a blob)}, width and height 1-2000
 *   (defaults 600 x 400); CloudWatch draws a metric without data as a blank graph (boto/boto3#1744).
 *
 * The emulator's own choice: the __type strings of the JSON errors (coral's) and the wording of
 * ValidationError. Pages hold at most `maxPage` items whatever MaxRecords asks. Every other action
 * (PutMetricAlarm, SetAlarmState, DeleteAlarms, ...) and every input member this emulator does not
 * know is recorded in `failures`.
 */

export interface EmulatedAlarm {
  name: string;
  arn: string;
  type: 'MetricAlarm' | 'CompositeAlarm';
  instanceId?: string;
  /** A metric-math alarm: the dimensions are on its metrics, not on the alarm. */
  math?: boolean;
  state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';
  /** When the state last changed (ms). */
  since: number;
}

interface HistoryItem {
  name: string;
  type: 'MetricAlarm' | 'CompositeAlarm';
  at: number;
  from: string;
  to: string;
  id: string;
}

export interface CloudwatchCall {
  action: string;
  input: Record<string, unknown>;
  accessKeyId: string | null;
  status: number;
}

/** A metric's datapoints ([ms, value]) as CloudWatch holds them for one statistic. */
export interface EmulatedMetric {
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
  points: Array<[number, number]>;
}

export interface CloudwatchEmulator {
  url: string;
  account: string;
  region: string;
  calls: CloudwatchCall[];
  failures: string[];
  maxPage: number;
  metrics: EmulatedMetric[];
  /** The MetricWidget of every image drawn, parsed. */
  widgets: Record<string, unknown>[];
  addKey(accessKeyId: string, secretAccessKey: string, sessionToken?: string): void;
  /** An alarm, in a state since a time (ms). */
  alarm(alarm: { name: string; instanceId?: string; math?: boolean; composite?: boolean; state: EmulatedAlarm['state']; since: number }): EmulatedAlarm;
  /** The alarm changes state at a time (ms): a history item. */
  change(name: string, to: EmulatedAlarm['state'], at: number): void;
  /** The alarm is deleted; its history stays. */
  remove(name: string): void;
  close(): Promise<void>;
}

const TARGET_PREFIX = 'GraniteServiceVersion20100801.';
const MAX_SKEW_MS = 15 * 60 * 1000;
const INPUTS: Record<string, Set<string>> = {
  DescribeAlarms: new Set(['AlarmNames', 'AlarmNamePrefix', 'AlarmTypes', 'ChildrenOfAlarmName', 'ParentsOfAlarmName', 'StateValue', 'ActionPrefix', 'MaxRecords', 'NextToken']),
  DescribeAlarmHistory: new Set(['AlarmName', 'AlarmContributorId', 'AlarmTypes', 'HistoryItemType', 'StartDate', 'EndDate', 'MaxRecords', 'NextToken', 'ScanBy']),
  GetMetricData: new Set(['MetricDataQueries', 'StartTime', 'EndTime', 'NextToken', 'ScanBy', 'MaxDatapoints', 'LabelOptions']),
  GetMetricWidgetImage: new Set(['MetricWidget', 'OutputFormat']),
};
const HISTORY_TYPES = new Set(['ConfigurationUpdate', 'StateUpdate', 'Action', 'AlarmContributorStateUpdate', 'AlarmContributorAction']);

class AwsError extends Error {
  constructor(readonly status: number, readonly code: string, readonly type: string, message: string, readonly fault: 'Sender' | 'Receiver' = 'Sender') {
    super(message);
  }
}

const validation = (message: string) => new AwsError(400, 'ValidationError', 'com.amazonaws.cloudwatch#InvalidParameterValueException', message);

function amzDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : null;
}

export async function startCloudwatchEmulator(options: { region?: string; account?: string } = {}): Promise<CloudwatchEmulator> {
  const keys = new Map<string, { secretAccessKey: string; sessionToken?: string }>();
  const alarms = new Map<string, EmulatedAlarm>();
  const history: HistoryItem[] = [];
  const tokens = new Map<string, { action: string; offset: number }>();
  let sequence = 0;

  function authenticate(raw: RawRequest, call: CloudwatchCall): void {
    const header = (name: string) => raw.headers.find(([n]) => n.toLowerCase() === name)?.[1];
    const authorization = header('authorization');
    if (authorization === undefined) throw new AwsError(403, 'MissingAuthenticationToken', 'com.amazon.coral.service#MissingAuthenticationTokenException', 'Request is missing Authentication Token');
    const auth = parseAuthorization(authorization);
    if (!auth) throw new AwsError(400, 'IncompleteSignature', 'com.amazon.coral.service#IncompleteSignatureException', 'The request signature does not conform to AWS standards.');
    call.accessKeyId = auth.accessKeyId;
    const date = header('x-amz-date');
    const signedAt = date === undefined ? null : amzDate(date);
    if (date === undefined || signedAt === null) throw new AwsError(400, 'IncompleteSignature', 'com.amazon.coral.service#IncompleteSignatureException', "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
    if (Math.abs(Date.now() - signedAt) > MAX_SKEW_MS) throw new AwsError(400, 'RequestExpired', 'com.amazon.coral.service#RequestExpired', 'Request has expired.');
    const key = keys.get(auth.accessKeyId);
    if (!key) throw new AwsError(403, 'InvalidClientTokenId', 'com.amazon.coral.service#UnrecognizedClientException', 'The security token included in the request is invalid.');
    const mismatch = new AwsError(403, 'SignatureDoesNotMatch', 'com.amazon.coral.service#InvalidSignatureException', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.');
    if (auth.service !== 'monitoring' || auth.region !== emulator.region || auth.date !== date.slice(0, 8) || auth.terminator !== 'aws4_request' || !auth.signedHeaders.includes('host')) throw mismatch;
    if ((header('x-amz-security-token') ?? null) !== (key.sessionToken ?? null)) throw new AwsError(403, 'InvalidClientTokenId', 'com.amazon.coral.service#UnrecognizedClientException', 'The security token included in the request is invalid.');
    const { signature } = sigV4(raw, { signedHeaders: auth.signedHeaders, amzDate: date, scope: `${auth.date}/${auth.region}/${auth.service}/${auth.terminator}`, secretAccessKey: key.secretAccessKey });
    const given = Buffer.from(auth.signature);
    const expected = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw mismatch;
  }

  function maxRecords(input: Record<string, unknown>, fallback: number): number {
    if (input.MaxRecords === undefined) return Math.min(fallback, emulator.maxPage);
    const n = Number(input.MaxRecords);
    if (!Number.isInteger(n) || n < 1 || n > 100) throw validation(`1 validation error detected: Value '${String(input.MaxRecords)}' at 'maxRecords' failed to satisfy constraint: Member must have value between 1 and 100`);
    return Math.min(n, emulator.maxPage);
  }

  function paged<T>(action: string, input: Record<string, unknown>, items: T[], size: number): { page: T[]; next?: string } {
    let offset = 0;
    if (input.NextToken !== undefined) {
      const known = tokens.get(String(input.NextToken));
      if (!known || known.action !== action) throw new AwsError(400, 'InvalidNextToken', 'com.amazonaws.cloudwatch#InvalidNextToken', 'The next token specified is invalid.');
      offset = known.offset;
    }
    const page = items.slice(offset, offset + size);
    if (offset + size >= items.length) return { page };
    const next = randomUUID().replaceAll('-', '');
    tokens.set(next, { action, offset: offset + size });
    return { page, next };
  }

  const types = (input: Record<string, unknown>): string[] => (Array.isArray(input.AlarmTypes) && input.AlarmTypes.length > 0 ? input.AlarmTypes.map(String) : ['MetricAlarm']);

  function alarmJson(alarm: EmulatedAlarm): Record<string, unknown> {
    const common = {
      AlarmName: alarm.name, AlarmArn: alarm.arn, AlarmDescription: `${alarm.name} (pitcrew test)`, AlarmConfigurationUpdatedTimestamp: 1_700_000_000, ActionsEnabled: true,
      OKActions: [], AlarmActions: [`arn:aws:sns:${emulator.region}:${emulator.account}:ops`], InsufficientDataActions: [], StateValue: alarm.state, StateReason: 'Threshold Crossed',
      StateUpdatedTimestamp: alarm.since / 1000, StateTransitionedTimestamp: alarm.since / 1000,
    };
    if (alarm.type === 'CompositeAlarm') return { ...common, AlarmRule: 'ALARM(cpu) OR ALARM(disk)' };
    const dimensions = alarm.instanceId ? [{ Name: 'InstanceId', Value: alarm.instanceId }] : [];
    if (alarm.math) {
      return { ...common, EvaluationPeriods: 1, Threshold: 90, ComparisonOperator: 'GreaterThanThreshold', Dimensions: [], Metrics: [{ Id: 'e1', Expression: 'm1 * 100', ReturnData: true }, { Id: 'm1', MetricStat: { Metric: { Namespace: 'AWS/EC2', MetricName: 'CPUUtilization', Dimensions: dimensions }, Period: 300, Stat: 'Average' }, ReturnData: false }] };
    }
    return { ...common, MetricName: 'CPUUtilization', Namespace: 'AWS/EC2', Statistic: 'Average', Dimensions: dimensions, Period: 300, EvaluationPeriods: 1, Threshold: 90, ComparisonOperator: 'GreaterThanThreshold' };
  }

  function describeAlarms(input: Record<string, unknown>): Record<string, unknown> {
    const names = Array.isArray(input.AlarmNames) ? input.AlarmNames.map(String) : undefined;
    if (names && names.length > 100) throw validation('1 validation error detected: Value at \'alarmNames\' failed to satisfy constraint: Member must have length less than or equal to 100');
    if (names && input.AlarmNamePrefix !== undefined) throw new AwsError(400, 'InvalidParameterCombination', 'com.amazonaws.cloudwatch#InvalidParameterCombinationException', 'AlarmNames and AlarmNamePrefix cannot both be specified.');
    const wanted = types(input);
    const matching = [...alarms.values()]
      .filter((a) => wanted.includes(a.type) && (!names || names.includes(a.name)) && (input.StateValue === undefined || a.state === input.StateValue) && (input.AlarmNamePrefix === undefined || a.name.startsWith(String(input.AlarmNamePrefix))))
      .sort((a, b) => a.name.localeCompare(b.name));
    const { page, next } = paged('DescribeAlarms', input, matching, maxRecords(input, 50));
    return { MetricAlarms: page.filter((a) => a.type === 'MetricAlarm').map(alarmJson), CompositeAlarms: page.filter((a) => a.type === 'CompositeAlarm').map(alarmJson), ...(next ? { NextToken: next } : {}) };
  }

  function describeAlarmHistory(input: Record<string, unknown>): Record<string, unknown> {
    if (input.HistoryItemType !== undefined && !HISTORY_TYPES.has(String(input.HistoryItemType))) throw validation(`1 validation error detected: Value '${String(input.HistoryItemType)}' at 'historyItemType' failed to satisfy constraint: Member must satisfy enum value set`);
    if (input.ScanBy !== undefined && input.ScanBy !== 'TimestampAscending' && input.ScanBy !== 'TimestampDescending') throw validation('ScanBy must be TimestampAscending or TimestampDescending');
    for (const field of ['StartDate', 'EndDate']) if (input[field] !== undefined && typeof input[field] !== 'number') throw new AwsError(400, 'SerializationException', 'com.amazon.coral.service#SerializationException', `${field} is not epoch seconds`);
    const start = input.StartDate === undefined ? -Infinity : Number(input.StartDate) * 1000;
    const end = input.EndDate === undefined ? Infinity : Number(input.EndDate) * 1000;
    const wanted = types(input);
    const ascending = input.ScanBy === 'TimestampAscending';
    const matching = history
      .filter((h) => (input.HistoryItemType === undefined || input.HistoryItemType === 'StateUpdate') && wanted.includes(h.type) && (input.AlarmName === undefined || h.name === input.AlarmName) && h.at >= start && h.at <= end)
      .sort((a, b) => (ascending ? a.at - b.at || a.id.localeCompare(b.id) : b.at - a.at || b.id.localeCompare(a.id)));
    const { page, next } = paged('DescribeAlarmHistory', input, matching, maxRecords(input, 100));
    return {
      AlarmHistoryItems: page.map((h) => ({
        AlarmName: h.name, AlarmType: h.type, Timestamp: h.at / 1000, HistoryItemType: 'StateUpdate', HistorySummary: `Alarm updated from ${h.from} to ${h.to}`,
        HistoryData: JSON.stringify({ version: '1.0', oldState: { stateValue: h.from, stateReason: 'previous' }, newState: { stateValue: h.to, stateReason: h.to === 'ALARM' ? 'Threshold Crossed: 1 datapoint [95.0] was greater than the threshold (90.0).' : 'Threshold Crossed: 1 datapoint [12.0] was not greater than the threshold (90.0).' } }),
      })),
      ...(next ? { NextToken: next } : {}),
    };
  }

  function getMetricData(input: Record<string, unknown>): Record<string, unknown> {
    const queries = Array.isArray(input.MetricDataQueries) ? input.MetricDataQueries.filter((q): q is Record<string, unknown> => typeof q === 'object' && q !== null) : [];
    if (queries.length === 0 || queries.length > 500) throw validation('The parameter MetricDataQueries must contain between 1 and 500 queries.');
    if (typeof input.StartTime !== 'number' || typeof input.EndTime !== 'number') throw validation('The parameters StartTime and EndTime are required.');
    const start = input.StartTime * 1000;
    const end = input.EndTime * 1000;
    const results = queries.map((query, index) => {
      const id = String(query.Id);
      if (!/^[a-z][a-zA-Z0-9_]*$/.test(id)) throw validation(`The value ${id} for parameter MetricDataQueries.member.${index + 1}.Id is not valid.`);
      const stat = (query.MetricStat ?? {}) as { Metric?: { Namespace?: string; MetricName?: string; Dimensions?: Array<{ Name: string; Value: string }> }; Period?: number; Stat?: string };
      if (typeof stat.Period !== 'number' || stat.Period <= 0 || stat.Period % 60 !== 0) throw validation(`The parameter MetricDataQueries.member.${index + 1}.MetricStat.Period must be a multiple of 60.`);
      const wanted = Object.fromEntries((stat.Metric?.Dimensions ?? []).map((d) => [d.Name, d.Value]));
      const metric = emulator.metrics.find((m) => m.namespace === stat.Metric?.Namespace && m.name === stat.Metric?.MetricName && JSON.stringify(Object.entries(m.dimensions).sort()) === JSON.stringify(Object.entries(wanted).sort()));
      const points = (metric?.points ?? []).filter(([at]) => at >= start && at < end).sort((a, b) => b[0] - a[0]);
      return { Id: id, Label: stat.Metric?.MetricName ?? id, Timestamps: points.map(([at]) => at / 1000), Values: points.map(([, v]) => v), StatusCode: 'Complete' };
    });
    return { MetricDataResults: results, Messages: [] };
  }

  function getMetricWidgetImage(input: Record<string, unknown>): Record<string, unknown> {
    if (input.OutputFormat !== undefined && input.OutputFormat !== 'png') throw validation(`The parameter OutputFormat must be png, not ${String(input.OutputFormat)}.`);
    let widget: unknown;
    try {
      widget = JSON.parse(String(input.MetricWidget));
    } catch {
      throw validation('The parameter MetricWidget must be a JSON document.');
    }
    const record = typeof widget === 'object' && widget !== null ? (widget as Record<string, unknown>) : {};
    if (!Array.isArray(record.metrics)) throw validation("The parameter MetricWidget is not valid: Should have required property 'metrics'");
    for (const [index, metric] of record.metrics.entries()) {
      const entries = Array.isArray(metric) ? metric : [];
      const strings = entries.filter((e) => typeof e === 'string');
      const expression = entries.length === 1 && typeof entries[0] === 'object' && entries[0] !== null && typeof (entries[0] as { expression?: unknown }).expression === 'string';
      if (!expression && (strings.length < 2 || strings.length % 2 !== 0)) throw validation(`The parameter MetricWidget is not valid: metrics[${index}] should be [Namespace, MetricName, (DimensionName, DimensionValue)..., {options}]`);
    }
    const size = (value: unknown, fallback: number, name: string) => {
      const n = value === undefined ? fallback : Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 2000) throw validation(`The parameter MetricWidget is not valid: ${name} must be between 1 and 2000`);
      return n;
    };
    const png = solidPng(size(record.width, 600, 'width'), size(record.height, 400, 'height'), [0x1f, 0x77, 0xb4]);
    emulator.widgets.push(record);
    return { MetricWidgetImage: png.toString('base64') };
  }

  const ACTIONS: Record<string, (input: Record<string, unknown>) => Record<string, unknown>> = { DescribeAlarms: describeAlarms, DescribeAlarmHistory: describeAlarmHistory, GetMetricData: getMetricData, GetMetricWidgetImage: getMetricWidgetImage };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const raw = rawRequestOf(req, body);
      const target = String(req.headers['x-amz-target'] ?? '');
      const action = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : target;
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        input = {};
      }
      const call: CloudwatchCall = { action, input, accessKeyId: null, status: 0 };
      emulator.calls.push(call);
      const requestId = randomUUID();
      const send = (status: number, payload: unknown, extra: Record<string, string> = {}) => {
        call.status = status;
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId, date: new Date().toUTCString(), ...extra }).end(JSON.stringify(payload));
      };
      try {
        authenticate(raw, call);
        if (req.method !== 'POST' || req.headers['content-type'] !== 'application/x-amz-json-1.0' || !target.startsWith(TARGET_PREFIX)) {
          emulator.failures.push(`${req.method} ${req.url} (${target || 'no X-Amz-Target'}): not the JSON protocol the SDK speaks`);
          throw new AwsError(400, 'UnknownOperationException', 'com.amazon.coral.service#UnknownOperationException', 'Unknown operation');
        }
        const known = INPUTS[action];
        if (!known) {
          emulator.failures.push(`${action}: not one of the reads the import may make`);
          throw new AwsError(400, 'UnknownOperationException', 'com.amazon.coral.service#UnknownOperationException', `${action} is not an operation this emulator answers`);
        }
        for (const member of Object.keys(input)) if (!known.has(member)) emulator.failures.push(`${action} with a member this emulator does not know: ${member}`);
        send(200, ACTIONS[action]!(input));
      } catch (error) {
        if (!(error instanceof AwsError)) throw error;
        send(error.status, { __type: error.type, message: error.message }, { 'x-amzn-query-error': `${error.code};${error.fault}` });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const emulator: CloudwatchEmulator = {
    url: `http://127.0.0.1:${port}`,
    account: options.account ?? '123456789012',
    region: options.region ?? 'eu-west-1',
    calls: [],
    failures: [],
    maxPage: 2,
    metrics: [],
    widgets: [],
    addKey(accessKeyId, secretAccessKey, sessionToken) {
      keys.set(accessKeyId, sessionToken === undefined ? { secretAccessKey } : { secretAccessKey, sessionToken });
    },
    alarm({ name, instanceId, math, composite, state, since }) {
      const alarm: EmulatedAlarm = { name, arn: `arn:aws:cloudwatch:${emulator.region}:${emulator.account}:alarm:${name}`, type: composite ? 'CompositeAlarm' : 'MetricAlarm', ...(instanceId ? { instanceId } : {}), ...(math ? { math } : {}), state, since };
      alarms.set(name, alarm);
      return alarm;
    },
    change(name, to, at) {
      const alarm = alarms.get(name);
      if (!alarm) throw new Error(`cloudwatch emulator: no alarm ${name}`);
      sequence += 1;
      history.push({ name, type: alarm.type, at, from: alarm.state, to, id: String(sequence).padStart(8, '0') });
      alarm.state = to;
      alarm.since = at;
    },
    remove(name) {
      alarms.delete(name);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
