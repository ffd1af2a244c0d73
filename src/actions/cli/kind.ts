import type { Rule } from '../../rules/rule.js';
import type { ActionKind, KindSpec } from '../kind.js';
import { eventEnvAndContext } from '../script/kind.js';
import { runbookCopy } from '../runbook-record.js';
import { cliEnvRefusal } from './environment.js';
import type { RunbookRecord } from '../../executions/repository.js';
import { times } from '../../errors/counts.js';

type CliAction = Extract<Rule['action'], { type: 'cli' }>;
export type CliInterpreter = NonNullable<CliAction['runbook']['interpreter']>;

/** What one CLI Machine execution runs, copied from the rule when the event arrives. */
export interface CliSpec extends KindSpec {
  kind: 'cli';
  interpreter: CliInterpreter;
  /** Absent while it is read from a git repository, before the run. */
  script?: string;
  runbook: RunbookRecord;
  /** The tenant's credentials the runbook gets, in its CLIs' own variables. */
  credentialIds: string[];
  /** The payload's variables, checked again by the runner (actions/cli/environment.ts). */
  env: Record<string, string>;
  /** PITCREW_* context: the execution, event and rule. */
  context: Record<string, string>;
  timeoutSeconds: number;
}

const DEFAULT_TIMEOUT_SECONDS = 300;

/**
 * A CLI runbook run by the service (target cli_machine: actions/cli/runner.ts), once per event,
 * within the action limit per (rule, host the alert names), as an email runbook counts. The
 * service runs it as a child process with a clean environment and a throwaway HOME.
 */
export const cliKind: ActionKind = {
  type: 'cli',
  escalatesAtLimit: false,
  plan(_rule, event) {
    return { runsOn: 'service', runs: [{ about: event.hostName }] };
  },
  limitedReason(used, about, limit) {
    return `the CLI runbook ran ${times(used)} about ${about ?? 'this rule'} within ${limit.windowSeconds} s, its action limit (max ${limit.max}): not run again`;
  },
  spec(rule, run): CliSpec {
    const action = cliAction(rule);
    const { env, context } = eventEnvAndContext(run.env);
    return {
      kind: 'cli',
      ...runbookCopy(action.runbook),
      credentialIds: action.credentialIds ?? [],
      env,
      context: { ...context, PITCREW_EXECUTION_ID: run.executionId, PITCREW_EVENT_ID: run.eventId, PITCREW_RULE_ID: rule.id, PITCREW_RULE_NAME: rule.name, PITCREW_HOSTNAME: run.hostname },
      timeoutSeconds: action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    };
  },
  describe(spec) {
    const first = String(spec.script).split('\n').find((line) => line.trim() !== '' && !line.startsWith('#!')) ?? '';
    return `CLI runbook (${String(spec.interpreter)}) on the CLI Machine: ${first.trim().slice(0, 120)}`;
  },
  notDone(rule, hostname) {
    return `did not run the CLI runbook of rule "${rule.name}" about ${hostname} for this alarm or later ones in the window`;
  },
  refusesEnv: cliEnvRefusal,
};

export function isCliSpec(spec: unknown): spec is CliSpec {
  return typeof spec === 'object' && spec !== null && (spec as { kind?: unknown }).kind === 'cli';
}

function cliAction(rule: Pick<Rule, 'action'>): CliAction {
  if (rule.action.type !== 'cli') throw new Error(`a ${rule.action.type} action is not a cli action`);
  return rule.action;
}
