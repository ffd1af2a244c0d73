import type { CompositeAlarm, MetricAlarm } from '@aws-sdk/client-cloudwatch';
import type { Secret } from '../../credentials/schema.js';
import type { AlarmObservation, Importer, ImportPage, ImportRequest } from '../observation.js';
import { importSecretError, importSettingError, readCursor, toolRefused, toolUnavailable, windowEnd, writeCursor } from '../tool-api.js';
import { isRecord } from '../values.js';
import { CloudwatchClients } from './client.js';

export { policyRequestHandler } from './client.js';

/*
 * CloudWatch alarms and their state history, read with the stored AWS credential through the official
 * SDK (@aws-sdk/client-cloudwatch): DescribeAlarms and DescribeAlarmHistory only, the two actions of
 * the IAM policy docs/incidents-import.md gives (cloudwatch:DescribeAlarms,
 * cloudwatch:DescribeAlarmHistory). With a roleArn, the role is assumed first (sts:AssumeRole).
 *
 * Every request the SDK makes, signed, goes out through the import's fetch (requestHandler below):
 * the tenant's egress policy and the import's rate limit apply to it as to every other tool's call.
 *
 * - DescribeAlarmHistory (HistoryItemType StateUpdate, StartDate, EndDate, ScanBy TimestampAscending,
 *   MaxRecords <= 100, NextToken; AlarmTypes both, else only metric alarms are listed): each change
 *   to ALARM is a firing, each to OK a resolution, at the item's Timestamp; INSUFFICIENT_DATA says
 *   nothing about the host (as the SNS parser: not an observation). HistoryData is JSON
 *   {oldState:{stateValue}, newState:{stateValue}} (CloudWatch API Reference, AlarmHistoryItem, and
 *   the AWS CLI's describe-alarm-history example). CloudWatch keeps alarm history for 30 days.
 * - DescribeAlarms: the ARN and dimensions of the alarms of each page of history (by AlarmNames,
 *   at most 100), and on a first import the alarms in ALARM since before the look-back.
 *
 * Key: the AlarmArn (observation.ts), as in the SNS notification. An alarm deleted since has no ARN
 * to read: it is made from the account and region of the others (arn:<partition>:cloudwatch:<region>:
 * <account>:alarm:<name>, the documented ARN format). Host: the InstanceId dimension, of the metric
 * or of a metric-math alarm's metrics, as cloudwatch-sns/parse.ts reads it. No severity.
 */

const TOOL = 'CloudWatch';
const REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/;

export interface CloudwatchImportSettings {
  /** PITCREW_AWS_ENDPOINT_URL: an AWS-compatible endpoint instead of CloudWatch's own. */
  awsEndpoint?: string | undefined;
  /** PITCREW_AWS_STS_ENDPOINT_URL: where a credential's role is assumed. */
  stsEndpoint?: string | undefined;
  /** History items and alarms per call (MaxRecords, at most 100). */
  pageSize?: number;
}

interface CloudwatchCursor {
  phase: 'alarms' | 'history';
  from: number;
  to: number | null;
  token: string | null;
  /** "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:", once an alarm's ARN has been seen. */
  arnPrefix: string | null;
}

function isCursor(state: Record<string, unknown>): state is Record<string, unknown> & CloudwatchCursor {
  return (
    (state.phase === 'alarms' || state.phase === 'history') &&
    typeof state.from === 'number' &&
    (state.to === null || typeof state.to === 'number') &&
    (state.token === null || typeof state.token === 'string') &&
    (state.arnPrefix === null || typeof state.arnPrefix === 'string')
  );
}

type Alarm = MetricAlarm | CompositeAlarm;

export class CloudwatchImporter implements Importer {
  private readonly pageSize: number;
  private readonly clients: CloudwatchClients;

  constructor(private readonly settings: CloudwatchImportSettings = {}) {
    this.pageSize = Math.min(settings.pageSize ?? 100, 100);
    this.clients = new CloudwatchClients(settings);
  }

  async importPage(request: ImportRequest): Promise<ImportPage> {
    const region = regionOf(request.config);
    const secret = awsSecret(request.secret);
    const state: CloudwatchCursor = readCursor(TOOL, request.cursor, isCursor) ?? { phase: 'alarms', from: request.since, to: null, token: null, arnPrefix: null };
    const to = state.to ?? windowEnd(state.from, request.now);
    const { DescribeAlarmHistoryCommand, DescribeAlarmsCommand } = await import('@aws-sdk/client-cloudwatch');
    const client = await this.clients.client(region, secret, request.fetch, request.signal);
    const send = sender(this.settings.awsEndpoint ?? `https://monitoring.${region}.amazonaws.com`, credentialParts(secret), request.signal);
    try {
      if (state.phase === 'alarms') {
        // A first import: the alarms in ALARM since before the look-back, which no history item of it shows.
        const page = await send('DescribeAlarms', () => client.send(new DescribeAlarmsCommand({ AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], StateValue: 'ALARM', MaxRecords: this.pageSize, ...(state.token ? { NextToken: state.token } : {}) }), { abortSignal: request.signal }));
        const alarms: Alarm[] = [...(page.MetricAlarms ?? []), ...(page.CompositeAlarms ?? [])];
        const arnPrefix = state.arnPrefix ?? prefixOf(alarms);
        const observations = alarms.flatMap((alarm) => {
          const since = (alarm.StateTransitionedTimestamp ?? alarm.StateUpdatedTimestamp)?.getTime();
          return since !== undefined && since < state.from && alarm.AlarmArn && alarm.AlarmName ? [observe(alarm.AlarmName, alarm.AlarmArn, alarm, 'firing', since)] : [];
        });
        const next: CloudwatchCursor = page.NextToken ? { ...state, to, token: page.NextToken, arnPrefix } : { ...state, to, token: null, phase: 'history', arnPrefix };
        return { observations, cursor: writeCursor(next), more: true };
      }

      const page = await send('DescribeAlarmHistory', () =>
        client.send(
          new DescribeAlarmHistoryCommand({ HistoryItemType: 'StateUpdate', AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], StartDate: new Date(state.from), EndDate: new Date(to), ScanBy: 'TimestampAscending', MaxRecords: this.pageSize, ...(state.token ? { NextToken: state.token } : {}) }),
          { abortSignal: request.signal },
        ),
      );
      const changes = (page.AlarmHistoryItems ?? []).flatMap((item) => {
        const at = item.Timestamp?.getTime();
        // The window is [from, to): a change on the boundary is read once.
        if (at === undefined || at < state.from || at >= to || !item.AlarmName) return [];
        const value = newState(item.HistoryData);
        return value === 'ALARM' || value === 'OK' ? [{ name: item.AlarmName, state: value === 'ALARM' ? ('firing' as const) : ('resolved' as const), at }] : [];
      });
      const names = [...new Set(changes.map((c) => c.name))];
      const alarms = new Map<string, Alarm>();
      if (names.length > 0) {
        const described = await send('DescribeAlarms', () => client.send(new DescribeAlarmsCommand({ AlarmNames: names, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], MaxRecords: 100 }), { abortSignal: request.signal }));
        for (const alarm of [...(described.MetricAlarms ?? []), ...(described.CompositeAlarms ?? [])]) if (alarm.AlarmName) alarms.set(alarm.AlarmName, alarm);
      }
      let arnPrefix = state.arnPrefix ?? prefixOf([...alarms.values()]);
      if (arnPrefix === null && names.some((n) => !alarms.has(n))) {
        // Only deleted alarms on this page, and no ARN seen yet: any alarm of the account and region tells them.
        const any = await send('DescribeAlarms', () => client.send(new DescribeAlarmsCommand({ AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], MaxRecords: 1 }), { abortSignal: request.signal }));
        arnPrefix = prefixOf([...(any.MetricAlarms ?? []), ...(any.CompositeAlarms ?? [])]);
      }
      const observations: AlarmObservation[] = [];
      for (const change of changes) {
        const alarm = alarms.get(change.name);
        const arn = alarm?.AlarmArn ?? (arnPrefix === null ? undefined : `${arnPrefix}${change.name}`);
        // An alarm gone, in an account where no alarm is left to tell its ARN, cannot be keyed.
        if (arn !== undefined) observations.push(observe(change.name, arn, alarm, change.state, change.at));
      }
      if (page.NextToken) return { observations, cursor: writeCursor({ ...state, to, token: page.NextToken, arnPrefix }), more: true };
      const next: CloudwatchCursor = { phase: 'history', from: to, to: null, token: null, arnPrefix };
      return { observations, cursor: writeCursor(next), more: false };
    } finally {
      client.destroy();
    }
  }
}

function observe(name: string, arn: string, alarm: Alarm | undefined, state: 'firing' | 'resolved', at: number): AlarmObservation {
  return { incidentKey: arn, alarmName: name, hostname: alarm && 'Dimensions' in alarm ? instanceOf(alarm as MetricAlarm) ?? null : null, severity: null, state, at };
}

/** The InstanceId dimension of the metric, or of a metric-math alarm's metrics (the first one wins), as the SNS parser reads it. */
function instanceOf(alarm: MetricAlarm): string | undefined {
  const lists = [alarm.Dimensions, ...(alarm.Metrics ?? []).map((m) => m.MetricStat?.Metric?.Dimensions)];
  for (const list of lists) for (const dimension of list ?? []) if (dimension.Name === 'InstanceId' && dimension.Value) return dimension.Value;
  return undefined;
}

function newState(historyData: string | undefined): string | undefined {
  try {
    const data: unknown = JSON.parse(historyData ?? '');
    return isRecord(data) && isRecord(data.newState) && typeof data.newState.stateValue === 'string' ? data.newState.stateValue : undefined;
  } catch {
    return undefined;
  }
}

function prefixOf(alarms: Alarm[]): string | null {
  for (const alarm of alarms) {
    const match = /^(arn:[^:]+:cloudwatch:[^:]+:\d{12}:alarm:)/.exec(alarm.AlarmArn ?? '');
    if (match) return match[1]!;
  }
  return null;
}

/** config.region, else the region of the integration's SNS topic (config.topicArns). */
export function regionOf(config: Record<string, unknown>, settingError: (tool: string, field: string, message: string) => Error = importSettingError): string {
  const topics = typeof config.topicArns === 'string' ? [config.topicArns] : Array.isArray(config.topicArns) ? config.topicArns : [];
  const fromTopic = topics.map((arn) => (typeof arn === 'string' ? arn.split(':')[3] : undefined)).find((r) => r !== undefined && REGION.test(r));
  const region = typeof config.region === 'string' ? config.region.trim() : fromTopic;
  if (region === undefined || !REGION.test(region)) throw settingError(TOOL, 'region', 'region must be the AWS region of the alarms, e.g. eu-west-1 (or give the topicArns the alarms publish to)');
  return region;
}

function awsSecret(secret: unknown): Secret<'aws'> {
  if (isRecord(secret) && typeof secret.accessKeyId === 'string' && typeof secret.secretAccessKey === 'string') return secret as Secret<'aws'>;
  throw importSecretError(TOOL, 'the stored AWS credential ({accessKeyId, secretAccessKey[, sessionToken, roleArn, externalId]})');
}

/** Every part of an AWS credential, blotted out of what a message quotes. */
export function credentialParts(secret: Secret<'aws'>): Array<string | undefined> {
  return [secret.secretAccessKey, secret.sessionToken, secret.externalId, secret.accessKeyId];
}

/** How one read sends its calls to CloudWatch at `endpoint`: a failure said in AWS's words (`refusal`), an abort passed on as it is. */
export function sender(endpoint: string, secrets: Array<string | undefined>, signal: AbortSignal) {
  return async <T>(call: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (signal.aborted) throw error;
      throw refusal(call, endpoint, error, secrets);
    }
  };
}

/** What AWS answered (a code and a message with its HTTP status), or that it did not answer; no secret in it. */
export function refusal(call: string, endpoint: string, error: unknown, secrets: Array<string | undefined>) {
  const e = (error as { assumeRole?: boolean; cause?: unknown }).assumeRole ? ((error as { cause: unknown }).cause as Error) : (error as Error);
  const via = (error as { assumeRole?: boolean }).assumeRole ? `sts:AssumeRole (for ${call})` : call;
  const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const sent = { tool: TOOL, url: endpoint, method: 'POST' as const, operation: via, secrets };
  if (status !== undefined) return toolRefused(sent, `${e.name} (HTTP ${status}): ${e.message}`, status);
  return toolUnavailable(sent, e);
}
