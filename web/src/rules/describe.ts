import type { Action, ActionLimit, CloudAction, CloudOperation, Flapping, InfrastructureType, Interpreter, Target, Trigger, TriggerType } from '../api/types';
import { PROVIDER_INFO, providerOfInfrastructure } from '../credentials/providers';
import { seconds } from '../ui/format';

export const TRIGGER_LABELS: Record<TriggerType, string> = { webhook: 'Webhook', alert: 'Alert', cron: 'Schedule' };

export const INFRASTRUCTURE_LABELS: Record<InfrastructureType, string> = {
  On_Premise: 'On premise',
  CLOUD_EC2: 'AWS EC2',
  CLOUD_AZURE: 'Azure',
  CLOUD_GCP: 'Google Cloud',
  CLOUD_OPENSTACK: 'OpenStack',
};

export const INTERPRETER_LABELS: Record<Interpreter, string> = { sh: 'sh', bash: 'bash', python: 'Python', pwsh: 'PowerShell' };

// "Webhook", "Alert Disk*", "Schedule 30 2 * * * (Europe/Berlin)": a schedule without a zone is read in UTC.
export function describeTrigger(trigger: Pick<Trigger, 'type' | 'schedule' | 'timezone' | 'alarmName'>): string {
  if (trigger.type === 'cron') return `Schedule ${trigger.schedule ?? ''} (${trigger.timezone ?? 'UTC'})`;
  if (trigger.type === 'alert' && trigger.alarmName) return `Alert ${trigger.alarmName}`;
  return TRIGGER_LABELS[trigger.type];
}

export function describeAction(action: Action): string {
  switch (action.type) {
    case 'script':
      return `Script · ${action.flavour}`;
    case 'cloud':
      return `Cloud · ${action.operation}`;
    case 'cli':
      return 'CLI runbook on the CLI Machine';
    case 'graph_snapshot':
      return 'Graph snapshot';
    case 'email_runbook':
      return 'Email runbook';
  }
}

const OPERATION_WORDS: Record<CloudOperation, { verb: string; state: string }> = {
  start: { verb: 'Start', state: 'running' },
  stop: { verb: 'Stop', state: 'stopped' },
  reboot: { verb: 'Reboot', state: 'running again' },
  terminate: { verb: 'Terminate', state: 'terminated' },
};

/** "the EC2 instance named in InstanceId", "the EC2 instances i-0abc…, i-0def…": what a cloud action acts on. */
export function describeCloudInstances(action: CloudAction, infrastructureType: InfrastructureType): string {
  const provider = action.provider ?? providerOfInfrastructure(infrastructureType) ?? 'aws';
  const { instance, instances: plural } = PROVIDER_INFO[provider];
  const instances = action.instances ?? { from: 'payload' as const };
  if ('ids' in instances) {
    const shown = instances.ids.slice(0, 3).join(', ');
    const more = instances.ids.length > 3 ? ` and ${instances.ids.length - 3} more` : '';
    return `the ${instances.ids.length === 1 ? instance : plural} ${shown}${more}`;
  }
  if ('tags' in instances) return `the ${plural} tagged ${Object.entries(instances.tags).map(([key, value]) => `${key}=${value}`).join(', ')}`;
  return `the ${instance} named in ${instances.field ?? 'InstanceId'}`;
}

/**
 * A cloud action in words: "Reboot the EC2 instance named in InstanceId, in eu-west-1, with
 * credential “aws prod”". `credentialName` is the credential's name when known (else its id shows).
 */
export function describeCloudAction(action: CloudAction, infrastructureType: InfrastructureType, credentialName?: string): string {
  const region = action.region ? `, in ${action.region}` : '';
  const credential = credentialName ? `, with credential “${credentialName}”` : action.credentialId ? `, with credential ${action.credentialId}` : ', with no credential';
  return `${OPERATION_WORDS[action.operation].verb} ${describeCloudInstances(action, infrastructureType)}${region}${credential}`;
}

/** How long a cloud action waits, and for what: "up to 300 s (5 min) for it to be running again". */
export function describeCloudWait(action: CloudAction): string {
  return `up to ${seconds(action.timeoutSeconds ?? 300)} for each instance to be ${OPERATION_WORDS[action.operation].state}`;
}

/** How a tag target picks its hosts: `pick`, else one for a schedule and every host otherwise. */
export function pickOfTarget(target: Target, trigger: TriggerType): 'one' | 'all' {
  return target.pick ?? (trigger === 'cron' ? 'one' : 'all');
}

export function describeTarget(target: Target, trigger: TriggerType = 'webhook'): string {
  switch (target.type) {
    case 'trigger_host':
      return 'Trigger host';
    case 'specific_host':
      return `Host ${target.hostname ?? '?'}`;
    case 'specific_tags':
      return `${pickOfTarget(target, trigger) === 'one' ? 'One online host of tags' : 'Tags'} ${(target.tags ?? []).join(' + ')}`;
    case 'cli_machine':
      return 'CLI machine';
  }
}

export function describeFlapping(flapping: Flapping): string {
  if (!flapping.enabled) return 'off';
  const window = seconds(flapping.windowSeconds ?? 0);
  const changes = flapping.maxStateChanges === undefined ? '' : ` or ${flapping.maxStateChanges} state changes`;
  return `more than ${flapping.maxEvents} events${changes} per host in ${window}: actions pause until ${seconds(flapping.cooldownSeconds ?? 0)} of quiet`;
}

/** How a tag target rolls over its hosts; null for targets that are not a fan-out. */
export function describeFanOut(target: Target, trigger: TriggerType = 'webhook'): string | null {
  if (target.type !== 'specific_tags' || pickOfTarget(target, trigger) === 'one') return null;
  const pace = target.maxConcurrency === undefined ? 'every host at once' : `at most ${target.maxConcurrency} ${target.maxConcurrency === 1 ? 'host' : 'hosts'} at once`;
  const stop = target.maxErrors === undefined ? 'never stops on failures' : `stops after ${target.maxErrors} failed ${target.maxErrors === 1 ? 'host' : 'hosts'}`;
  return `${pace}, ${stop}`;
}

/** What an action limit counts per: hosts for a script, instances for a cloud action, the host the alert names for the other runs by the service. */
export type LimitUnit = 'host' | 'instance' | 'alert host';

export function limitUnitOf(type: Action['type']): LimitUnit {
  return type === 'script' ? 'host' : type === 'cloud' ? 'instance' : 'alert host';
}

/** An action limit per host escalates (or drops); a run by the service at its limit is only recorded: the provider is not called, the CLI not run. */
export function describeLimit(limit: ActionLimit | null | undefined, per: LimitUnit = 'host'): string {
  if (!limit) return 'none';
  if (per === 'instance') return `${limit.max} per instance per ${seconds(limit.windowSeconds)}, then recorded as limited without calling the provider`;
  if (per === 'alert host') return `${limit.max} per host the alert names per ${seconds(limit.windowSeconds)}, then recorded as limited without running`;
  return `${limit.max} per host per ${seconds(limit.windowSeconds)}, then ${limit.onLimit === 'drop' ? 'drop' : 'escalate to a human'}`;
}
