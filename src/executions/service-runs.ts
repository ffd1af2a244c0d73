/** Shown where an execution has no host: the service itself runs it (executions/service-executor.ts). */
export const SERVICE_HOSTNAME = '(service)';

/** The action kind a stored spec names: a run by the service names its kind; a script's (an agent's) never did. */
export function kindOfSpec(spec: { kind?: unknown }): string {
  return typeof spec.kind === 'string' ? spec.kind : 'script';
}
