import { createHash } from 'node:crypto';
import type { FieldError } from '../../errors/catalogue.js';
import { toolTime, type ToolAlert, type ToolNotification, type ToolRequest } from '../notification.js';
import { SNS_CERTIFICATE_HOST, certificateUrlProblem, signatureAlgorithm, stringToSign, verifySignature, type SnsMessageType } from './signature.js';
import { invalid, isRecord, labelText } from '../values.js';

/**
 * `cloudwatch_sns`: AWS CloudWatch alarms delivered by an SNS HTTP(S) subscription (issue 17).
 *
 * SNS posts `Content-Type: text/plain; charset=UTF-8` with a JSON body and the header
 * `x-amz-sns-message-type` ("Parsing Amazon SNS message formats",
 * https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html). Every message is
 * signed; nothing is read from one, and no subscription confirmed, before its signature verifies.
 * The Notification's `Message` is the CloudWatch alarm, itself a JSON string.
 *
 * This parser does I/O through its dependencies: it fetches the signing certificate, and the
 * `confirm` of a SubscriptionConfirmation GETs the SubscribeURL. Both go through functions the
 * caller passes, so the service can cache certificates and apply its egress policy.
 *
 * Host: the alarm's `InstanceId` dimension (the EC2 instance id; map it to a host name in the
 * rule or the integration). Fingerprint: AlarmArn + NewStateValue + StateChangeTime, the same for
 * SNS's retries and a re-published copy, new for each state change.
 */
export interface CloudwatchSnsDeps {
  /** The PEM text at a SigningCertURL (already checked: https, an SNS host, .pem). Rejects when unreachable. */
  fetchCertificate(url: string): Promise<string>;
  /** A GET of the SubscribeURL, which confirms the subscription. Rejects when SNS did not answer 2xx. */
  get(url: string): Promise<void>;
  /** Hosts a SigningCertURL and SubscribeURL may name. Default: sns.<region>.amazonaws.com(.cn). Tests relax it. */
  certificateHostPattern?: RegExp;
  /** Messages published longer ago than this are refused as replays. Default one hour. */
  maxAgeMs?: number;
}

/**
 * One hour: the longest an SNS HTTP delivery policy may keep retrying a message (SNS keeps the
 * message's original Timestamp, which is signed, on every retry).
 */
export const DEFAULT_MAX_AGE_MS = 60 * 60 * 1000;

/** The certificate could not be fetched: an operational failure (answer 5xx so that SNS retries), not a bad body. */
export class SnsCertificateUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`the SNS signing certificate ${url} could not be fetched: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'SnsCertificateUnavailableError';
  }
}

const TYPES: readonly SnsMessageType[] = ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'];
const COMMON_FIELDS = ['Type', 'MessageId', 'TopicArn', 'Message', 'Timestamp', 'SignatureVersion', 'Signature', 'SigningCertURL'] as const;
const CONFIRMATION_FIELDS = ['SubscribeURL', 'Token'] as const;

/** A parser bound to its I/O, with the signature of every other tool's `parse<Tool>`. */
export function cloudwatchSnsParser(deps: CloudwatchSnsDeps): (request: ToolRequest) => Promise<ToolNotification> {
  return (request) => parseCloudwatchSns(request, deps);
}

export async function parseCloudwatchSns(request: ToolRequest, deps: CloudwatchSnsDeps): Promise<ToolNotification> {
  const body = bodyObject(request);
  if (!body) return invalid('/body', 'the body is not an Amazon SNS message: expected a JSON object with Type, MessageId, TopicArn, Message, Signature...');

  const type = body.Type;
  if (typeof type !== 'string' || !TYPES.includes(type as SnsMessageType)) {
    return invalid('/body/Type', `Type must be one of ${TYPES.join(', ')}: is this body from an SNS HTTP(S) subscription?`);
  }
  const headerType = header(request, 'x-amz-sns-message-type');
  if (headerType !== undefined && headerType !== type) {
    return invalid('/headers/x-amz-sns-message-type', `the header says ${headerType} but the body's Type is ${type}`);
  }
  const messageType = type as SnsMessageType;
  const required = messageType === 'Notification' ? COMMON_FIELDS : [...COMMON_FIELDS, ...CONFIRMATION_FIELDS];
  const missing = required.filter((key) => typeof body[key] !== 'string');
  if (missing.length > 0) {
    return { kind: 'invalid', errors: missing.map((key) => ({ path: `/body/${key}`, message: `${key} is required in an SNS ${messageType} (a string)` })) };
  }
  const field = (key: string): string => body[key] as string;

  const topicArns = configuredTopics(request.config);
  if (topicArns && !topicArns.includes(field('TopicArn'))) {
    return invalid('/body/TopicArn', `topic ${field('TopicArn')} is not one this integration accepts (config topicArns): add it, or unsubscribe it from this URL`);
  }

  // A replay of a captured message is refused before any I/O.
  const published = Date.parse(field('Timestamp'));
  if (Number.isNaN(published)) return invalid('/body/Timestamp', 'Timestamp must be an ISO 8601 time, as SNS sends it');
  const maxAge = deps.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  if (request.now - published > maxAge) {
    return invalid('/body/Timestamp', `the message was published at ${field('Timestamp')}, more than ${Math.round(maxAge / 60_000)} minutes ago: refused as a replay`);
  }
  if (published - request.now > maxAge) {
    return invalid('/body/Timestamp', `the message's Timestamp ${field('Timestamp')} is in the future: check this server's clock`);
  }

  const hostPattern = deps.certificateHostPattern ?? SNS_CERTIFICATE_HOST;
  const certificateUrl = field('SigningCertURL');
  const urlProblem = certificateUrlProblem(certificateUrl, hostPattern);
  if (urlProblem) return invalid('/body/SigningCertURL', urlProblem);
  const algorithm = signatureAlgorithm(field('SignatureVersion'));
  if (!algorithm) return invalid('/body/SignatureVersion', `SignatureVersion must be 1 (SHA1withRSA) or 2 (SHA256withRSA), not ${field('SignatureVersion')}`);

  let pem: string;
  try {
    pem = await deps.fetchCertificate(certificateUrl);
  } catch (error) {
    throw new SnsCertificateUnavailableError(certificateUrl, error);
  }
  const refused = verifySignature({ pem, algorithm, signed: stringToSign(messageType, body), signature: field('Signature'), now: request.now });
  if (refused) return invalid('/body/Signature', refused);

  // Verified from here on.
  switch (messageType) {
    case 'SubscriptionConfirmation':
      return subscriptionConfirmation(body, field, hostPattern, deps);
    case 'UnsubscribeConfirmation':
      return {
        kind: 'control',
        description: `SNS unsubscribed this endpoint from topic ${field('TopicArn')}; to restore the subscription, visit its SubscribeURL or subscribe again`,
      };
    case 'Notification':
      return cloudwatchAlarm(field);
  }
}

function subscriptionConfirmation(
  body: Record<string, unknown>,
  field: (key: string) => string,
  hostPattern: RegExp,
  deps: CloudwatchSnsDeps,
): ToolNotification {
  const subscribeUrl = field('SubscribeURL');
  let url: URL;
  try {
    url = new URL(subscribeUrl);
  } catch {
    return invalid('/body/SubscribeURL', 'SubscribeURL is not a URL');
  }
  const certificateHost = new URL(field('SigningCertURL')).hostname;
  // The URL is signed, but confirm only what SNS itself would send: its own host, its own action.
  if (url.protocol !== 'https:' || url.hostname !== certificateHost || !hostPattern.test(url.hostname) || url.username || url.password || url.port) {
    return invalid('/body/SubscribeURL', `SubscribeURL must be https on the SNS host that signed the message (${certificateHost})`);
  }
  if (url.searchParams.get('Action') !== 'ConfirmSubscription' || url.searchParams.get('TopicArn') !== body.TopicArn) {
    return invalid('/body/SubscribeURL', 'SubscribeURL must be a ConfirmSubscription of the message\'s own TopicArn');
  }
  return {
    kind: 'control',
    description: `SNS asks to confirm the subscription of this endpoint to topic ${field('TopicArn')}`,
    confirm: () => deps.get(subscribeUrl),
  };
}

/** The CloudWatch alarm in a verified Notification's Message. */
function cloudwatchAlarm(field: (key: string) => string): ToolNotification {
  let alarm: unknown;
  try {
    alarm = JSON.parse(field('Message'));
  } catch {
    alarm = undefined;
  }
  if (!isRecord(alarm) || typeof alarm.AlarmName !== 'string' || typeof alarm.NewStateValue !== 'string') {
    return invalid(
      '/body/Message',
      `the SNS notification from topic ${field('TopicArn')} is not a CloudWatch alarm: Message must be the alarm's JSON (AlarmName, NewStateValue, StateChangeTime...). Subscribe this URL only to topics that CloudWatch alarms publish to`,
    );
  }
  const errors: FieldError[] = [];
  if (typeof alarm.StateChangeTime !== 'string') errors.push({ path: '/body/Message/StateChangeTime', message: 'StateChangeTime is required in a CloudWatch alarm (a string)' });
  if (errors.length > 0) return { kind: 'invalid', errors };
  const state = alarm.NewStateValue;
  if (state === 'INSUFFICIENT_DATA') {
    // Not enough data says nothing about the host's health: recorded by the caller, never acted on.
    return { kind: 'control', description: `CloudWatch alarm ${alarm.AlarmName} has insufficient data: ${labelText(alarm.NewStateReason) ?? 'no reason given'}` };
  }
  if (state !== 'ALARM' && state !== 'OK') {
    return invalid('/body/Message/NewStateValue', `NewStateValue must be ALARM, OK or INSUFFICIENT_DATA, not ${state}`);
  }

  const dimensions = alarmDimensions(alarm.Trigger);
  const trigger = isRecord(alarm.Trigger) ? alarm.Trigger : {};
  const labels: Record<string, string> = {};
  for (const [key, value] of [
    ['AlarmName', alarm.AlarmName],
    ['Region', alarm.Region],
    ['AWSAccountId', alarm.AWSAccountId],
    ['Namespace', trigger.Namespace],
    ['MetricName', trigger.MetricName],
  ] as const) {
    const flat = labelText(value);
    if (flat !== undefined) labels[key] = flat;
  }
  Object.assign(labels, dimensions);

  const annotations: Record<string, string> = {};
  for (const key of ['AlarmDescription', 'NewStateReason', 'OldStateValue', 'StateChangeTime', 'AlarmArn'] as const) {
    const flat = labelText(alarm[key]);
    if (flat !== undefined) annotations[key] = flat;
  }
  // Alarms from before CloudWatch added AlarmArn (2015 examples lack it): the topic and name stand in.
  const identity = labelText(alarm.AlarmArn) ?? `${field('TopicArn')}/${alarm.AlarmName}`;
  const toolAlert: ToolAlert = {
    alarmName: alarm.AlarmName,
    hostName: dimensions.InstanceId,
    severity: undefined,
    state: state === 'ALARM' ? 'firing' : 'resolved',
    fingerprint: fingerprint(identity, state, alarm.StateChangeTime as string),
    // The alarm's ARN; StateChangeTime ("2021-06-23T08:41:06.622+0000") is when it entered this state.
    incidentKey: identity,
    at: toolTime(alarm.StateChangeTime),
    labels,
    annotations,
    raw: alarm,
  };
  return { kind: 'alerts', alerts: [toolAlert] };
}

/**
 * The alarm's dimensions by name. A metric alarm has Trigger.Dimensions; an alarm on metric math
 * or anomaly detection has Trigger.Metrics[].MetricStat.Metric.Dimensions. SNS's format names
 * them with lower-case `name` and `value` (the API's Name/Value are read too). The first value of
 * a name wins.
 */
function alarmDimensions(trigger: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(trigger)) return out;
  const lists: unknown[] = [trigger.Dimensions];
  if (Array.isArray(trigger.Metrics)) {
    for (const metric of trigger.Metrics) {
      if (isRecord(metric) && isRecord(metric.MetricStat) && isRecord(metric.MetricStat.Metric)) lists.push(metric.MetricStat.Metric.Dimensions);
    }
  }
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const dimension of list) {
      if (!isRecord(dimension)) continue;
      const name = labelText(dimension.name ?? dimension.Name);
      const value = labelText(dimension.value ?? dimension.Value);
      if (name !== undefined && value !== undefined && !(name in out)) out[name] = value;
    }
  }
  return out;
}

function fingerprint(...parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

function configuredTopics(config: Record<string, unknown>): string[] | undefined {
  const value = config.topicArns;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length > 0) return value.filter((item): item is string => typeof item === 'string');
  return undefined;
}

/** The body as an object: SNS sends text/plain, so the caller may not have parsed it. */
function bodyObject(request: ToolRequest): Record<string, unknown> | undefined {
  if (isRecord(request.body)) return request.body;
  if (request.body !== undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(request.rawBody);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function header(request: ToolRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}



