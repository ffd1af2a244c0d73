import { Type, type Static } from 'typebox';
import { DEFAULT_INSTANCE_FIELD } from '../actions/cloud/kind.js';
import type { Rule } from '../rules/rule.js';
import type { Action } from '../rules/schema.js';
import { refusalForName } from './env.js';
import { scriptVariables } from './script-variables.js';

/** The payload fields a form for a run offers on their own: the host acted on, and the alarm. */
const FORM_FIELDS = ['HostName', 'AlarmName'] as const;
type FormField = (typeof FORM_FIELDS)[number];

/** Names an event's environment holds that are no MetaData key: the form's own fields, their older aliases, Act. */
const NOT_METADATA: ReadonlySet<string> = new Set([...FORM_FIELDS, 'hostname', 'application', 'Act']);

/** How many of a rule's newest events the form's fields are read from. */
export const RUN_FIELDS_EVENTS = 20;

export const RunFieldsView = Type.Object({
  fields: Type.Array(Type.Enum([...FORM_FIELDS]), { description: 'the payload fields the rule reads: HostName and AlarmName for a webhook or alert rule; none for a cron rule, whose ticks carry neither' }),
  payload: Type.Object({
    HostName: Type.Optional(Type.String()),
    AlarmName: Type.Optional(Type.String()),
    MetaData: Type.Record(Type.String(), Type.String()),
  }, { description: `a payload to start from (POST /api/v1/rules/{id}/run): each field and MetaData key as the newest of the rule's last ${RUN_FIELDS_EVENTS} events that had it gave it to the runbook` }),
  actionVariables: Type.Array(Type.String(), { description: "names the rule's action reads from the payload: the variables its runbook script references ($Name, ${Name}; $env:Name in PowerShell, os.environ in Python), a cloud action's instance field" }),
  lastEventId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: "the rule's newest event, null when it has none" }),
  eventsRead: Type.Integer({ minimum: 0, description: 'how many of its newest events were read' }),
});
export type RunFieldsView = Static<typeof RunFieldsView>;

/**
 * What a form for a run of the rule offers (Run now): its fields, prefilled from the environments
 * of its newest events (newest first), which hold the same names for every source (a webhook's
 * MetaData, an alert's labels), and the names its action reads.
 */
export function runFieldsOf(rule: Rule, events: ReadonlyArray<{ id: string; env: Readonly<Record<string, string>> }>): RunFieldsView {
  const fields: FormField[] = rule.trigger.type === 'cron' ? [] : [...FORM_FIELDS];
  const payload: RunFieldsView['payload'] = { MetaData: {} };
  for (const { env } of events) {
    for (const field of fields) if (payload[field] === undefined && env[field] !== undefined) payload[field] = env[field];
    for (const [name, value] of Object.entries(env)) {
      if (NOT_METADATA.has(name) || refusalForName(name) !== undefined || Object.hasOwn(payload.MetaData, name)) continue;
      payload.MetaData[name] = value;
    }
  }
  return { fields, payload, actionVariables: actionVariables(rule.action), lastEventId: events[0]?.id ?? null, eventsRead: events.length };
}

function actionVariables(action: Action): string[] {
  switch (action.type) {
    case 'script':
    case 'cli':
      // A git runbook's script is read at each run: not known here.
      return action.runbook.script === undefined ? [] : scriptVariables(action.runbook.script, action.runbook.interpreter);
    case 'cloud': {
      const instances = action.instances ?? { from: 'payload' as const };
      return 'from' in instances ? [instances.field ?? DEFAULT_INSTANCE_FIELD] : [];
    }
    default:
      return [];
  }
}
