import type { HostFacts, KindDecision } from '../engine/decide.js';
import type { Rule } from '../rules/rule.js';

/**
 * Everything the spine knows of one action kind (docs/architecture.md, "Adding an action kind").
 * The writer asks it how to decide and what to store; people see it through `describe` and
 * `notDone`; a kind run by the service also gives a runner to the executor
 * (executions/service-executor.ts), wired in server/app.ts.
 */
export interface ActionKind extends KindDecision {
  type: string;
  /** The spec stored on one execution: what it does, copied from the rule when the event arrives. */
  spec(rule: Rule, run: RunContext): KindSpec;
  /** One line for people (notifications): "autofix script (sh): systemctl restart nginx". */
  describe(spec: KindSpec): string;
  /** What an action limit kept the service from doing, in the words of an escalation. */
  notDone(rule: Rule, hostname: string): string;
  /**
   * Why a payload variable is not given to this kind's runs, beyond what ingress refuses for every
   * runbook (ingress/env.ts); undefined when it is given. The writer lists the refused names in
   * the event's skippedEnv, so the webhook's reply says so.
   */
  refusesEnv?(name: string): string | undefined;
}

/** A stored spec: a run by the service names its kind; a script's (the agent's) never did. */
export type KindSpec = Record<string, unknown> & { kind?: string; timeoutSeconds: number };

/** What a spec may draw on: the event and where this execution runs. */
export interface RunContext {
  executionId: string;
  eventId: string;
  /** The runbook's environment from the payload. */
  env: Record<string, string>;
  /** The agent's host (agent runs), or undefined for a run by the service. */
  host: HostFacts | undefined;
  /** The host name the execution shows: the agent's host, or the host a service run is about. */
  hostname: string;
  /** How long a queued execution may wait before it ends `expired` (a service run's timeout too). */
  expirySeconds: number;
  /** The event as stored: its payload (JSON text, the tool's own body for an integration's alert) and when it arrived. */
  event: { payload: string; receivedAt: number };
}
