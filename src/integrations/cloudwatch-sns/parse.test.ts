/**
 * Sources the bodies are built from:
 * - SNS envelopes: "Parsing Amazon SNS message formats" / "HTTP/HTTPS notification JSON format" /
 *   "HTTP/HTTPS subscription confirmation JSON format"
 *   (https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html;
 *   awsdocs/amazon-sns-developer-guide doc_source/sns-message-and-json-formats.md): the
 *   SubscriptionConfirmation and UnsubscribeConfirmation examples verbatim, Signature replaced.
 * - The string to sign: "Verifying the signatures of Amazon SNS messages"
 *   (https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html;
 *   doc_source/sns-verify-signature-of-message.md), whose example string to sign is checked below.
 * - The CloudWatch alarm Notification: one captured from ap-northeast-2 in
 *   cloudforet-io/plugin-aws-sns-mon-webhook test/api/test_event_api.py (an EC2 CPUUtilization
 *   alarm with an InstanceId dimension, lower-case name/value), verbatim but for Signature.
 *
 * The messages are signed here with a test certificate (selfsigned, as src/http/tls.ts makes
 * one), served by the fetchCertificate the parser is given in place of the SNS URL.
 */
import { createSign } from 'node:crypto';
import selfsigned from 'selfsigned';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorsOf } from '../../../test/support/tool-notifications.js';
import type { ToolNotification, ToolRequest } from '../notification.js';
import { SnsCertificateUnavailableError, parseCloudwatchSns, type CloudwatchSnsDeps } from './parse.js';
import { SNS_CERTIFICATE_HOST, stringToSign, type SnsMessageType } from './signature.js';

const CERT_URL_WEST = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem';
const CERT_URL_SEOUL = 'https://sns.ap-northeast-2.amazonaws.com/SimpleNotificationService-010a507c1833636cd94bdb98bd93083a.pem';

// The SubscriptionConfirmation example of the SNS developer guide, verbatim but for Signature.
const SUBSCRIPTION_CONFIRMATION = {
  Type: 'SubscriptionConfirmation',
  MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
  Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
  TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
  Message: 'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.\nTo confirm the subscription, visit the SubscribeURL included in this message.',
  SubscribeURL:
    'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
  Timestamp: '2012-04-26T20:45:04.751Z',
  SignatureVersion: '1',
  Signature: 'EXAMPLEpH+DcEwjAPg8O9mY8dReBSwksfg2S7WKQcikcNKWLQjwu6A4VbeS0QHVCkhRS7fUQvi2egU3N858fiTDN6bkkOxYDVrY0Ad8L10Hs3zH81mtnPk5uvvolIC1CXGu43obcgFxeL3khZl8IKvO61GWB6jI9b5+gLPoBc1Q=',
  SigningCertURL: CERT_URL_WEST,
};

// The UnsubscribeConfirmation example of the same page, verbatim but for Signature.
const UNSUBSCRIBE_CONFIRMATION = {
  Type: 'UnsubscribeConfirmation',
  MessageId: '47138184-6831-46b8-8f7c-afc488602d7d',
  Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f7948a98bac386edfe3e10314e873973b3e0a3c09119b722dedf2b5e31c59b13edbb26417c19f109351e6f2169efa9085ffe97e10535f4179ac1a03590b0f541f209c190f9ae23219ed6c470453e06c19b5ba9fcbb27daeb7c7',
  TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
  Message: 'You have chosen to deactivate subscription arn:aws:sns:us-west-2:123456789012:MyTopic:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.',
  SubscribeURL:
    'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37fb687f5d51e6e241d09c805a5a57b30d712f7948a98bac386edfe3e10314e873973b3e0a3c09119b722dedf2b5e31c59b13edbb26417c19f109351e6f2169efa9085ffe97e10535f4179ac1a03590b0f541f209c190f9ae23219ed6c470453e06c19b5ba9fcbb27daeb7c7',
  Timestamp: '2012-04-26T20:06:41.581Z',
  SignatureVersion: '1',
  Signature: 'EXAMPLEHXgJmXqnqsHTlqOCk7TIZsnk8zpJJoQbr8leD+8kAHcke3ClC4VPOvdpZo9s/vR9GOznKab6sjGxE8uwqDI9HwpDm8lGxSlFGuwCruWeecnt7MdJCNh0XK4XQCbtGoXB762ePJfaSWi9tYwzW65zAFU04WkNBkNsIf60=',
  SigningCertURL: CERT_URL_WEST,
};

// A CloudWatch alarm Notification as SNS delivered it (ap-northeast-2), verbatim but for Signature.
const ALARM_NOTIFICATION = {
  MessageId: 'e7c82e01-7cd8-5569-9ac1-774d893afc01',
  Signature: 'icuQY4hHf1yjCDy+XiWY0f1XvM3vv3X2wjfCcud1dnP/WHghBSOcpJmIonZRvsTNa6Y2ZL4+j95SnY0XiSlrtwQ5692ap3Ajez0WhVmcS7jUAvgCk3NfQV/H4zn7KryHoIvXB9fyjAnTZR4MnZ0AO5wV86XgD2ckBP8Gtl59HK7+B6BO/rsFxfS/x9MF3Qog3mDgR4fpvCYMhwYej4vRv38NLNYn9XVJnUPILHaTOfNG1NlJqBPslwXlV4ef5n86aPLJ8/nDsD1aSAVcOGfX9j/Z6aEF2FmM6hFz1+3ZfYOsu1dB8zGnVdHhNi7jNgqLmoY89WG3ZMDlUJTPDoui5A==',
  TopicArn: 'arn:aws:sns:ap-northeast-2:257706363616:spaceone-notification',
  Message:
    '{"AlarmName":"EC2-CPU","AlarmDescription":null,"AWSAccountId":"257706363616","NewStateValue":"ALARM","NewStateReason":"Threshold Crossed: 1 out of the last 1 datapoints [17.2564528039004 (23/06/21 08:31:00)] was greater than the threshold (15.0) (minimum 1 datapoint for OK -> ALARM transition).","StateChangeTime":"2021-06-23T08:41:06.622+0000","Region":"Asia Pacific (Seoul)","AlarmArn":"arn:aws:cloudwatch:ap-northeast-2:257706363616:alarm:EC2-CPU","OldStateValue":"INSUFFICIENT_DATA","Trigger":{"MetricName":"CPUUtilization","Namespace":"AWS/EC2","StatisticType":"Statistic","Statistic":"AVERAGE","Unit":null,"Dimensions":[{"value":"i-0f672ea50a80cda4b","name":"InstanceId"}],"Period":300,"EvaluationPeriods":1,"ComparisonOperator":"GreaterThanThreshold","Threshold":15.0,"TreatMissingData":"- TreatMissingData: missing","EvaluateLowSampleCountPercentile":""}}',
  Type: 'Notification',
  UnsubscribeURL: 'https://sns.ap-northeast-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:ap-northeast-2:257706363616:spaceone-notification:4f9519e8-e213-4b33-b4a9-6cc24322f047',
  Timestamp: '2021-06-23T08:41:06.656Z',
  SigningCertURL: CERT_URL_SEOUL,
  Subject: 'ALARM: "EC2-CPU" in Asia Pacific (Seoul)',
  SignatureVersion: '1',
};

type Message = Record<string, string>;

let certPem: string;
let keyPem: string;
let otherKeyPem: string;

beforeAll(async () => {
  // Valid from before the 2012 examples to well after today, so the documented Timestamps can be used.
  const options = { keySize: 2048, algorithm: 'sha256' as const, notBeforeDate: new Date('2010-01-01T00:00:00Z'), notAfterDate: new Date('2099-01-01T00:00:00Z') };
  const signer = await selfsigned.generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], options);
  const other = await selfsigned.generate([{ name: 'commonName', value: 'attacker.example' }], options);
  certPem = signer.cert;
  keyPem = signer.private;
  otherKeyPem = other.private;
});

function sign(message: Message, key = keyPem): Message {
  const algorithm = message.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1';
  const signature = createSign(algorithm).update(stringToSign(message.Type as SnsMessageType, message)).sign(key, 'base64');
  return { ...message, Signature: signature };
}

/** The request as the service hands it over: SNS's text/plain body, its header, `now` shortly after publication. */
function request(message: Message, extra: Partial<ToolRequest> = {}): ToolRequest {
  return {
    rawBody: JSON.stringify(message),
    body: undefined,
    headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': message.Type },
    config: {},
    secret: undefined,
    now: Date.parse(message.Timestamp!) + 2_000,
    ...extra,
  };
}

interface Recorder extends CloudwatchSnsDeps {
  fetched: string[];
  visited: string[];
}

function deps(overrides: Partial<CloudwatchSnsDeps> = {}): Recorder {
  const fetched: string[] = [];
  const visited: string[] = [];
  return {
    fetched,
    visited,
    fetchCertificate: async (url) => {
      fetched.push(url);
      return certPem;
    },
    get: async (url) => {
      visited.push(url);
    },
    ...overrides,
  };
}

describe('the string to sign', () => {
  it('is the documented Notification example, Subject included when present', () => {
    const message = {
      Type: 'Notification',
      Message: 'My Test Message',
      MessageId: '4d4dc071-ddbf-465d-bba8-08f81c89da64',
      Subject: 'My subject',
      Timestamp: '2019-01-31T04:37:04.321Z',
      TopicArn: 'arn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P',
      UnsubscribeURL: 'https://sns.us-east-2.amazonaws.com/?Action=Unsubscribe',
    };
    expect(stringToSign('Notification', message)).toBe(
      'Message\nMy Test Message\nMessageId\n4d4dc071-ddbf-465d-bba8-08f81c89da64\nSubject\nMy subject\n' +
        'Timestamp\n2019-01-31T04:37:04.321Z\nTopicArn\narn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P\nType\nNotification\n',
    );
    const { Subject: _subject, ...withoutSubject } = message;
    expect(stringToSign('Notification', withoutSubject)).not.toContain('Subject');
  });

  it('signs SubscribeURL and Token for a confirmation, in byte order, the Message with its real newline', () => {
    const m = SUBSCRIPTION_CONFIRMATION;
    expect(stringToSign('SubscriptionConfirmation', m)).toBe(
      `Message\n${m.Message}\nMessageId\n${m.MessageId}\nSubscribeURL\n${m.SubscribeURL}\nTimestamp\n${m.Timestamp}\n` +
        `Token\n${m.Token}\nTopicArn\n${m.TopicArn}\nType\nSubscriptionConfirmation\n`,
    );
    expect(m.Message).toContain('MyTopic.\nTo confirm');
  });
});

describe('a CloudWatch alarm notification', () => {
  it('verifies and reads the alarm: InstanceId as the host, firing, the documented fields', async () => {
    const d = deps();
    const result = await parseCloudwatchSns(request(sign(ALARM_NOTIFICATION)), d);
    expect(d.fetched).toEqual([CERT_URL_SEOUL]);
    expect(result.kind).toBe('alerts');
    if (result.kind !== 'alerts') return;
    expect(result.alerts).toHaveLength(1);
    const [alert] = result.alerts;
    expect(alert).toMatchObject({
      alarmName: 'EC2-CPU',
      hostName: 'i-0f672ea50a80cda4b',
      severity: undefined,
      state: 'firing',
      labels: {
        AlarmName: 'EC2-CPU',
        InstanceId: 'i-0f672ea50a80cda4b',
        Region: 'Asia Pacific (Seoul)',
        AWSAccountId: '257706363616',
        Namespace: 'AWS/EC2',
        MetricName: 'CPUUtilization',
      },
      annotations: {
        OldStateValue: 'INSUFFICIENT_DATA',
        StateChangeTime: '2021-06-23T08:41:06.622+0000',
        AlarmArn: 'arn:aws:cloudwatch:ap-northeast-2:257706363616:alarm:EC2-CPU',
      },
    });
    expect(alert!.annotations.NewStateReason).toMatch(/^Threshold Crossed/);
    expect(alert!.annotations).not.toHaveProperty('AlarmDescription'); // null in the body
    expect(alert!.raw).toEqual(JSON.parse(ALARM_NOTIFICATION.Message));
    for (const value of Object.values(alert!.labels)) expect(typeof value).toBe('string');
  });

  it('reads the body whether or not the caller parsed the text/plain JSON', async () => {
    const signed = sign(ALARM_NOTIFICATION);
    const result = await parseCloudwatchSns(request(signed, { body: JSON.parse(JSON.stringify(signed)) }), deps());
    expect(result.kind).toBe('alerts');
  });

  it('verifies SignatureVersion 2 (SHA256withRSA) too', async () => {
    const result = await parseCloudwatchSns(request(sign({ ...ALARM_NOTIFICATION, SignatureVersion: '2' })), deps());
    expect(result.kind).toBe('alerts');
  });

  it('keeps the fingerprint for a re-send of the same state change, and changes it for a new one or OK', async () => {
    const first = await parseCloudwatchSns(request(sign(ALARM_NOTIFICATION)), deps());
    // SNS's retry carries the same message; a re-publish has a new MessageId and Timestamp.
    const republished = sign({ ...ALARM_NOTIFICATION, MessageId: 'b1a0c0de-0000-4000-8000-000000000001', Timestamp: '2021-06-23T08:45:00.000Z' });
    const again = await parseCloudwatchSns(request(republished), deps());
    const alarm = JSON.parse(ALARM_NOTIFICATION.Message) as Record<string, unknown>;
    const later = sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify({ ...alarm, StateChangeTime: '2021-06-23T09:41:06.622+0000' }) });
    const refiring = await parseCloudwatchSns(request(later), deps());
    const ok = sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify({ ...alarm, NewStateValue: 'OK', OldStateValue: 'ALARM' }) });
    const resolved = await parseCloudwatchSns(request(ok), deps());
    const fingerprint = (r: ToolNotification) => (r.kind === 'alerts' ? r.alerts[0]!.fingerprint : undefined);
    expect(fingerprint(first)).toBeTypeOf('string');
    expect(fingerprint(again)).toBe(fingerprint(first));
    expect(fingerprint(refiring)).not.toBe(fingerprint(first));
    expect(fingerprint(resolved)).not.toBe(fingerprint(first));
    expect(resolved.kind === 'alerts' && resolved.alerts[0]!.state).toBe('resolved');
  });

  // Issue 38: the alarm (its ARN, as DescribeAlarms and DescribeAlarmHistory name it) is the
  // incident, from its change to ALARM to its change to OK, at StateChangeTime.
  it('gives the incident: the alarm\'s ARN for key, StateChangeTime for its time', async () => {
    const alarm = JSON.parse(ALARM_NOTIFICATION.Message) as Record<string, unknown>;
    const fired = await parseCloudwatchSns(request(sign(ALARM_NOTIFICATION)), deps());
    const ok = sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify({ ...alarm, NewStateValue: 'OK', OldStateValue: 'ALARM', StateChangeTime: '2021-06-23T09:01:06.622+0000' }) });
    const resolved = await parseCloudwatchSns(request(ok), deps());
    const incident = (r: ToolNotification) => (r.kind === 'alerts' ? [r.alerts[0]!.incidentKey, r.alerts[0]!.at] : undefined);
    expect(incident(fired)).toEqual(['arn:aws:cloudwatch:ap-northeast-2:257706363616:alarm:EC2-CPU', Date.parse('2021-06-23T08:41:06.622Z')]);
    expect(incident(resolved)).toEqual(['arn:aws:cloudwatch:ap-northeast-2:257706363616:alarm:EC2-CPU', Date.parse('2021-06-23T09:01:06.622Z')]);
  });

  it('records INSUFFICIENT_DATA as a control message, never an alert', async () => {
    const alarm = JSON.parse(ALARM_NOTIFICATION.Message) as Record<string, unknown>;
    const message = sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify({ ...alarm, NewStateValue: 'INSUFFICIENT_DATA', NewStateReason: 'Insufficient Data: 1 datapoint was unknown.' }) });
    const result = await parseCloudwatchSns(request(message), deps());
    expect(result).toEqual({ kind: 'control', description: expect.stringContaining('EC2-CPU has insufficient data: Insufficient Data') });
  });

  it('reads the dimensions of a metric-math alarm (Trigger.Metrics) and leaves the host out when there is no InstanceId', async () => {
    const alarm = JSON.parse(ALARM_NOTIFICATION.Message) as Record<string, unknown>;
    const metrics = {
      ...alarm,
      Trigger: { Period: 60, Metrics: [{ Id: 'm1', MetricStat: { Metric: { Dimensions: [{ value: 'i-0abc', name: 'InstanceId' }, { value: 'web', name: 'Role' }], MetricName: 'mem', Namespace: 'CWAgent' } } }, { Expression: 'ANOMALY_DETECTION_BAND(m1, 2)', Id: 'ad1' }] },
    };
    const withMetrics = await parseCloudwatchSns(request(sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify(metrics) })), deps());
    expect(withMetrics.kind === 'alerts' && withMetrics.alerts[0]).toMatchObject({ hostName: 'i-0abc', labels: { InstanceId: 'i-0abc', Role: 'web' } });
    const rds = { ...alarm, Trigger: { MetricName: 'CPUUtilization', Namespace: 'AWS/RDS', Dimensions: [{ value: 'wehandle', name: 'DBInstanceIdentifier' }] } };
    const noHost = await parseCloudwatchSns(request(sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify(rds) })), deps());
    expect(noHost.kind === 'alerts' && noHost.alerts[0]).toMatchObject({ hostName: undefined, labels: { DBInstanceIdentifier: 'wehandle' } });
  });

  it('refuses a verified notification whose Message is not a CloudWatch alarm', async () => {
    for (const Message of ['Hello world!', '{"detail-type":"EC2 Instance State-change Notification"}', '[1,2]']) {
      const errors = errorsOf(await parseCloudwatchSns(request(sign({ ...ALARM_NOTIFICATION, Message })), deps()));
      expect(errors).toEqual([{ path: '/body/Message', message: expect.stringContaining('is not a CloudWatch alarm') }]);
    }
    const alarm = JSON.parse(ALARM_NOTIFICATION.Message) as Record<string, unknown>;
    const odd = await parseCloudwatchSns(request(sign({ ...ALARM_NOTIFICATION, Message: JSON.stringify({ ...alarm, NewStateValue: 'PANIC' }) })), deps());
    expect(errorsOf(odd)).toEqual([{ path: '/body/Message/NewStateValue', message: expect.stringContaining('ALARM, OK or INSUFFICIENT_DATA') }]);
  });

  it('accepts only the topics of config.topicArns when it is set', async () => {
    const signed = sign(ALARM_NOTIFICATION);
    expect((await parseCloudwatchSns(request(signed, { config: { topicArns: [ALARM_NOTIFICATION.TopicArn] } }), deps())).kind).toBe('alerts');
    const errors = errorsOf(await parseCloudwatchSns(request(signed, { config: { topicArns: ['arn:aws:sns:eu-west-1:111122223333:ours'] } }), deps()));
    expect(errors[0]).toMatchObject({ path: '/body/TopicArn' });
  });
});

describe('signatures', () => {
  it('refuses a wrong signature: another key, or a body changed after signing', async () => {
    const byOther = errorsOf(await parseCloudwatchSns(request(sign(ALARM_NOTIFICATION, otherKeyPem)), deps()));
    expect(byOther).toEqual([{ path: '/body/Signature', message: expect.stringContaining('does not match') }]);
    const tampered = { ...sign(ALARM_NOTIFICATION), Message: ALARM_NOTIFICATION.Message.replace('"ALARM"', '"OK"') };
    expect(errorsOf(await parseCloudwatchSns(request(tampered), deps()))[0]).toMatchObject({ path: '/body/Signature' });
    // The documented example's own placeholder signature does not verify either.
    expect(errorsOf(await parseCloudwatchSns(request(ALARM_NOTIFICATION), deps()))[0]).toMatchObject({ path: '/body/Signature' });
  });

  it('refuses a message without a signature, without fetching anything', async () => {
    const d = deps();
    const { Signature: _signature, ...unsigned } = sign(ALARM_NOTIFICATION);
    expect(errorsOf(await parseCloudwatchSns(request(unsigned), d))).toEqual([{ path: '/body/Signature', message: expect.stringContaining('Signature is required') }]);
    expect(errorsOf(await parseCloudwatchSns(request({ ...unsigned, Signature: '' }), d))[0]).toMatchObject({ path: '/body/Signature' });
    expect(d.fetched).toEqual([CERT_URL_SEOUL]); // only the empty one got as far as the certificate
  });

  it('refuses a replay: a message published more than an hour ago, before any I/O', async () => {
    const d = deps();
    const signed = sign(ALARM_NOTIFICATION);
    const published = Date.parse(signed.Timestamp!);
    const errors = errorsOf(await parseCloudwatchSns(request(signed, { now: published + 60 * 60 * 1000 + 1 }), d));
    expect(errors).toEqual([{ path: '/body/Timestamp', message: expect.stringContaining('refused as a replay') }]);
    expect(d.fetched).toEqual([]);
    // Within the hour SNS may spend retrying, the same message is accepted.
    expect((await parseCloudwatchSns(request(signed, { now: published + 59 * 60 * 1000 }), d)).kind).toBe('alerts');
  });

  it('refuses an unknown SignatureVersion', async () => {
    const errors = errorsOf(await parseCloudwatchSns(request({ ...sign(ALARM_NOTIFICATION), SignatureVersion: '3' }), deps()));
    expect(errors[0]).toMatchObject({ path: '/body/SignatureVersion' });
  });

  it('fetches certificates only over https from an SNS host, and names what is wrong', async () => {
    const cases: [string, RegExp][] = [
      ['http://sns.us-west-2.amazonaws.com/cert.pem', /must be an https URL/],
      ['https://sns.us-west-2.amazonaws.com.evil.example/cert.pem', /is not an SNS host/],
      ['https://evil.example/sns.us-west-2.amazonaws.com.pem', /is not an SNS host/],
      ['https://sns.us-west-2.amazonaws.com/cert.txt', /\.pem/],
      ['https://sns.us-west-2.amazonaws.com:8443/cert.pem', /port/],
      ['not a url', /is not a URL/],
    ];
    const d = deps();
    for (const [url, message] of cases) {
      const errors = errorsOf(await parseCloudwatchSns(request(sign({ ...ALARM_NOTIFICATION, SigningCertURL: url })), d));
      expect(errors).toEqual([{ path: '/body/SigningCertURL', message: expect.stringMatching(message) }]);
    }
    expect(d.fetched).toEqual([]);
    expect(SNS_CERTIFICATE_HOST.test('sns.cn-north-1.amazonaws.com.cn')).toBe(true);
  });

  it('takes a relaxed host pattern from its caller (an emulator in tests)', async () => {
    const local = sign({ ...ALARM_NOTIFICATION, SigningCertURL: 'https://sns.localtest/cert.pem' });
    expect(errorsOf(await parseCloudwatchSns(request(local), deps()))[0]).toMatchObject({ path: '/body/SigningCertURL' });
    expect((await parseCloudwatchSns(request(local), deps({ certificateHostPattern: /^sns\.localtest$/ }))).kind).toBe('alerts');
  });

  it('refuses a certificate that is not one, and rejects with an operational error when it cannot be fetched', async () => {
    const garbage = errorsOf(await parseCloudwatchSns(request(sign(ALARM_NOTIFICATION)), deps({ fetchCertificate: async () => '<html>nope</html>' })));
    expect(garbage[0]).toMatchObject({ path: '/body/Signature', message: expect.stringContaining('not a PEM X.509 certificate') });
    const down = parseCloudwatchSns(request(sign(ALARM_NOTIFICATION)), deps({ fetchCertificate: () => Promise.reject(new Error('connect ETIMEDOUT')) }));
    await expect(down).rejects.toBeInstanceOf(SnsCertificateUnavailableError);
    await expect(down).rejects.toThrow(/could not be fetched: connect ETIMEDOUT/);
  });
});

describe('subscription handshakes', () => {
  it('answers a verified SubscriptionConfirmation with a confirm that GETs the SubscribeURL, only when called', async () => {
    const d = deps();
    const message = sign(SUBSCRIPTION_CONFIRMATION);
    const result = await parseCloudwatchSns(request(message), d);
    expect(result).toMatchObject({ kind: 'control', description: expect.stringContaining('arn:aws:sns:us-west-2:123456789012:MyTopic') });
    expect(d.visited).toEqual([]);
    if (result.kind !== 'control') return;
    await result.confirm!();
    expect(d.visited).toEqual([SUBSCRIPTION_CONFIRMATION.SubscribeURL]);
  });

  it('never confirms a SubscriptionConfirmation before its signature verifies', async () => {
    const d = deps();
    const forged = [
      sign(SUBSCRIPTION_CONFIRMATION, otherKeyPem),
      SUBSCRIPTION_CONFIRMATION, // the documented placeholder signature
      { ...sign(SUBSCRIPTION_CONFIRMATION), SubscribeURL: 'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:999999999999:Theirs&Token=1' },
      (({ Signature: _s, ...rest }) => rest)(sign(SUBSCRIPTION_CONFIRMATION)),
    ];
    for (const message of forged) {
      const result = await parseCloudwatchSns(request(message), d);
      expect(result.kind).toBe('invalid');
      expect(result).not.toHaveProperty('confirm');
    }
    const replayed = await parseCloudwatchSns(request(sign(SUBSCRIPTION_CONFIRMATION), { now: Date.parse(SUBSCRIPTION_CONFIRMATION.Timestamp) + 2 * 60 * 60 * 1000 }), d);
    expect(errorsOf(replayed)[0]).toMatchObject({ path: '/body/Timestamp' });
    expect(d.visited).toEqual([]);
  });

  it('confirms only a ConfirmSubscription URL of its own topic on the SNS host that signed it', async () => {
    const elsewhere = [
      'https://evil.example/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic',
      'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic',
      'http://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic',
      'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic',
    ];
    for (const SubscribeURL of elsewhere) {
      const errors = errorsOf(await parseCloudwatchSns(request(sign({ ...SUBSCRIPTION_CONFIRMATION, SubscribeURL })), deps()));
      expect(errors[0]).toMatchObject({ path: '/body/SubscribeURL' });
    }
  });

  it('reports an UnsubscribeConfirmation without re-subscribing', async () => {
    const d = deps();
    const result = await parseCloudwatchSns(request(sign(UNSUBSCRIBE_CONFIRMATION)), d);
    expect(result).toEqual({ kind: 'control', description: expect.stringContaining('unsubscribed this endpoint from topic arn:aws:sns:us-west-2:123456789012:MyTopic') });
    expect(d.visited).toEqual([]);
  });
});

describe('bodies that are not SNS messages', () => {
  it('says which field is wrong, never throws', async () => {
    const cases: [ToolRequest, string][] = [
      [{ ...request(sign(ALARM_NOTIFICATION)), rawBody: 'not json' }, '/body'],
      [{ ...request(sign(ALARM_NOTIFICATION)), body: [1, 2] }, '/body'],
      [request({ ...sign(ALARM_NOTIFICATION), Type: 'Ping' }), '/body/Type'],
      [{ ...request(sign(ALARM_NOTIFICATION)), headers: { 'x-amz-sns-message-type': 'SubscriptionConfirmation' } }, '/headers/x-amz-sns-message-type'],
      [request({ ...sign(ALARM_NOTIFICATION), Timestamp: 'yesterday' }), '/body/Timestamp'],
      [request((({ TopicArn: _t, ...rest }) => rest)(sign(ALARM_NOTIFICATION)) as Message), '/body/TopicArn'],
      [request((({ Token: _t, ...rest }) => rest)(sign(SUBSCRIPTION_CONFIRMATION)) as Message), '/body/Token'],
    ];
    for (const [req, path] of cases) {
      const errors = errorsOf(await parseCloudwatchSns(req, deps()));
      expect(errors.map((e) => e.path)).toContain(path);
      for (const error of errors) expect(error.message.length).toBeGreaterThan(10);
    }
  });
});
