import type { AlertFacts } from '../engine/alert-match.js';
import type { RequestedBy } from '../identity/requested-by.js';
import type { Sighting } from '../incidents/book.js';
import type { Rule } from '../rules/rule.js';
import type { AlertPayload } from './alert.js';

/**
 * One raise of a trigger, from any source, on its way into the ingest transaction: a webhook call,
 * later an integration's alert or a schedule's tick. The writer knows nothing of where it came
 * from but what is written here; a new source only has to fill it in (docs/architecture.md).
 */
export interface Occurrence {
  tenantId: string;
  /** Which rule it raises. */
  rule: RuleSelector;
  /** What raised it, stored with the event: `webhook`, an integration's type, `test`, `cron`, `manual`. */
  source: string;
  /** Who asked, when a person raised it through the management API (Run now): stored with the event. */
  requestedBy?: RequestedBy | undefined;
  /** The address it came from when it came over the network; null for the service's own sources. */
  sourceIp: string | null;
  receivedAt: number;
  /** How it proved it may raise the rule, checked again when the event is stored. */
  credential: Credential;
  /** The alert as the source understood it: known fields, the runbook's environment, what was left out. */
  payload: AlertPayload;
  /**
   * Makes a retry harmless: the same key on the same rule within 24 h gets the original event back
   * and runs nothing, and nothing new is stored. A webhook's Idempotency-Key header; a schedule's tick time.
   */
  idempotencyKey?: string | undefined;
  /**
   * An integration's alert fingerprint: a re-sent notification of an alert a rule already recorded
   * within 24 h is recorded again, as a `duplicate` that runs nothing.
   */
  alertFingerprint?: string | undefined;
  /** Set when the occurrence is to be recorded and never acted on, and why (a schedule's missed ticks). */
  recordOnly?: string | undefined;
  /**
   * What it says of an alarm, kept as an incident in the same transaction (incidents/book.ts): an
   * integration's alert (whether or not a rule takes it), a webhook call naming an alarm and a host.
   */
  alarm?: Omit<Sighting, 'tenantId' | 'receivedAt'> | undefined;
  /**
   * The incident a person acts on (Troubleshoot now, Fix now: ingress/incident-runs.ts): the event
   * belongs to it, and its executions and rule join the incident's (incidents/links.ts).
   */
  incidentId?: string | undefined;
}

/** Which rule an occurrence raises: by the trigger id its URL names, or by the rule itself. */
export type RuleSelector =
  | { by: 'trigger'; triggerId: string }
  /** A source inside the service (a schedule) knows its rule. */
  | { by: 'rule'; ruleId: string }
  /**
   * A run a person composes on the spot (Troubleshoot now): the rule is given whole and decided as
   * given, not read; its id names the stored row its event and executions are kept under.
   */
  | { by: 'composed'; rule: Rule }
  /** An integration's alert raises every rule of the integration whose alert trigger matches it. */
  | { by: 'integration'; integrationId: string; alert: AlertFacts & AlertRecord };

/** What the integration's alert log keeps of an alert besides what rules match on. */
export interface AlertRecord {
  annotations: Readonly<Record<string, string>>;
}

/**
 * The proof an occurrence carried. Sources check it before submitting, from a cache; the ingest
 * transaction checks it again against the database, so a key revoked on another node fails at once.
 */
export type Credential =
  /** A tenant API key in the URL: unrevoked and holding the webhook scope when the event is stored. */
  | { kind: 'api_key'; keyId: string }
  /**
   * The service raised it itself (a schedule), or a signed-in person did (a test alert from an
   * integration's page, authorised by the API): the rule's own existence is the only check.
   */
  | { kind: 'service' };

export function apiKeyOf(occurrence: Occurrence): string | undefined {
  return occurrence.credential.kind === 'api_key' ? occurrence.credential.keyId : undefined;
}
