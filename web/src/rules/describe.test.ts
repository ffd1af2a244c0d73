import { describe, expect, it } from 'vitest';
import type { CloudAction } from '../api/types';
import { describeAction, describeCloudAction, describeCloudInstances, describeCloudWait, describeLimit } from './describe';

describe('a cloud action in words', () => {
  const reboot: CloudAction = { type: 'cloud', operation: 'reboot', region: 'eu-west-1', credentialId: 'c1', instances: { from: 'payload', field: 'InstanceId' } };

  it('says what it does, to which instance, where and with which credential', () => {
    expect(describeCloudAction(reboot, 'CLOUD_EC2', 'aws prod')).toBe('Reboot the EC2 instance named in InstanceId, in eu-west-1, with credential “aws prod”');
    expect(describeCloudAction({ ...reboot, instances: undefined }, 'CLOUD_EC2')).toBe('Reboot the EC2 instance named in InstanceId, in eu-west-1, with credential c1');
    expect(describeCloudAction({ type: 'cloud', operation: 'stop', provider: 'azure' }, 'CLOUD_AZURE')).toBe('Stop the Azure VM named in InstanceId, with no credential');
    expect(describeAction(reboot)).toBe('Cloud · reboot');
  });

  it('names a fixed list, a long one shortened, and tags', () => {
    expect(describeCloudInstances({ ...reboot, instances: { ids: ['i-0000000a'] } }, 'CLOUD_EC2')).toBe('the EC2 instance i-0000000a');
    expect(describeCloudInstances({ ...reboot, instances: { ids: ['i-1', 'i-2', 'i-3', 'i-4', 'i-5'] } }, 'CLOUD_EC2')).toBe('the EC2 instances i-1, i-2, i-3 and 2 more');
    expect(describeCloudInstances({ ...reboot, instances: { tags: { env: 'dev' } } }, 'CLOUD_GCP')).toBe('the Compute Engine instances tagged env=dev');
  });

  it('says how long it waits for which state, and that its limit counts per instance', () => {
    expect(describeCloudWait({ ...reboot, operation: 'terminate', timeoutSeconds: 600 })).toBe('up to 600 s (10 min) for each instance to be terminated');
    expect(describeLimit({ max: 2, windowSeconds: 3600 }, 'instance')).toBe('2 per instance per 3600 s (1 h), then recorded as limited without calling the provider');
    expect(describeLimit({ max: 2, windowSeconds: 3600 })).toBe('2 per host per 3600 s (1 h), then escalate to a human');
  });
});
