/**
 * Runs the service makes itself instead of a host's agent (action kinds of actions/, today
 * email_runbook): no host, and a spec told apart from a script's by its `kind`.
 */
export interface ServiceRunSpec {
  kind: 'email_runbook';
  timeoutSeconds: number;
}

/** Shown where an execution has no host: the service itself runs it. */
export const SERVICE_HOSTNAME = '(service)';

export function isServiceRun(spec: unknown): spec is ServiceRunSpec {
  return typeof spec === 'object' && spec !== null && typeof (spec as { kind?: unknown }).kind === 'string';
}
