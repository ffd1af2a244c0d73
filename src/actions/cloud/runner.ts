import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { openCredential } from '../../credentials/repository.js';
import type { ProbeResult, Provider, Secret } from '../../credentials/schema.js';
import type { RunEnd, ServiceRunner } from '../../executions/service-executor.js';
import type { SecretBox } from '../../identity/secret-box.js';
import type { Dialect } from '../../store/database.js';
import type { Database, ExecutionRow } from '../../store/schema.js';
import { isCloudSpec, taggedWords, type CloudSpec } from './kind.js';
import { queueTagged } from './tagged.js';
import type { CloudProvider } from './provider.js';

/**
 * Runs cloud executions in this process (executions/service-executor.ts: the execution is
 * `running` before the call, so a node that dies meanwhile leaves it `lost`, never called twice):
 * the rule's credential, read in the execution's own tenant and of the spec's provider, opened
 * for the provider's call, which it never leaves.
 */
/** The clouds this version runs actions on, each with its provider. */
export type CloudProviders = { [P in CloudSpec['provider']]: CloudProvider<P> };

/** "Test credential": one harmless read at its provider. */
export function probeCloud(providers: CloudProviders, provider: Provider, secret: Secret): Promise<ProbeResult> {
  const cloud: CloudProvider = providers[provider];
  return cloud.probe(secret);
}

export class CloudRunner implements Extract<ServiceRunner, { mode: 'in_process' }> {
  readonly kind = 'cloud';
  readonly mode = 'in_process';

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly box: SecretBox,
    private readonly providers: CloudProviders,
    private readonly logger: Pick<FastifyBaseLogger, 'warn'>,
  ) {}

  /** The run; one that fails leaves one log line with its reason, which never holds a secret (provider.ts). */
  async run(execution: ExecutionRow, signal: AbortSignal): Promise<RunEnd> {
    const spec = JSON.parse(execution.spec) as unknown;
    if (!isCloudSpec(spec)) return { state: 'failed', reason: 'not a cloud execution' };
    let end: RunEnd;
    try {
      end = await this.attempt(execution, spec, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      end = { state: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
    if ('state' in end && end.state === 'failed') {
      const instance = spec.tags ? { tags: spec.tags } : { instanceId: spec.instanceId };
      this.logger.warn({ executionId: execution.id, ruleId: execution.rule_id, provider: spec.provider, operation: spec.operation, region: spec.region, ...instance, reason: end.reason }, 'cloud action failed');
    }
    return end;
  }

  private async attempt(execution: ExecutionRow, spec: CloudSpec, signal: AbortSignal): Promise<RunEnd> {
    const credential = spec.credentialId === null ? undefined : await this.db.selectFrom('credentials').selectAll().where('id', '=', spec.credentialId).where('tenant_id', '=', execution.tenant_id).executeTakeFirst();
    if (!credential) return { state: 'failed', reason: `the rule's credential ${spec.credentialId ?? '(none set)'} does not exist in this tenant: set action.credentialId to one of GET /api/v1/credentials; the provider was not called` };
    if (credential.provider !== spec.provider) return { state: 'failed', reason: `the rule's credential "${credential.name}" is for ${credential.provider}, and the action for ${spec.provider}: the provider was not called` };
    const key = `${credential.id} ${credential.updated_at}`;
    const provider: CloudProvider = this.providers[spec.provider];
    const secret = openCredential<CloudSpec['provider']>(this.box, credential);
    if (!spec.tags) return provider.run(spec, secret, key, signal);
    let found: string[];
    try {
      found = await provider.instancesTagged(spec.tags, spec.region, secret, key, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: 'failed', reason: `finding the ${taggedWords(spec.provider, spec.tags)}: ${error instanceof Error ? error.message : String(error)}` };
    }
    return queueTagged(this.db, this.dialect, execution, spec, found);
  }

  close(): void {
    for (const provider of Object.values(this.providers)) provider.close();
  }
}
