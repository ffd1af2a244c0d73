import type { Action, Target } from '../rules/schema.js';

/**
 * The decision of DESIGN.md §2: a pure function of the rule, the event and the tenant's hosts
 * that could be targets. It performs no I/O; the transaction that stores the event records it.
 */

export interface RuleFacts {
  enabled: boolean;
  action: Action;
  target: Target;
}

export interface EventFacts {
  /** False when the caller asked for a dry run (`Act: false`). */
  act: boolean;
  /** The host the payload names (HostName, or the older hostname). */
  hostName: string | undefined;
}

export interface HostFacts {
  id: string;
  hostname: string;
  tags: readonly string[];
}

export type Decision =
  | { outcome: 'rule_off'; reason: string; targets: [] }
  | { outcome: 'dry_run'; reason: string; targets: [] }
  | { outcome: 'no_target'; reason: string; targets: [] }
  | { outcome: 'accepted'; reason: string | null; targets: HostFacts[] };

export type Outcome = Decision['outcome'];

/** Action kinds that run on hosts through the agent; the others are recorded until they ship. */
const HOST_ACTIONS: ReadonlySet<Action['type']> = new Set(['script']);

export function decide(rule: RuleFacts, event: EventFacts, hosts: readonly HostFacts[]): Decision {
  if (!rule.enabled) return { outcome: 'rule_off', reason: 'the rule is turned off: the alarm is recorded and no action runs', targets: [] };
  if (!event.act) return { outcome: 'dry_run', reason: 'Act was false: the alarm is recorded as a dry run and no action runs', targets: [] };
  if (!HOST_ACTIONS.has(rule.action.type)) {
    return { outcome: 'accepted', reason: `${rule.action.type} actions are recorded; this version does not run them yet`, targets: [] };
  }
  const targets = resolveTargets(rule.target, event, hosts);
  if (typeof targets === 'string') return { outcome: 'no_target', reason: targets, targets: [] };
  return { outcome: 'accepted', reason: null, targets };
}

/** The hosts a target names, or why there are none. */
export function resolveTargets(target: Target, event: EventFacts, hosts: readonly HostFacts[]): HostFacts[] | string {
  switch (target.type) {
    case 'trigger_host': {
      if (!event.hostName) return 'the rule acts on the trigger host, and the payload names none (send HostName)';
      const host = findHost(hosts, event.hostName);
      return host ? [host] : `no host named "${event.hostName}" has an agent in this tenant`;
    }
    case 'specific_host': {
      const host = findHost(hosts, target.hostname ?? '');
      return host ? [host] : `the rule's host "${target.hostname}" has no agent in this tenant`;
    }
    case 'specific_tags': {
      const wanted = target.tags ?? [];
      const matching = hosts.filter((host) => wanted.every((tag) => host.tags.includes(tag)));
      return matching.length > 0 ? matching : `no host carries all of the tags ${wanted.join(', ')}`;
    }
    case 'cli_machine':
      return 'the CLI machine does not run actions in this version';
  }
}

/** Host names compare without case (RFC 4343). */
export function hostKey(hostname: string): string {
  return hostname.trim().toLowerCase();
}

function findHost(hosts: readonly HostFacts[], hostname: string): HostFacts | undefined {
  const key = hostKey(hostname);
  return hosts.find((host) => hostKey(host.hostname) === key);
}
