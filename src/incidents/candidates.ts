import { labelDefaults, labelPrelude, type LabelDefault } from '../runbooks/library/alert-labels.js';
import { STARTER_RUNBOOKS } from '../runbooks/library/catalogue.js';
import { alarmKind, starterFor, type AlarmKind, type StarterSuggestion } from './alarm-kind.js';
import { byText, meanSeconds, ruleCovers, seconds, type AlertRuleFacts, type DayGroup, type Period } from './analytics.js';

/*
 * Automation candidates (issue 38.4, docs/incidents.md#automation-candidates), the pure part: the
 * alarms of an integration that keep firing, take long to resolve and that no rule acts on, ranked
 * by the incident time automation could have saved, each with why in words and what the one-click
 * rule wizard fills in.
 */

export interface CandidateOptions {
  limit: number;
  /** At least this many resolved incidents in the period: repetitive. */
  minCount: number;
  /** At least this mean resolution time: slow enough that someone had to act. */
  minMeanSeconds: number;
}

/** A new automation's safety, preset: the documented flapping defaults turned on (docs/safety.md). */
export const PRESET_FLAPPING = { enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600 } as const;
/** Three runs per host per hour at most, then a person is told: a fix that does not hold is not repeated all night. */
export const PRESET_ACTION_LIMIT = { max: 3, windowSeconds: 3600, onLimit: 'escalate' } as const;

export interface Candidate {
  integrationId: string;
  alarmName: string;
  /** Resolved incidents in the period (of the severities no enabled rule covers). */
  count: number;
  meanSeconds: number;
  /** count × mean: the incident time in the period. The ranking. */
  totalSeconds: number;
  severities: string[];
  kind: AlarmKind;
  /** Rules that cover the alarm but are off: turning one on may be the better fix. */
  rulesOff: Array<{ id: string; name: string }>;
  why: string;
  /** The host most of its latest incidents were on (the wizard's preview); filled by the reads. */
  typicalHostname: string | null;
  /** What the rule wizard fills in. */
  suggestion: {
    name: string;
    trigger: { type: 'alert'; integrationId: string; alarmName: string; severity?: string[] };
    target: { type: 'trigger_host' };
    starterRunbook: StarterRunbookSuggestion | null;
    /** The label names of the alarm's newest alert (its runs read them as LABEL_<name>); filled by the reads. */
    labels: string[];
    flapping: typeof PRESET_FLAPPING;
    actionLimit: typeof PRESET_ACTION_LIMIT;
  };
}

/** The starter, and how the rule's copy takes its variables from the alert's labels (runbooks/library/alert-labels.ts). */
export interface StarterRunbookSuggestion extends StarterSuggestion {
  labelDefaults: LabelDefault[];
  /** The lines the wizard writes at the top of the starter's script: each variable from its labels, unless set. */
  prelude: string;
}

interface Tally {
  integrationId: string;
  alarmName: string;
  count: number;
  totalMs: number;
  severities: Set<string | null>;
  coveredSeverities: Set<string | null>;
  rulesOff: Map<string, string>;
}

/**
 * The candidates among the period's groups, best first: integrations' alarms only (a webhook's
 * alarm reaches pitcrew through a rule already), their severities that no enabled rule covers
 * (analytics.ts ruleCovers), at least `minCount` incidents with a mean of at least
 * `minMeanSeconds`; ranked by total incident time, then count, then name and integration.
 */
export function rankCandidates(groups: readonly DayGroup[], rules: readonly AlertRuleFacts[], period: Period, options: CandidateOptions): Candidate[] {
  const enabled = rules.filter((rule) => rule.enabled);
  const off = rules.filter((rule) => !rule.enabled);
  const tallies = new Map<string, Tally>();
  const covered = new Map<string, boolean>();
  for (const g of groups) {
    if (g.integrationId === null || g.resolved === 0) continue;
    const key = `${g.integrationId}\n${g.alarmName}`;
    let tally = tallies.get(key);
    if (!tally) {
      tally = { integrationId: g.integrationId, alarmName: g.alarmName, count: 0, totalMs: 0, severities: new Set(), coveredSeverities: new Set(), rulesOff: new Map() };
      tallies.set(key, tally);
    }
    const severityKey = `${key}\n${g.severity ?? ''}`;
    let isCovered = covered.get(severityKey);
    if (isCovered === undefined) {
      isCovered = enabled.some((rule) => ruleCovers(rule, g.integrationId, g.alarmName, g.severity));
      covered.set(severityKey, isCovered);
      for (const rule of off) if (ruleCovers(rule, g.integrationId, g.alarmName, g.severity)) tally.rulesOff.set(rule.id, rule.name);
    }
    if (isCovered) {
      tally.coveredSeverities.add(g.severity);
      continue;
    }
    tally.severities.add(g.severity);
    tally.count += g.resolved;
    tally.totalMs += g.totalMs;
  }
  const days = period.endDay - period.firstDay;
  return [...tallies.values()]
    .filter((t) => t.count >= options.minCount && t.count > 0 && t.totalMs / t.count >= options.minMeanSeconds * 1000)
    .sort((a, b) => b.totalMs - a.totalMs || b.count - a.count || byText(a.alarmName, b.alarmName) || byText(a.integrationId, b.integrationId))
    .slice(0, options.limit)
    .map((t) => candidateOf(t, days));
}

function candidateOf(t: Tally, days: number): Candidate {
  const kind = alarmKind(t.alarmName);
  const starter = starterFor(kind);
  const starterRunbook = starter && { ...starter, labelDefaults: [], prelude: '' };
  const mean = meanSeconds(t.totalMs, t.count)!;
  const severities = [...t.severities].filter((s): s is string => s !== null).sort(byText);
  // Some severities have a rule already: the new one takes the others, when each has a name to match.
  const narrowed = t.coveredSeverities.size > 0 && !t.severities.has(null) && severities.length > 0;
  const rulesOff = [...t.rulesOff].map(([id, name]) => ({ id, name }));
  const nobody = narrowed ? `no rule acts on its ${severities.join(', ')} alerts` : 'no rule acts on it';
  const off = rulesOff.length === 0 ? '' : `; ${rulesOff.length === 1 ? `rule "${rulesOff[0]!.name}" matches it but is off` : `${rulesOff.length} rules match it but are off`}`;
  return {
    integrationId: t.integrationId,
    alarmName: t.alarmName,
    count: t.count,
    meanSeconds: mean,
    totalSeconds: seconds(t.totalMs),
    severities,
    kind,
    rulesOff,
    why: `fired ${t.count} ${t.count === 1 ? 'time' : 'times'} in ${days} ${days === 1 ? 'day' : 'days'}, resolved in ${humanDuration(mean)} on average, ${nobody}${off}`,
    typicalHostname: null,
    suggestion: {
      name: `${t.alarmName}: ${starterRunbook?.name ?? 'automation'}`.slice(0, 200),
      trigger: { type: 'alert', integrationId: t.integrationId, alarmName: exactAlarmName(t.alarmName), ...(narrowed ? { severity: severities } : {}) },
      target: { type: 'trigger_host' },
      starterRunbook,
      labels: [],
      flapping: PRESET_FLAPPING,
      actionLimit: PRESET_ACTION_LIMIT,
    },
  };
}

/**
 * The candidate with the label names its alarm's newest alert has: the starter's variables that
 * a label obviously gives (ServiceName from `service`, …) and the script lines that take them.
 */
export function withAlertLabels(candidate: Candidate, labels: readonly string[]): Candidate {
  const { starterRunbook } = candidate.suggestion;
  const starter = starterRunbook && STARTER_RUNBOOKS.find((entry) => entry.slug === starterRunbook.slug);
  const defaults = starter ? labelDefaults(starter, labels) : [];
  return {
    ...candidate,
    suggestion: {
      ...candidate.suggestion,
      labels: [...labels].sort(byText),
      starterRunbook: starterRunbook && { ...starterRunbook, labelDefaults: defaults, prelude: starter ? labelPrelude(starter.interpreter, defaults) : '' },
    },
  };
}

/**
 * An alert trigger's alarmName that matches this name and no other (rules/alarm-name.ts): the name
 * itself, unless it holds a glob's wildcard or looks like a /regular expression/; then a regular
 * expression of it, anchored.
 */
export function exactAlarmName(name: string): string {
  if (!/[*?]/.test(name) && !/^\/.+\/i?$/.test(name)) return name;
  return `/^${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$/`;
}

/** A duration as people say it: 45 s, 38 min, 2.5 h, 3.1 days. */
export function humanDuration(totalSeconds: number): string {
  if (Math.round(totalSeconds) < 60) return `${Math.round(totalSeconds)} s`;
  if (Math.round(totalSeconds / 60) < 60) return `${Math.round(totalSeconds / 60)} min`;
  if (Number(trimmed(totalSeconds / 3600)) < 24) return `${trimmed(totalSeconds / 3600)} h`;
  const days = trimmed(totalSeconds / 86_400);
  return `${days} ${days === '1' ? 'day' : 'days'}`;
}

function trimmed(n: number): string {
  return n.toFixed(1).replace(/\.0$/, '');
}
