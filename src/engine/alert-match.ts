import type { Trigger } from '../rules/schema.js';

type AlertTrigger = Extract<Trigger, { type: 'alert' }>;

/** What a rule's alert trigger is matched against: one alert of an integration (integrations/notification.ts). */
export interface AlertFacts {
  alarmName: string | undefined;
  severity: string | undefined;
  state: 'firing' | 'resolved';
  labels: Readonly<Record<string, string>>;
  /** The host the tool names (Alertmanager instance without its port, Monasca hostname dimension). */
  hostName: string | undefined;
}

/**
 * Whether an alert raises the rule: its name, severity and labels match. Its state does not take
 * part: a resolved alert of a rule that acts on firing is still recorded (`actsOn` says whether it acts).
 */
export function matchesAlert(trigger: AlertTrigger, alert: AlertFacts): boolean {
  if (trigger.alarmName !== undefined && !namePattern(trigger.alarmName).test(alert.alarmName ?? '')) return false;
  if (trigger.severity && !trigger.severity.some((s) => s.toLowerCase() === (alert.severity ?? '').toLowerCase())) return false;
  for (const [name, wanted] of Object.entries(trigger.labels ?? {})) {
    const value = alert.labels[name];
    if (value === undefined || !globPattern(wanted).test(value)) return false;
  }
  return true;
}

/** Whether the alert's state is one the rule acts on (default: firing only). */
export function actsOn(trigger: AlertTrigger, state: AlertFacts['state']): boolean {
  const on = trigger.on ?? 'firing';
  return on === 'both' || on === state;
}

/** The host a rule acts on for this alert: the label the rule names, or the tool's own. */
export function alertHost(trigger: AlertTrigger, alert: AlertFacts): string | undefined {
  return trigger.hostLabel ? alert.labels[trigger.hostLabel] : alert.hostName;
}

/** A pattern between slashes is a regular expression; anything else a glob (* and ?), whole name. */
export function namePattern(text: string): RegExp {
  const regex = /^\/(.+)\/([i]?)$/.exec(text);
  return regex ? new RegExp(regex[1]!, regex[2]) : globPattern(text);
}

function globPattern(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's');
}
