import { alarmNamePattern, globPattern } from '../rules/alarm-name.js';
import type { Trigger } from '../rules/schema.js';

export type AlertTrigger = Extract<Trigger, { type: 'alert' }>;

/** What a rule's alert trigger is matched against: one alert of an integration (integrations/notification.ts). */
export interface AlertFacts {
  alarmName: string | undefined;
  severity: string | undefined;
  state: 'firing' | 'resolved';
  labels: Readonly<Record<string, string>>;
  /** The host the tool names (Alertmanager instance without its port, Monasca hostname dimension). */
  hostName: string | undefined;
  /** The label the tool read the host from, when it reads one (Alertmanager's `instance`, or its integration's config.hostLabel). */
  hostLabel?: string | undefined;
}

/**
 * Whether an alert raises the rule: its name, severity and labels match. Its state does not take
 * part: a resolved alert of a rule that acts on firing is still recorded (`actsOn` says whether it acts).
 */
export function matchesAlert(trigger: AlertTrigger, alert: AlertFacts): boolean {
  if (trigger.alarmName !== undefined && !namePattern(trigger.alarmName)?.test(alert.alarmName ?? '')) return false;
  if (trigger.severity && !trigger.severity.some((s) => s.toLowerCase() === (alert.severity ?? '').toLowerCase())) return false;
  for (const [name, wanted] of Object.entries(trigger.labels ?? {})) {
    const value = alert.labels[name];
    if (value === undefined || !labelPattern(wanted)?.test(value)) return false;
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

/**
 * Compiled once per pattern: an alert is matched against every rule of its integration in the
 * ingest transaction. A pattern that does not compile (stored before validation refused it)
 * matches nothing rather than failing the batch the alert shares with others.
 */
const compiled = new Map<string, RegExp | null>();
const MAX_COMPILED = 10_000;

function cachedPattern(key: string, make: () => RegExp): RegExp | null {
  let pattern = compiled.get(key);
  if (pattern !== undefined) return pattern;
  try {
    pattern = make();
  } catch {
    pattern = null;
  }
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(key, pattern);
  return pattern;
}

function namePattern(text: string): RegExp | null {
  return cachedPattern(`name\n${text}`, () => alarmNamePattern(text));
}

function labelPattern(glob: string): RegExp | null {
  return cachedPattern(`label\n${glob}`, () => globPattern(glob));
}
