import { DescribeInstancesCommand, DescribeRegionsCommand, EC2Client, paginateDescribeInstances, RebootInstancesCommand, StartInstancesCommand, StopInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { ProbeResult, Secret } from '../../credentials/schema.js';
import type { RunEnd } from '../../executions/service-executor.js';
import type { CloudOperation, CloudSpec } from './kind.js';
import { PROBE_TIMEOUT_MS, providerError, VERBS, waitForState, type CloudProvider } from './provider.js';
import { counted } from '../../errors/counts.js';

export interface AwsSettings {
  /** PITCREW_AWS_ENDPOINT_URL: an AWS-compatible endpoint instead of AWS's own. */
  awsEndpoint?: string | undefined;
  /** PITCREW_AWS_STS_ENDPOINT_URL: where a credential's role is assumed instead of STS's regional endpoint. */
  stsEndpoint?: string | undefined;
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
  private readonly clients = new Map<string, Ec2Session>();

  constructor(private readonly settings: AwsSettings = {}) {}

  async run(spec: CloudSpec, secret: Secret<'aws'>, credentialKey: string, signal: AbortSignal): Promise<RunEnd> {
    const client = this.clientFor(`${credentialKey} ${spec.region}`, spec.region, secret);
    const { call, target } = OPERATIONS[spec.operation];
    const started = performance.now();
    try {
      const change = await this.call(client, spec, signal);
      const read = async () => (await client.send(new DescribeInstancesCommand({ InstanceIds: [spec.instanceId] }), { abortSignal: signal })).Reservations?.[0]?.Instances?.[0]?.State?.Name;
      const final = await waitForState(read, (state) => state === target, spec.waitSeconds, this.settings.pollMs ?? 5000, signal);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (final !== target) return { state: 'failed', reason: `ec2:${call} on ${spec.instanceId} in ${spec.region}: ${change}; it was ${final ?? 'not found'} after ${seconds} s, not ${target} (timeoutSeconds ${spec.waitSeconds})` };
      return { state: 'succeeded', reason: `${VERBS[spec.operation]} ${spec.instanceId} in ${spec.region} (ec2:${call}): ${change}, ${target} after ${seconds} s` };
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: awsError(`ec2:${call} on ${spec.instanceId} in ${spec.region}`, error, secret).message };
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
      throw awsError(`ec2:DescribeInstances in ${region}`, error, secret);
    }
    return ids.sort();
  }

  async probe(secret: Secret<'aws'>): Promise<ProbeResult> {
    const session = this.session('us-east-1', secret, { maxAttempts: 2, requestHandler: { connectionTimeout: PROBE_TIMEOUT_MS, requestTimeout: PROBE_TIMEOUT_MS } });
    try {
      const regions = (await session.ec2.send(new DescribeRegionsCommand({}))).Regions?.length ?? 0;
      const who = secret.roleArn ? `the key, and role ${secret.roleArn} was assumed with it` : 'the key';
      return { call: secret.roleArn ? 'sts:AssumeRole, ec2:DescribeRegions' : 'ec2:DescribeRegions', message: `AWS accepted ${who}: ${counted(regions, 'region')} visible to it` };
    } catch (error) {
      throw awsError('ec2:DescribeRegions', error, secret);
    } finally {
      session.destroy();
    }
  }

  close(): void {
    for (const session of this.clients.values()) session.destroy();
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
    const session = this.clients.get(key) ?? this.session(region, secret, { maxAttempts: 3 });
    this.clients.delete(key);
    this.clients.set(key, session);
    for (const [oldest, stale] of this.clients) {
      if (this.clients.size <= CLIENTS) break;
      this.clients.delete(oldest);
      stale.destroy();
    }
    return session.ec2;
  }

  /**
   * An EC2 client with the secret's keys, or, when the secret names a role, with the role's
   * temporary credentials: assumed with the keys at STS in the same region, kept by the SDK
   * until five minutes before they expire, then assumed again.
   */
  private session(region: string, secret: Secret<'aws'>, options: { maxAttempts: number; requestHandler?: { connectionTimeout: number; requestTimeout: number } }): Ec2Session {
    const keys = { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}) };
    const sts = secret.roleArn ? new STSClient({ region, ...(this.settings.stsEndpoint ? { endpoint: this.settings.stsEndpoint } : {}), credentials: keys, ...options }) : undefined;
    const credentials = sts ? () => assumeRole(sts, secret) : keys;
    const ec2 = new EC2Client({ region, ...(this.settings.awsEndpoint ? { endpoint: this.settings.awsEndpoint } : {}), credentials, ...options });
    return {
      ec2,
      destroy: () => {
        ec2.destroy();
        sts?.destroy();
      },
    };
  }
}

/** An EC2 client and what it holds: with a role, the STS client that assumes it. */
interface Ec2Session {
  ec2: EC2Client;
  destroy(): void;
}

/** Refused by STS, not EC2: the role is named, not the EC2 call the role was for. */
class AssumeRoleFailed extends Error {
  constructor(readonly roleArn: string, override readonly cause: unknown) {
    super('sts:AssumeRole failed');
  }
}

/** How a role is assumed: named pitcrew in CloudTrail, for an hour (the most a role allows by default). */
interface AssumeOptions {
  sessionName: string;
  durationSeconds: number;
  signal?: AbortSignal | undefined;
}

const CLOUD_SESSION: AssumeOptions = { sessionName: 'pitcrew', durationSeconds: 3600 };

/**
 * The role's temporary credentials for one CLI runbook (actions/cli/runner.ts): assumed once at STS
 * (PITCREW_AWS_STS_ENDPOINT_URL, or STS in us-east-1) with the stored keys. Throws what STS answered,
 * every secret blotted out.
 */
export async function assumeRoleForRun(secret: Secret<'aws'>, stsEndpoint: string | undefined, options: AssumeOptions): Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined }> {
  const keys = { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}) };
  const sts = new STSClient({ region: 'us-east-1', ...(stsEndpoint ? { endpoint: stsEndpoint } : {}), credentials: keys, maxAttempts: 3 });
  try {
    return await assumeRole(sts, secret, options);
  } catch (error) {
    throw awsError('a CLI runbook', error, secret);
  } finally {
    sts.destroy();
  }
}

async function assumeRole(sts: STSClient, secret: Secret<'aws'>, options: AssumeOptions = CLOUD_SESSION) {
  try {
    const command = new AssumeRoleCommand({ RoleArn: secret.roleArn, RoleSessionName: options.sessionName, DurationSeconds: options.durationSeconds, ...(secret.externalId ? { ExternalId: secret.externalId } : {}) });
    const { Credentials: c } = await sts.send(command, { abortSignal: options.signal });
    if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error('STS answered without credentials');
    return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
  } catch (error) {
    throw new AssumeRoleFailed(secret.roleArn!, error);
  }
}

/** What AWS answered, in words, every secret value blotted out; a role STS would not give is named as such. */
function awsError(call: string, error: unknown, secret: Secret<'aws'>) {
  const secrets = [secret.secretAccessKey, secret.sessionToken, secret.externalId, secret.accessKeyId];
  if (error instanceof AssumeRoleFailed) return providerError('AWS', `sts:AssumeRole of ${error.roleArn} (for ${call})`, error.cause, secrets);
  return providerError('AWS', call, error, secrets);
}

function changeWords(changes: Array<{ PreviousState?: { Name?: string }; CurrentState?: { Name?: string } }> | undefined): string {
  const change = changes?.[0];
  return `${change?.PreviousState?.Name ?? '?'} → ${change?.CurrentState?.Name ?? '?'}`;
}
