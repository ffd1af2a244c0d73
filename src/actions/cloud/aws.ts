import { DescribeInstancesCommand, DescribeRegionsCommand, EC2Client, paginateDescribeInstances, RebootInstancesCommand, StartInstancesCommand, StopInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import type { ProbeResult, Secret } from '../../credentials/schema.js';
import type { RunEnd } from '../../executions/service-executor.js';
import type { CloudOperation, CloudSpec } from './kind.js';
import { PROBE_TIMEOUT_MS, providerError, VERBS, waitForState, type CloudProvider } from './provider.js';

export interface AwsSettings {
  /** PITCREW_AWS_ENDPOINT_URL: an AWS-compatible endpoint instead of AWS's own. */
  awsEndpoint?: string | undefined;
  /** How often the instance's state is read while waiting for it (5 s; tests shorten it). */
  pollMs?: number;
}

/** Clients kept for reuse (each holds its connections and its credential). */
const CLIENTS = 50;

/** Instances a tag filter may act on: not those shutting down or terminated. */
const LIVE_STATES = ['pending', 'running', 'stopping', 'stopped'];

/** What each operation asks of EC2, and the state it waits for. */
const OPERATIONS: Record<CloudOperation, { call: string; target: string }> = {
  start: { call: 'StartInstances', target: 'running' },
  stop: { call: 'StopInstances', target: 'stopped' },
  reboot: { call: 'RebootInstances', target: 'running' },
  terminate: { call: 'TerminateInstances', target: 'terminated' },
};

/**
 * AWS EC2 (actions/cloud/runner.ts): one operation on one instance with the credential, through
 * the official SDK (SigV4), then the instance's state read until it is the one asked for. The
 * reason records what EC2 answered: the state before, after the call, and at the end.
 */
export class AwsEc2 implements CloudProvider<'aws'> {
  private readonly clients = new Map<string, EC2Client>();

  constructor(private readonly settings: AwsSettings = {}) {}

  async run(spec: CloudSpec, secret: Secret<'aws'>, credentialKey: string, signal: AbortSignal): Promise<RunEnd> {
    const client = this.clientFor(`${credentialKey} ${spec.region}`, spec.region, secret);
    const { call, target } = OPERATIONS[spec.operation];
    const started = performance.now();
    try {
      const change = await this.call(client, spec, signal);
      const read = async () => (await client.send(new DescribeInstancesCommand({ InstanceIds: [spec.instanceId] }), { abortSignal: signal })).Reservations?.[0]?.Instances?.[0]?.State?.Name;
      const final = await waitForState(read, (state) => state === target, spec.waitSeconds, this.settings.pollMs ?? 5000);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (final !== target) return { state: 'failed', reason: `ec2:${call} on ${spec.instanceId} in ${spec.region}: ${change}; it was ${final ?? 'not found'} after ${seconds} s, not ${target} (timeoutSeconds ${spec.waitSeconds})` };
      return { state: 'succeeded', reason: `${VERBS[spec.operation]} ${spec.instanceId} in ${spec.region} (ec2:${call}): ${change}, ${target} after ${seconds} s` };
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: providerError('AWS', `ec2:${call} on ${spec.instanceId} in ${spec.region}`, error, [secret.secretAccessKey, secret.sessionToken]).message };
    }
  }

  async instancesTagged(tags: Readonly<Record<string, string>>, region: string, secret: Secret<'aws'>, credentialKey: string, signal: AbortSignal): Promise<string[]> {
    const client = this.clientFor(`${credentialKey} ${region}`, region, secret);
    // EC2 matches tag values as filters: * and ? are wildcards (docs/cloud-actions.md).
    const Filters = [...Object.entries(tags).map(([name, value]) => ({ Name: `tag:${name}`, Values: [value] })), { Name: 'instance-state-name', Values: LIVE_STATES }];
    const ids: string[] = [];
    try {
      for await (const page of paginateDescribeInstances({ client }, { Filters }, { abortSignal: signal })) {
        for (const reservation of page.Reservations ?? []) for (const instance of reservation.Instances ?? []) if (instance.InstanceId) ids.push(instance.InstanceId);
      }
    } catch (error) {
      if (signal.aborted) throw error;
      throw providerError('AWS', `ec2:DescribeInstances in ${region}`, error, [secret.secretAccessKey, secret.sessionToken]);
    }
    return ids.sort();
  }

  async probe(secret: Secret<'aws'>): Promise<ProbeResult> {
    const client = new EC2Client({
      region: 'us-east-1',
      ...(this.settings.awsEndpoint ? { endpoint: this.settings.awsEndpoint } : {}),
      credentials: credentialsOf(secret),
      maxAttempts: 2,
      requestHandler: { connectionTimeout: PROBE_TIMEOUT_MS, requestTimeout: PROBE_TIMEOUT_MS },
    });
    try {
      const regions = (await client.send(new DescribeRegionsCommand({}))).Regions?.length ?? 0;
      return { call: 'ec2:DescribeRegions', message: `AWS accepted the key: ${regions} region${regions === 1 ? '' : 's'} visible to it` };
    } catch (error) {
      throw providerError('AWS', 'ec2:DescribeRegions', error, [secret.secretAccessKey, secret.sessionToken, secret.accessKeyId]);
    } finally {
      client.destroy();
    }
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
  }

  /** The operation; returns EC2's answer in words ("stopped → pending"). */
  private async call(client: EC2Client, spec: CloudSpec, signal: AbortSignal): Promise<string> {
    const ids = { InstanceIds: [spec.instanceId] };
    const options = { abortSignal: signal };
    switch (spec.operation) {
      case 'start':
        return changeWords((await client.send(new StartInstancesCommand(ids), options)).StartingInstances);
      case 'stop':
        return changeWords((await client.send(new StopInstancesCommand(ids), options)).StoppingInstances);
      case 'terminate':
        return changeWords((await client.send(new TerminateInstancesCommand(ids), options)).TerminatingInstances);
      case 'reboot':
        await client.send(new RebootInstancesCommand(ids), options);
        return 'reboot requested';
    }
  }

  /**
   * One client per (credential as last saved, region), the least recently used dropped past
   * CLIENTS: a client per run was about a tenth of a run's CPU (bench/cloud.js). A rotated secret
   * changes the credential's key, so the next run makes a new client.
   */
  private clientFor(key: string, region: string, secret: Secret<'aws'>): EC2Client {
    let client = this.clients.get(key);
    if (client) this.clients.delete(key);
    else {
      client = new EC2Client({
        region,
        ...(this.settings.awsEndpoint ? { endpoint: this.settings.awsEndpoint } : {}),
        credentials: credentialsOf(secret),
        maxAttempts: 3,
      });
    }
    this.clients.set(key, client);
    for (const [oldest, stale] of this.clients) {
      if (this.clients.size <= CLIENTS) break;
      this.clients.delete(oldest);
      stale.destroy();
    }
    return client;
  }
}

function credentialsOf(secret: Secret<'aws'>) {
  return { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}) };
}

function changeWords(changes: Array<{ PreviousState?: { Name?: string }; CurrentState?: { Name?: string } }> | undefined): string {
  const change = changes?.[0];
  return `${change?.PreviousState?.Name ?? '?'} → ${change?.CurrentState?.Name ?? '?'}`;
}
