import { PitcrewError } from '../errors/catalogue.js';
import { alarmNamePattern } from '../rules/alarm-name.js';
import { DAY_MS } from './rollup.js';

/*
 * The analytics over resolved incidents (issue 38.3, docs/incidents.md#analytics), the pure part:
 * the numbers the dashboard shows, from the rows analytics-reads.ts reads. No database here.
 *
 * The set: incidents resolved within the period, a range of whole UTC days. Counts, means, MTTR
 * by day and the automation share come from per-day groups (incident_days); p50/p90 come from the
 * database over the incidents themselves, by the definition of `percentile` below.
 */

/** The resolved incidents of one alarm (integration, name, severity) on one UTC day: a row of incident_days. */
export interface DayGroup {
  /** Days since 1970-01-01 UTC. */
  day: number;
  integrationId: string | null;
  alarmName: string;
  severity: string | null;
  resolved: number;
  automated: number;
  /** Sum of resolution times (resolved_at - opened_at), ms. */
  totalMs: number;
  maxMs: number;
}

/** A range of whole UTC days: [firstDay, endDay). */
export interface Period {
  firstDay: number;
  endDay: number;
}

export const DEFAULT_PERIOD_DAYS = 30;

/** Days since 1970-01-01 UTC of a time (ms). */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** A day as YYYY-MM-DD (UTC). */
export function dayText(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The period a query names: `from` and `to` are dates (YYYY-MM-DD) or date-times with a zone
 * (RFC 3339), each naming its UTC day; both days are in the period. Default: the 30 days ending
 * today (UTC). A date-time is taken as its UTC day, so every number is over whole days: the day
 * groups and the incidents agree, and MTTR by day has no partial first day.
 */
export function periodOf(query: { from?: string | undefined; to?: string | undefined }, now: number): Period {
  const to = query.to === undefined ? dayOf(now) : parseDay(query.to, 'to');
  const from = query.from === undefined ? to - (DEFAULT_PERIOD_DAYS - 1) : parseDay(query.from, 'from');
  if (from > to) {
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `from (${dayText(from)}) is later than to (${dayText(to)}): no day is in the period; swap them`, {
      fieldErrors: [{ path: '/querystring/from', message: 'must be on or before to' }],
    });
  }
  return { firstDay: from, endDay: to + 1 };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

function parseDay(text: string, field: 'from' | 'to'): number {
  const date = DATE.exec(text);
  let ms = Number.NaN;
  if (date) {
    ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    // Date.UTC rolls 2026-02-30 over to March: a day that does not exist is refused, not moved.
    if (Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) !== text) ms = Number.NaN;
  } else if (DATE_TIME.test(text)) {
    ms = Date.parse(text.replace(' ', 'T'));
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `${field} "${text}" is not a date: give a day as 2026-11-30, or a date-time with its zone as 2026-11-30T08:00:00Z (its UTC day is taken)`, {
      fieldErrors: [{ path: `/querystring/${field}`, message: 'a date (YYYY-MM-DD) or an RFC 3339 date-time, from 1970 on' }],
    });
  }
  return dayOf(ms);
}

/**
 * The p-th percentile (0 ≤ p ≤ 1) of values sorted ascending, by linear interpolation between the
 * closest ranks: h = (n − 1)·p, the value at index ⌊h⌋ plus (h − ⌊h⌋) of the step to the next.
 * Hyndman and Fan's definition 7, the one of PostgreSQL's percentile_cont, SQLite's
 * percentile_cont (the analytics compute it there), spreadsheets' PERCENTILE.INC and NumPy's
 * default. p50 of 1, 2, 3, 10 is 2.5; p90 of ten values 1…10 is 9.1.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('no values');
  const h = (sorted.length - 1) * p;
  const low = Math.floor(h);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low]! + (h - low) * (sorted[high]! - sorted[low]!);
}

/** Milliseconds as seconds, to the millisecond. */
export function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

/** The mean of a sum over a count, in seconds to the millisecond; null for no incident. */
export function meanSeconds(totalMs: number, count: number): number | null {
  return count === 0 ? null : seconds(totalMs / count);
}

/** The numbers of one alarm name (all integrations and severities) over the period. */
export interface AlarmTotals {
  alarmName: string;
  count: number;
  automated: number;
  totalMs: number;
  maxMs: number;
}

export function totalsByAlarm(groups: readonly DayGroup[]): AlarmTotals[] {
  const by = new Map<string, AlarmTotals>();
  for (const g of groups) {
    let totals = by.get(g.alarmName);
    if (!totals) by.set(g.alarmName, (totals = { alarmName: g.alarmName, count: 0, automated: 0, totalMs: 0, maxMs: 0 }));
    totals.count += g.resolved;
    totals.automated += g.automated;
    totals.totalMs += g.totalMs;
    totals.maxMs = Math.max(totals.maxMs, g.maxMs);
  }
  return [...by.values()].filter((t) => t.count > 0);
}

/** Code-point order: the same on every machine, unlike localeCompare. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Most frequent first; ties by name. */
export function frequentAlarms(totals: readonly AlarmTotals[], limit: number): AlarmTotals[] {
  return [...totals].sort((a, b) => b.count - a.count || byText(a.alarmName, b.alarmName)).slice(0, limit);
}

/** Longest mean resolution first; ties: the more frequent first, then by name. */
export function slowestAlarms(totals: readonly AlarmTotals[], limit: number): AlarmTotals[] {
  return [...totals].sort((a, b) => b.totalMs / b.count - a.totalMs / a.count || b.count - a.count || byText(a.alarmName, b.alarmName)).slice(0, limit);
}

/** p50 and p90 of one alarm's resolution times over the period (ms), as the database computed them. */
export interface Spread {
  alarmName: string;
  p50Ms: number;
  p90Ms: number;
}

export interface HostCount {
  hostname: string;
  count: number;
}

/** A rule with an alert trigger, as far as the analytics need it (rules.trigger). */
export interface AlertRuleFacts {
  id: string;
  name: string;
  enabled: boolean;
  integrationId: string;
  /** The trigger's alarmName (glob or /regex/); absent: every alarm of the integration. */
  alarmName: string | undefined;
  severity: readonly string[] | undefined;
  createdAt: number;
}

/**
 * Whether the rule's alert trigger takes alerts of this alarm: the integration, the name
 * (engine/alert-match.ts reads the pattern the same way) and the severity. Labels are not kept
 * on incidents: a rule that also asks for labels is taken to cover the alarm (it may act on
 * some of its alerts), so it is never suggested twice.
 */
export function ruleCovers(rule: AlertRuleFacts, integrationId: string | null, alarmName: string, severity: string | null): boolean {
  if (integrationId !== rule.integrationId) return false;
  if (rule.alarmName !== undefined && !safePattern(rule.alarmName)?.test(alarmName)) return false;
  return !rule.severity || rule.severity.some((s) => s.toLowerCase() === (severity ?? '').toLowerCase());
}

function safePattern(text: string): RegExp | null {
  try {
    return alarmNamePattern(text);
  } catch {
    return null;
  }
}

/** A rule and an alarm name it covers, among the period's groups. */
export interface RuleAlarm {
  rule: AlertRuleFacts;
  alarmName: string;
}

/** Every (rule, alarm name) where the rule covers some of the period's groups of that name; ordered by rule creation, then name. */
export function ruleAlarms(rules: readonly AlertRuleFacts[], groups: readonly DayGroup[]): RuleAlarm[] {
  const seen = new Set<string>();
  const pairs: RuleAlarm[] = [];
  const alarms = new Map<string, DayGroup>();
  for (const g of groups) alarms.set(`${g.integrationId ?? ''}\n${g.alarmName}\n${g.severity ?? ''}`, g);
  for (const rule of rules) {
    for (const g of alarms.values()) {
      const key = `${rule.id}\n${g.alarmName}`;
      if (!seen.has(key) && ruleCovers(rule, g.integrationId, g.alarmName, g.severity)) {
        seen.add(key);
        pairs.push({ rule, alarmName: g.alarmName });
      }
    }
  }
  return pairs.sort((a, b) => a.rule.createdAt - b.rule.createdAt || byText(a.rule.id, b.rule.id) || byText(a.alarmName, b.alarmName));
}

/** The incidents of a (rule, alarm) resolved on the rule's creation day, before and after its creation (read from the incidents). */
export interface CreationDaySplit {
  ruleId: string;
  alarmName: string;
  before: { count: number; totalMs: number };
  after: { count: number; totalMs: number };
}

export interface BeforeAfter {
  ruleId: string;
  ruleName: string;
  enabled: boolean;
  integrationId: string;
  alarmName: string;
  createdAt: string;
  before: { count: number; meanSeconds: number | null };
  after: { count: number; meanSeconds: number | null };
}

/**
 * Did the rule shorten its alarm's incidents? The period's incidents of the alarm the rule covers
 * (its integration and severities), resolved before the rule was created and from then on. The
 * rule's creation day is split by `splits` (from the incidents); other days come from the groups.
 */
export function beforeAfter(pairs: readonly RuleAlarm[], groups: readonly DayGroup[], splits: readonly CreationDaySplit[], period: Period): BeforeAfter[] {
  return pairs.map(({ rule, alarmName }) => {
    const createdDay = dayOf(rule.createdAt);
    const before = { count: 0, totalMs: 0 };
    const after = { count: 0, totalMs: 0 };
    for (const g of groups) {
      if (g.alarmName !== alarmName || !ruleCovers(rule, g.integrationId, g.alarmName, g.severity) || g.day === createdDay) continue;
      const side = g.day < createdDay ? before : after;
      side.count += g.resolved;
      side.totalMs += g.totalMs;
    }
    if (createdDay >= period.firstDay && createdDay < period.endDay) {
      const split = splits.find((s) => s.ruleId === rule.id && s.alarmName === alarmName);
      if (split) {
        before.count += split.before.count;
        before.totalMs += split.before.totalMs;
        after.count += split.after.count;
        after.totalMs += split.after.totalMs;
      }
    }
    return {
      ruleId: rule.id,
      ruleName: rule.name,
      enabled: rule.enabled,
      integrationId: rule.integrationId,
      alarmName,
      createdAt: new Date(rule.createdAt).toISOString(),
      before: { count: before.count, meanSeconds: meanSeconds(before.totalMs, before.count) },
      after: { count: after.count, meanSeconds: meanSeconds(after.totalMs, after.count) },
    };
  });
}

/** What the analytics read, for `analyticsView`. */
export interface AnalyticsRows {
  period: Period;
  limit: number;
  groups: readonly DayGroup[];
  /** p50/p90 of (at least) the slowest alarms' names. */
  spreads: readonly Spread[];
  /** The hosts with the most incidents, most first, at most `limit`. */
  hosts: readonly HostCount[];
  pairs: readonly RuleAlarm[];
  splits: readonly CreationDaySplit[];
}

/** A period as the API shows it: its first and last days, and how many. */
export function periodView(period: Period): { from: string; to: string; days: number } {
  return { from: dayText(period.firstDay), to: dayText(period.endDay - 1), days: period.endDay - period.firstDay };
}

/** GET /incidents/analytics, from what was read. */
export function analyticsView(rows: AnalyticsRows) {
  const { period, limit, groups } = rows;
  const totals = totalsByAlarm(groups);
  const resolved = totals.reduce((sum, t) => sum + t.count, 0);
  const automated = totals.reduce((sum, t) => sum + t.automated, 0);
  const totalMs = totals.reduce((sum, t) => sum + t.totalMs, 0);
  const spreads = new Map(rows.spreads.map((s) => [s.alarmName, s]));
  const days = new Map<number, { count: number; automated: number; totalMs: number }>();
  for (const g of groups) {
    if (g.resolved === 0) continue;
    let day = days.get(g.day);
    if (!day) days.set(g.day, (day = { count: 0, automated: 0, totalMs: 0 }));
    day.count += g.resolved;
    day.automated += g.automated;
    day.totalMs += g.totalMs;
  }
  return {
    period: periodView(period),
    resolved,
    automated,
    automatedShare: resolved === 0 ? null : automated / resolved,
    meanSeconds: meanSeconds(totalMs, resolved),
    frequent: frequentAlarms(totals, limit).map((t) => ({ alarmName: t.alarmName, count: t.count })),
    slowest: slowestAlarms(totals, limit).map((t) => {
      const spread = spreads.get(t.alarmName);
      return {
        alarmName: t.alarmName,
        count: t.count,
        meanSeconds: meanSeconds(t.totalMs, t.count)!,
        p50Seconds: spread ? seconds(spread.p50Ms) : null,
        p90Seconds: spread ? seconds(spread.p90Ms) : null,
        maxSeconds: seconds(t.maxMs),
      };
    }),
    mttrByDay: [...days].sort(([a], [b]) => a - b).map(([day, d]) => ({ day: dayText(day), count: d.count, automated: d.automated, meanSeconds: meanSeconds(d.totalMs, d.count)! })),
    hosts: rows.hosts.map((h) => ({ hostname: h.hostname, count: h.count })),
    rules: beforeAfter(rows.pairs, groups, rows.splits, period),
  };
}

export type AnalyticsView = ReturnType<typeof analyticsView>;
