import type { Action, ActionLimit, Flapping, InfrastructureType, Interpreter, Target, Trigger, TriggerType } from '../api/types';
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
      return 'CLI script';
    case 'graph_snapshot':
      return 'Graph snapshot';
    case 'email_runbook':
      return 'Email runbook';
  }
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

export function describeLimit(limit: ActionLimit | null | undefined): string {
  if (!limit) return 'none';
  return `${limit.max} per host per ${seconds(limit.windowSeconds)}, then ${limit.onLimit === 'drop' ? 'drop' : 'escalate to a human'}`;
}
