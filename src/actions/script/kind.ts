import { resolveTargets } from '../../engine/decide.js';
import type { Rule } from '../../rules/rule.js';
import type { ActionKind, KindSpec } from '../kind.js';

const DEFAULT_TIMEOUT_SECONDS = 300;

type ScriptAction = Extract<Rule['action'], { type: 'script' }>;

/** A script each target host's agent runs (agent/): the spine's first kind. */
export const scriptKind: ActionKind = {
  type: 'script',
  escalatesAtLimit: true,
  plan(rule, event, hosts) {
    const targets = resolveTargets(rule.target, event, hosts);
    return typeof targets === 'string' ? targets : { runsOn: 'agent', hosts: targets };
  },
  spec(rule, run) {
    const action = scriptAction(rule);
    return {
      flavour: action.flavour,
      interpreter: action.runbook.interpreter ?? 'sh',
      script: action.runbook.script,
      timeoutSeconds: action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
      env: run.env,
      context: {
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
    const firstLine = action.runbook.script.trim().split('\n')[0]!.slice(0, 120);
    return `did not run the ${action.flavour} script "${firstLine}" on ${hostname} for this alarm or later ones in the window`;
  },
};

function scriptAction(rule: Rule): ScriptAction {
  if (rule.action.type !== 'script') throw new Error(`rule ${rule.id} has no script action`);
  return rule.action;
}
