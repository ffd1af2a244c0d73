import type { RunEnd } from '../../executions/service-executor.js';
import type { Secret } from '../../credentials/schema.js';
import type { CloudSpec } from './kind.js';

/** One cloud's side of a cloud execution: the call with the credential, then the wait for the state. */
export interface CloudProvider<P extends CloudSpec['provider'] = CloudSpec['provider']> {
  /** `credentialKey` changes whenever the credential is saved again: what a provider may cache under. */
  run(spec: CloudSpec, secret: Secret<P>, credentialKey: string, signal: AbortSignal): Promise<RunEnd>;
  close(): void;
}

/** What each operation does to a VM, in words, and the state the run waits for is the provider's. */
export const VERBS = { start: 'started', stop: 'stopped', reboot: 'rebooted', terminate: 'terminated' } as const;

/** Reads a state until it is the one wanted or `waitSeconds` would pass; the last state read. */
export async function waitForState<S>(read: () => Promise<S>, done: (state: S) => boolean, waitSeconds: number, pollMs: number): Promise<S> {
  const deadline = performance.now() + waitSeconds * 1000;
  for (;;) {
    const state = await read();
    if (done(state) || performance.now() + pollMs > deadline) return state;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
