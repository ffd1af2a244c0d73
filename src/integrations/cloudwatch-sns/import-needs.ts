import type { ImportNeeds } from '../import-needs.js';

/** The CloudWatch and STS operations a CloudWatch import sends (cloudwatch-sns/import.ts): reads, and assuming the credential's role. */
const READ_OPERATIONS = new Set(['DescribeAlarms', 'DescribeAlarmHistory', 'AssumeRole']);

/**
 * A CloudWatch import (docs/incidents-import.md#cloudwatch): a stored AWS credential allowed
 * cloudwatch:DescribeAlarms and cloudwatch:DescribeAlarmHistory, the region. The SDK POSTs every
 * call; the operation is named by the JSON protocol's `X-Amz-Target`, the RPC v2 path, or the
 * query protocol's `Action`.
 */
export const cloudwatchImportNeeds: ImportNeeds = {
  tool: 'CloudWatch',
  secretShape: 'a stored AWS credential allowed cloudwatch:DescribeAlarms and cloudwatch:DescribeAlarmHistory',
  credentialProviders: ['aws'],
  integrationSecret: false,
  secretErrors: (_secret, at) => [{ path: at, message: 'a CloudWatch import reads with a stored AWS credential: give credentialId, not a secret' }],
  settingsErrors({ config, credentialProvider }) {
    const errors = [];
    if (credentialProvider === undefined) errors.push({ path: '/body/import/credentialId', message: 'a CloudWatch import needs a stored AWS credential (credentialId) allowed cloudwatch:DescribeAlarms and cloudwatch:DescribeAlarmHistory' });
    if (typeof config.region !== 'string' && !Array.isArray(config.topicArns)) errors.push({ path: '/body/config/region', message: 'region must be the AWS region of the alarms, e.g. eu-west-1 (or give the topicArns the alarms publish to)' });
    return errors;
  },
  readOnlyCall(method, url, body, headers) {
    if (method !== 'POST') return false;
    const target = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-amz-target')?.[1];
    const operation = target?.split('.').pop()
      ?? /\/operation\/([A-Za-z]+)$/.exec(url.pathname)?.[1]
      ?? (body === undefined ? undefined : new URLSearchParams(body).get('Action') ?? undefined);
    return operation !== undefined && READ_OPERATIONS.has(operation);
  },
};
