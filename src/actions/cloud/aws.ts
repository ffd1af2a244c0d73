import { DescribeInstancesCommand, EC2Client, RebootInstancesCommand, StartInstancesCommand, StopInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import type { Kysely } from 'kysely';
import { openCredential } from '../../credentials/repository.js';
import { providerError } from '../../credentials/probe.js';
import type { RunEnd, ServiceRunner } from '../../executions/service-executor.js';
import type { SecretBox } from '../../identity/secret-box.js';
import type { Database, ExecutionRow } from '../../store/schema.js';
import type { Secret } from '../../credentials/schema.js';
import { isCloudSpec, type CloudOperation, type CloudSpec } from './kind.js';

export interface AwsSettings {
  /** PITCREW_AWS_ENDPOINT_URL: an AWS-compatible endpoint instead of AWS's own. */
  awsEndpoint?: string | undefined;
  /** How often the instance's state is read while waiting for it (5 s; tests shorten it). */
  pollMs?: number;
}

/** Clients kept for reuse (each holds its connections and its credential). */
const CLIENTS = 50;

/** What each operation asks of EC2, and the state it waits for. */
const OPERATIONS: Record<CloudOperation, { call: string; verb: string; target: string }> = {
  start: { call: 'StartInstances', verb: 'started', target: 'running' },
  stop: { call: 'StopInstances', verb: 'stopped', target: 'stopped' },
  reboot: { call: 'RebootInstances', verb: 'rebooted', target: 'running' },
  terminate: { call: 'TerminateInstances', verb: 'terminated', target: 'terminated' },
};

/**
 * Runs cloud executions on AWS EC2, in this process (executions/service-executor.ts: the
 * execution is `running` before the call, so a node that dies meanwhile leaves it `lost`, never
 * called twice). One operation on one instance with the rule's credential, then the instance's
 * state read until it is the one asked for, within the spec's timeout. The reason records what
 * EC2 answered: the state before, after the call, and at the end.
 */
export class AwsCloudRunner implements Extract<ServiceRunner, { mode: 'in_process' }> {
  readonly kind = 'cloud';
  readonly mode = 'in_process';
  private readonly clients = new Map<string, EC2Client>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly settings: AwsSettings = {},
  ) {}

  async run(execution: ExecutionRow, signal: AbortSignal): Promise<RunEnd> {
    const spec = JSON.parse(execution.spec) as unknown;
    if (!isCloudSpec(spec)) return { state: 'failed', reason: 'not a cloud execution' };
    const credential = spec.credentialId === null ? undefined : await this.db.selectFrom('credentials').selectAll().where('id', '=', spec.credentialId).where('tenant_id', '=', execution.tenant_id).executeTakeFirst();
    if (!credential) return { state: 'failed', reason: `the rule's credential ${spec.credentialId ?? '(none set)'} does not exist in this tenant: set action.credentialId to one of GET /api/v1/credentials; EC2 was not called` };
    const secret = openCredential<'aws'>(this.box, credential);
    const client = this.clientFor(`${credential.id} ${credential.updated_at} ${spec.region}`, spec.region, secret);
    const { call, verb, target } = OPERATIONS[spec.operation];
    const started = performance.now();
    try {
      const change = await this.call(client, spec, signal);
      const final = await this.waitFor(client, spec, target, signal);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (final !== target) return { state: 'failed', reason: `ec2:${call} on ${spec.instanceId} in ${spec.region}: ${change}; it was ${final ?? 'not found'} after ${seconds} s, not ${target} (timeoutSeconds ${spec.waitSeconds})` };
      return { state: 'succeeded', reason: `${verb} ${spec.instanceId} in ${spec.region} (ec2:${call}): ${change}, ${target} after ${seconds} s` };
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: providerError('AWS', `ec2:${call} on ${spec.instanceId} in ${spec.region}`, error, [secret.secretAccessKey, secret.sessionToken]).message };
    }
  }

  /**
   * One client per (credential as last saved, region), the least recently used dropped past
   * CLIENTS: a client per run cost ~4 ms of CPU of the ~8 ms a run took (bench/cloud.js). A
   * rotated secret changes the credential's updated_at, so the next run makes a new client.
   */
  private clientFor(key: string, region: string, secret: Secret<'aws'>): EC2Client {
    let client = this.clients.get(key);
    if (client) this.clients.delete(key);
    else {
      client = new EC2Client({
        region,
        ...(this.settings.awsEndpoint ? { endpoint: this.settings.awsEndpoint } : {}),
        credentials: { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken ? { sessionToken: secret.sessionToken } : {}) },
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

  /** Reads the instance's state until it is `target` or the spec's timeout passes; the last state read. */
  private async waitFor(client: EC2Client, spec: CloudSpec, target: string, signal: AbortSignal): Promise<string | undefined> {
    const deadline = performance.now() + spec.waitSeconds * 1000;
    const pollMs = this.settings.pollMs ?? 5000;
    for (;;) {
      const answer = await client.send(new DescribeInstancesCommand({ InstanceIds: [spec.instanceId] }), { abortSignal: signal });
      const state = answer.Reservations?.[0]?.Instances?.[0]?.State?.Name;
      if (state === target || performance.now() + pollMs > deadline) return state;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}

function changeWords(changes: Array<{ PreviousState?: { Name?: string }; CurrentState?: { Name?: string } }> | undefined): string {
  const change = changes?.[0];
  return `${change?.PreviousState?.Name ?? '?'} → ${change?.CurrentState?.Name ?? '?'}`;
}
