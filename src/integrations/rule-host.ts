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
