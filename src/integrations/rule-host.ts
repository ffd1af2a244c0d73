import { alertHost, type AlertFacts, type AlertTrigger } from '../engine/alert-match.js';
import { hostFromAddress } from './alertmanager/alert.js';

/**
 * The host a rule acts on for an alert: the label the rule names (trigger.hostLabel), read as the
 * tool's own is (an address's port or URL left out: web-1:9100 → web-1), or the host the tool named.
 */
export function ruleHostOf(trigger: AlertTrigger, facts: AlertFacts): string | undefined {
  const host = alertHost(trigger, facts);
  return host !== undefined && trigger.hostLabel ? hostFromAddress(host) : host;
}

/** At most this many of an alert's label names are listed in a reason. */
const LISTED_LABELS = 12;

/**
 * Why an alert gives a rule no host, in words that lead to the fix: the label it lacks (the rule's
 * trigger.hostLabel, or the one its tool reads: Alertmanager's `instance`, the integration's
 * config.hostLabel), and the labels it carries, one of which may name the host. Label names only:
 * their values may say more than a reason should.
 */
export function noHostReason(trigger: AlertTrigger, facts: AlertFacts): string {
  const names = Object.keys(facts.labels);
  const listed = names.slice(0, LISTED_LABELS).map((name) => JSON.stringify(name)).join(', ');
  const carries = names.length === 0 ? 'it carries no label' : `its labels are ${listed}${names.length > LISTED_LABELS ? ` and ${names.length - LISTED_LABELS} more` : ''}`;
  const lacks = (label: string) => `the alert has ${facts.labels[label] === undefined ? 'no' : 'an empty'} "${label}" label`;
  if (trigger.hostLabel) {
    return `${lacks(trigger.hostLabel)}, which the rule's trigger.hostLabel names as the host's (${carries}): set trigger.hostLabel to the label that names the host, or add "${trigger.hostLabel}" to the alert`;
  }
  if (facts.hostLabel) {
    return `${lacks(facts.hostLabel)}, which names the host (the integration's config.hostLabel; ${carries}): add "${facts.hostLabel}" to the alert, or set the rule's trigger.hostLabel to the label that names the host`;
  }
  return `the alert names no host (${carries}): set the rule's trigger.hostLabel to the label that names the host`;
}
