import type { Action, ActionLimit, Flapping, Target } from '../rules/schema.js';
import { assertNever } from '../errors/assert-never.js';
import { alarmStep, describeHost, type AlarmHistory, type AlarmState } from './alarm-history.js';
import { counted, times } from '../errors/counts.js';

/**
 * The decision of DESIGN.md §2: a pure function of the rule, the event, the rule's recent
 * history (read in the transaction that records the decision) and the tenant's hosts that could
 * be targets. It performs no I/O. Every outcome and its order is described in docs/safety.md.
 */

export interface RuleFacts {
  enabled: boolean;
  /** What raises the rule: a schedule's tag target picks one host unless it says otherwise. */
  trigger?: { type: string };
  action: Action;
  target: Target;
  /** CLOUD_EC2, On_Premise…: a cloud action's provider when it names none. */
  infrastructureType?: string;
  actionLimit?: ActionLimit | null;
  flapping?: Required<Flapping>;
}

export interface EventFacts {
  /** False when the caller asked for a dry run (`Act: false`). */
  act: boolean;
  /** The host the payload names (HostName, or the older hostname). */
  hostName: string | undefined;
  /** Why the event names no host, when it names none and is not a webhook's (an alert without the label a rule reads): what to change. */
  noHost?: string | undefined;
  alarmState?: AlarmState | undefined;
  receivedAt?: number;
  /** Set when the rule records this alert without acting on its state (an alert trigger's `on`): the reason. */
  ignoredState?: string | undefined;
  /** The payload's fields as the runbook gets them (a cloud action reads its instance id there). */
  env?: Readonly<Record<string, string>>;
}

export interface HostFacts {
  id: string;
  hostname: string;
  tags: readonly string[];
  /** Whether its agent is connected now (a target that picks one host takes an online one). */
  online?: boolean;
  /** When a target that picks one host last picked it (least recently picked goes first). */
  lastPickedAt?: number | null;
  /** Its VM at its cloud provider, when known (a cloud action on the host acts on it). */
  cloudInstanceId?: string | null;
}

/** An idempotent call is answered with its original for this long (docs/safety.md). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** The event an earlier call with the same Idempotency-Key recorded. */
export interface OriginalEvent {
  eventId: string;
  outcome: StoredOutcome;
  reason: string | null;
  executionIds: string[];
}

/** What the ingest transaction read of the past before this event. */
export interface HistoryFacts {
  /** Set when this call repeats an earlier one (same Idempotency-Key within 24 h). */
  original?: OriginalEvent | undefined;
  /** The rule's earlier alarms for the payload's host, for flapping. */
  alarms: AlarmHistory;
  /** The rule's executions per host id within the action limit's window. */
  executionsInWindow: ReadonlyMap<string, number>;
}

export const NO_HISTORY: HistoryFacts = { alarms: { recent: 0, stateChanges: 0, last: null }, executionsInWindow: new Map() };

export interface LimitedHost {
  host: HostFacts;
  used: number;
  max: number;
}

type Recorded<O extends string> = { outcome: O; reason: string; targets: [] };

export type Decision =
  | (Recorded<'duplicate'> & { original: OriginalEvent })
  | Recorded<'rule_off'>
  | Recorded<'dry_run'>
  | Recorded<'recorded'>
  | Recorded<'flapping'>
  | Recorded<'no_target'>
  | (Recorded<'limited'> & { limited: LimitedHost[]; escalate: boolean })
  | { outcome: 'accepted'; reason: string | null; targets: HostFacts[]; held: HostFacts[]; limited: LimitedHost[]; escalate: boolean; serviceRuns: ServiceRun[] };

/** One execution the service runs itself (no agent involved), and the host it is about, if any. */
export interface ServiceRun {
  about: string | undefined;
  /**
   * Acts on nothing itself, so the action limit does not hold it back: it finds what to act on
   * when it runs (a cloud action's tag filter) and queues a run per instance, each counted then.
   */
  unlimited?: true;
  /** Waits for its turn in the event's fan-out (the kind's maxConcurrency): released as others end. */
  held?: true;
}

/** How one event's runs by the service fan out, as a tag target's hosts do (executions/fanout.ts). */
export interface ServiceFanout {
  maxConcurrency: number | null;
  maxErrors: number | null;
}

/**
 * What decide() needs of an action kind (actions/kinds.ts): where its executions run and for
 * which targets, and what reaching the action limit means for it. A pure function of the rule,
 * the event and the candidate hosts.
 */
export interface KindDecision {
  /** The kind's executions for this event, or why there are none (no_target). */
  plan(rule: RuleFacts, event: EventFacts, hosts: readonly HostFacts[]): PlannedRuns | string;
  /** Whether a host at the action limit is escalated to a person (onLimit), or the kind already reached one. */
  escalatesAtLimit: boolean;
  /** How a service run refused at the limit is told; the default counts executions. */
  limitedReason?(used: number, about: string | undefined, limit: ActionLimit): string;
  /** A kind whose runs by the service fan out (a cloud action over many instances): at most so many at once, stopped after so many failed. */
  fanout?(rule: Pick<RuleFacts, 'action'>): ServiceFanout | undefined;
}

export type PlannedRuns =
  /** One execution per host, each run by the host's agent. */
  | { runsOn: 'agent'; hosts: HostFacts[] }
  /** Executions the service runs itself. */
  | { runsOn: 'service'; runs: ServiceRun[] }
  /** A kind this version records without running: the event is accepted with the reason. */
  | { runsOn: 'nowhere'; reason: string };

export type Outcome = Decision['outcome'];
/** A duplicate is answered with its original and stores nothing of its own. */
export type StoredOutcome = Exclude<Outcome, 'duplicate'>;

export function decide(rule: RuleFacts, event: EventFacts, hosts: readonly HostFacts[], kind: KindDecision, history: HistoryFacts = NO_HISTORY): Decision {
  if (history.original) {
    return { outcome: 'duplicate', reason: 'a retry with the same Idempotency-Key within 24 h: the original event is returned and nothing runs again', targets: [], original: history.original };
  }
  if (!rule.enabled) return { outcome: 'rule_off', reason: 'the rule is turned off: the alarm is recorded and no action runs', targets: [] };
  if (event.ignoredState) return { outcome: 'recorded', reason: event.ignoredState, targets: [] };
  if (!event.act) return { outcome: 'dry_run', reason: 'Act was false: the alarm is recorded as a dry run and no action runs', targets: [] };
  const flapping = rule.flapping?.enabled ? flappingReason(rule.flapping, event, history.alarms) : undefined;
  if (flapping) return { outcome: 'flapping', reason: flapping, targets: [] };
  const planned = kind.plan(rule, event, hosts);
  if (typeof planned === 'string') return { outcome: 'no_target', reason: planned, targets: [] };
  switch (planned.runsOn) {
    case 'agent':
      return withinLimit(rule, planned.hosts, history.executionsInWindow, kind.escalatesAtLimit);
    case 'service':
      return serviceRunsWithinLimit(rule, planned.runs, history.executionsInWindow, kind);
    case 'nowhere':
      return { outcome: 'accepted', reason: planned.reason, targets: [], held: [], limited: [], escalate: false, serviceRuns: [] };
    default:
      return assertNever(planned);
  }
}

/**
 * Suppressed when the (rule, host) raised more than maxEvents alarms within windowSeconds, or
 * its firing/resolved state changed more than maxStateChanges times within it; suppression holds
 * until cooldownSeconds pass without an alarm.
 */
function flappingReason(settings: Required<Flapping>, event: EventFacts, alarms: AlarmHistory): string | undefined {
  const host = describeHost(event.hostName);
  const step = alarmStep(alarms, event);
  const resume = `actions resume once ${host} has been quiet for ${settings.cooldownSeconds} s`;
  if (alarms.last?.suppressed && step.quietSeconds < settings.cooldownSeconds) {
    return `still flapping: the previous alarm for ${host} came ${Math.floor(step.quietSeconds)} s ago; ${resume}`;
  }
  if (step.recent > settings.maxEvents) {
    return `flapping: more than ${counted(settings.maxEvents, 'alarm')} for ${host} within ${settings.windowSeconds} s (maxEvents); ${resume}`;
  }
  if (step.stateChanges > settings.maxStateChanges) {
    return `flapping: ${host} changed between firing and resolved more than ${times(settings.maxStateChanges)} within ${settings.windowSeconds} s (maxStateChanges); ${resume}`;
  }
  return undefined;
}

/**
 * Runs the service makes itself, each within the action limit per (rule, host it is about). They
 * escalate nothing: there is no host whose agent a person would take over from.
 */
function serviceRunsWithinLimit(rule: RuleFacts, runs: ServiceRun[], executionsInWindow: ReadonlyMap<string, number>, kind: KindDecision): Decision {
  const limit = rule.actionLimit;
  const allowed: ServiceRun[] = [];
  const refused: string[] = [];
  for (const run of runs) {
    const used = executionsInWindow.get(serviceRunKey(run.about)) ?? 0;
    if (!limit || run.unlimited || used < limit.max) allowed.push(run);
    else refused.push(kind.limitedReason?.(used, run.about, limit) ?? `action limit reached about ${describeHost(run.about)}: ${counted(used, 'execution')} within ${limit.windowSeconds} s already (max ${limit.max}); not run`);
  }
  if (allowed.length === 0 && refused.length > 0) return { outcome: 'limited', reason: refused.join('; '), targets: [], limited: [], escalate: false };
  const concurrency = kind.fanout?.(rule)?.maxConcurrency ?? allowed.length;
  const turns = allowed.map((run, i): ServiceRun => (i < concurrency ? run : { ...run, held: true }));
  return { outcome: 'accepted', reason: refused.length > 0 ? refused.join('; ') : null, targets: [], held: [], limited: [], escalate: false, serviceRuns: turns };
}

/** How the action limit counts a service run: by the host it is about (none: one count of its own). */
export function serviceRunKey(hostname: string | undefined): string {
  return `service\n${hostname ? hostKey(hostname) : ''}`;
}

/** Hosts at the action limit get no execution; the others run, at most maxConcurrency at once. */
function withinLimit(rule: RuleFacts, targets: HostFacts[], executionsInWindow: ReadonlyMap<string, number>, escalatesAtLimit: boolean): Decision {
  const limit = rule.actionLimit;
  const limited: LimitedHost[] = [];
  const allowed: HostFacts[] = [];
  for (const host of targets) {
    const used = executionsInWindow.get(host.id) ?? 0;
    if (limit && used >= limit.max) limited.push({ host, used, max: limit.max });
    else allowed.push(host);
  }
  const escalate = escalatesAtLimit && limit?.onLimit !== 'drop';
  if (allowed.length === 0) return { outcome: 'limited', reason: limitReason(limited, limit!, escalate), targets: [], limited, escalate };
  const reason = limited.length > 0 ? `${limitReason(limited, limit!, escalate)}; the other hosts run` : null;
  const concurrency = rule.target.maxConcurrency ?? allowed.length;
  return { outcome: 'accepted', reason, targets: allowed.slice(0, concurrency), held: allowed.slice(concurrency), limited, escalate, serviceRuns: [] };
}

function limitReason(limited: LimitedHost[], limit: ActionLimit, escalate: boolean): string {
  const hosts = limited.map((l) => l.host.hostname).join(', ');
  const then = escalate ? 'escalated to a human instead of acting' : 'dropped (onLimit: drop)';
  return `action limit reached on ${hosts}: ${counted(limit.max, 'execution')} within ${limit.windowSeconds} s already; ${then}`;
}

/** The hosts a target names, or why there are none. Tag matches come in host-name order. */
export function resolveTargets(target: Target, event: EventFacts, hosts: readonly HostFacts[], pick: 'all' | 'one' = 'all'): HostFacts[] | string {
  switch (target.type) {
    case 'trigger_host': {
      if (!event.hostName) return `the rule acts on the trigger host, and ${event.noHost ?? 'the payload names none (send HostName)'}`;
      const host = findHost(hosts, event.hostName);
      if (Array.isArray(host)) return ambiguous(event.hostName, host);
      return host ? [host] : `no host named "${event.hostName}" has an agent in this tenant${portHint(event.hostName)}`;
    }
    case 'specific_host': {
      const host = findHost(hosts, target.hostname ?? '');
      if (Array.isArray(host)) return ambiguous(target.hostname ?? '', host);
      return host ? [host] : `the rule's host "${target.hostname}" has no agent in this tenant`;
    }
    case 'specific_tags': {
      const wanted = target.tags ?? [];
      const matching = hosts.filter((host) => wanted.every((tag) => host.tags.includes(tag)));
      matching.sort((a, b) => (hostKey(a.hostname) < hostKey(b.hostname) ? -1 : 1));
      if (matching.length === 0) return `no host carries all of the tags ${wanted.join(', ')}`;
      if (pick === 'all') return matching;
      const online = matching.filter((host) => host.online);
      if (online.length === 0) return `none of the ${counted(matching.length, 'host')} with the tags ${wanted.join(', ')} is online (the target picks one online host)`;
      // Least recently picked first: the load of a schedule spreads over the hosts; ties by name.
      return [online.reduce((best, host) => ((host.lastPickedAt ?? 0) < (best.lastPickedAt ?? 0) ? host : best))];
    }
    case 'cli_machine':
      return 'the CLI machine does not run actions in this version';
    default:
      return assertNever(target.type);
  }
}

/**
 * A monitoring tool's address of a host often carries a port (Prometheus' `instance`,
 * "web-1:9100"); a host name never does (RFC 1123), so the reason says what to send instead.
 */
function portHint(hostName: string): string {
  const named = /^([^:]+):\d+$/.exec(hostName.trim())?.[1];
  return named ? `; host names carry no port: send HostName "${named}"` : '';
}

/**
 * The one form host names are compared in, everywhere: hosts (hostname_key), events (host_key),
 * executions and escalations (host_key), targets, action limits and the agent's hello. DNS
 * compares names without case, ASCII letters only (RFC 4343 §3); so does this, so that SQLite's
 * lower() and PostgreSQL's lower() under the C collation make the same key (migration 0009).
 */
export function hostKey(hostname: string): string {
  const trimmed = hostname.trim();
  // Most names are already lower case: they skip the replace and its callback (once per event and per host compared).
  return HAS_UPPER.test(trimmed) ? trimmed.replace(/[A-Z]+/g, (upper) => upper.toLowerCase()) : trimmed;
}

const HAS_UPPER = /[A-Z]/;

/**
 * The host a name means (docs/integrations.md, "Host names"): the one of that name, without case;
 * else the one whose name differs only by its domain, "web-1" for "web-1.example.com" or the other
 * way round, when exactly one does (several: the list, and none is guessed).
 */
function findHost(hosts: readonly HostFacts[], hostname: string): HostFacts | HostFacts[] | undefined {
  const key = hostKey(hostname);
  const exact = hosts.find((host) => hostKey(host.hostname) === key);
  if (exact) return exact;
  const short = shortName(key);
  const alike = hosts.filter((host) => {
    const other = hostKey(host.hostname);
    return other === short || shortName(other) === key;
  });
  return alike.length === 1 ? alike[0] : alike.length > 1 ? alike : undefined;
}

/** A host name without its domain: its first DNS label. */
export function shortName(key: string): string {
  return key.split('.')[0]!;
}

function ambiguous(hostname: string, hosts: HostFacts[]): string {
  const names = hosts.map((host) => host.hostname).sort().join(', ');
  return `"${hostname}" names no host exactly and differs only by domain from several (${names}): none was picked; send the full host name`;
}
