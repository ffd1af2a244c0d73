import { resolveTargets } from '../../engine/decide.js';
import { pickOf, type Rule } from '../../rules/rule.js';
import type { ActionKind, KindSpec } from '../kind.js';
import { runbookCopy, runbookWords } from '../runbook-record.js';

const DEFAULT_TIMEOUT_SECONDS = 300;

type ScriptAction = Extract<Rule['action'], { type: 'script' }>;

/** A script each target host's agent runs (agent/): the spine's first kind. */
export const scriptKind: ActionKind = {
  type: 'script',
  escalatesAtLimit: true,
  plan(rule, event, hosts) {
    const targets = resolveTargets(rule.target, event, hosts, pickOf(rule));
    return typeof targets === 'string' ? targets : { runsOn: 'agent', hosts: targets };
  },
  spec(rule, run) {
    const action = scriptAction(rule);
    const { env, context } = eventEnvAndContext(run.env);
    return {
      flavour: action.flavour,
      ...runbookCopy(action.runbook),
      timeoutSeconds: action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
      env,
      context: {
        ...context,
        PITCREW_EXECUTION_ID: run.executionId,
        PITCREW_EVENT_ID: run.eventId,
        PITCREW_RULE_ID: rule.id,
        PITCREW_RULE_NAME: rule.name,
        PITCREW_HOSTNAME: run.hostname,
      },
    };
  },
  describe(spec: KindSpec) {
    const script = typeof spec.script === 'string' ? spec.script.trim() : '';
    const more = script.includes('\n') ? ' …' : '';
    return `${String(spec.flavour ?? 'script')} script (${String(spec.interpreter ?? 'sh')}): ${script.split('\n')[0]!.slice(0, 120)}${more}`;
  },
  notDone(rule, hostname) {
    const action = scriptAction(rule);
    return `did not run the ${action.flavour} script ${runbookWords(action.runbook)} on ${hostname} for this alarm or later ones in the window`;
  },
};

/**
 * The event's own PITCREW_* names were set by the service (a schedule's PITCREW_SCHEDULED_TIME):
 * a payload can never set one (ingress/env.ts reserves the prefix), and the agent takes them only
 * as context, so they go there.
 */
export function eventEnvAndContext(env: Record<string, string>): { env: Record<string, string>; context: Record<string, string> } {
  const own: Record<string, string> = {};
  const context: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) (name.startsWith('PITCREW_') ? context : own)[name] = value;
  return { env: own, context };
}

function scriptAction(rule: Rule): ScriptAction {
  if (rule.action.type !== 'script') throw new Error(`rule ${rule.id} has no script action`);
  return rule.action;
}
