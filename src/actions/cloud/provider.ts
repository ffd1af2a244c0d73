import { setTimeout as sleep } from 'node:timers/promises';
import { PitcrewError } from '../../errors/catalogue.js';
import type { RunEnd } from '../../executions/service-executor.js';
import type { ProbeResult, Secret } from '../../credentials/schema.js';
import type { CloudSpec } from './kind.js';

/** One cloud's side of a cloud execution: the call with the credential, then the wait for the state. */
export interface CloudProvider<P extends CloudSpec['provider'] = CloudSpec['provider']> {
  /** `credentialKey` changes whenever the credential is saved again: what a provider may cache under. */
  run(spec: CloudSpec, secret: Secret<P>, credentialKey: string, signal: AbortSignal): Promise<RunEnd>;
  /**
   * The instances that carry every one of `tags` (name: value) where the credential can see
   * (`region`: the spec's region, '' for none), as `run` takes them in `spec.instanceId`, sorted;
   * instances already gone (terminated, deleted) left out. Throws as `run` fails: the provider's
   * refusal or silence, through providerError.
   */
  instancesTagged(tags: Readonly<Record<string, string>>, region: string, secret: Secret<P>, credentialKey: string, signal: AbortSignal): Promise<string[]>;
  /**
   * "Test credential": one harmless read with the secret, as the runs call the provider. Throws a
   * PitcrewError saying what the provider answered (502) or that it did not answer (503).
   */
  probe(secret: Secret<P>): Promise<ProbeResult>;
  close(): void;
}

/** How long a provider may take to answer a test before it counts as unreachable. */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * The provider's refusal (it answered with an HTTP status: a code and a message) or its silence,
 * with every secret value blotted out.
 */
export function providerError(name: string, call: string, error: unknown, secrets: Array<string | undefined>): PitcrewError {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; status?: number };
  const message = redact(String(e.message ?? error), secrets);
  const status = e.$metadata?.httpStatusCode ?? e.status;
  if (status !== undefined) {
    return new PitcrewError('PITCREW_ERR_PROVIDER_REFUSED', `${name} refused ${call}: ${e.name ?? 'error'} (HTTP ${status}): ${message}`);
  }
  return new PitcrewError('PITCREW_ERR_PROVIDER_UNAVAILABLE', `${name} did not answer ${call}: ${message}; check the service's network access to the provider (${REACHED_THROUGH[name] ?? 'its endpoint settings'})`);
}

/** The settings that say where each provider's calls go, named when it does not answer. */
const REACHED_THROUGH: Record<string, string> = {
  AWS: 'PITCREW_AWS_ENDPOINT_URL, PITCREW_AWS_STS_ENDPOINT_URL',
  Azure: 'PITCREW_AZURE_AUTHORITY_HOST, PITCREW_AZURE_RESOURCE_MANAGER_URL, PITCREW_AZURE_CA_FILE',
  GCP: 'PITCREW_GCP_COMPUTE_URL, PITCREW_GCP_TOKEN_URL',
  OpenStack: 'the credential\'s authUrl, under PITCREW_EGRESS_ALLOW_NETWORKS',
};

function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[REDACTED]');
  return out;
}

/** What each operation does to a VM, in words, and the state the run waits for is the provider's. */
export const VERBS = { start: 'started', stop: 'stopped', reboot: 'rebooted', terminate: 'terminated' } as const;

/**
 * Reads a state until it is the one wanted or `waitSeconds` would pass; the last state read. A
 * cancel or a timeout (`signal`) ends the wait at once, not at the next read.
 */
export async function waitForState<S>(read: () => Promise<S>, done: (state: S) => boolean, waitSeconds: number, pollMs: number, signal: AbortSignal): Promise<S> {
  const deadline = performance.now() + waitSeconds * 1000;
  for (;;) {
    const state = await read();
    if (done(state) || performance.now() + pollMs > deadline) return state;
    await sleep(pollMs, undefined, { signal }).catch(() => {
      throw signal.reason as Error;
    });
  }
}
