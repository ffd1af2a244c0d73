import type { Flavour, InfrastructureType, Interpreter, Overlap, Rule, RuleInput, Target, TargetPick, TargetType } from '../../api/types';
import { providerOfInfrastructure } from '../../credentials/providers';
import { toNumber, wholeNumberError } from '../../ui/numbers';
import { CLI_SAMPLE_SCRIPT, SAMPLE_SCRIPT, SCHEDULE_SAMPLE_SCRIPT } from '../../runbooks/sample-scripts';
import { browserTimeZone } from '../schedule';
import { CLOUD_BODY_FIELDS, cloudFieldsOf, cloudStepErrors, emptyCloudFields, toCloudAction, type CloudFields } from './cloud-form';
import { emptySnapshotFields, snapshotErrors, snapshotFieldsOf, toSnapshotRequest, type SnapshotFields } from './snapshot-form';
import { emptyRunbookSourceFields, RUNBOOK_BODY_FIELDS, runbookFieldsOf, runbookSourceErrors, toRunbook, type RunbookSource, type RunbookSourceFields } from './runbook-form';

/** What the wizard edits: text for numbers, so a half-typed value is never silently changed. */
export interface RuleForm extends CloudFields, RunbookSourceFields, SnapshotFields {
  name: string;
  enabled: boolean;
  /** The trigger sent as is for a webhook or an alert; a cron trigger is only its type here, its fields are below. */
  trigger: RuleInput['trigger'];
  /** cron: the expression as typed. */
  schedule: string;
  /** cron: the IANA zone as typed; empty: UTC. */
  timezone: string;
  overlap: Overlap;
  flappingEnabled: boolean;
  flappingMaxEvents: string;
  flappingWindowSeconds: string;
  flappingCooldownSeconds: string;
  flappingMaxStateChanges: string;
  infrastructureType: InfrastructureType;
  /** A runbook on hosts, a cloud action on instances (offered by a cloud infrastructure type; its fields are CloudFields), or a CLI runbook on the CLI Machine. */
  actionType: 'script' | 'cloud' | 'cli' | 'graph_snapshot';
  /** cli: the credentials its CLIs get, one per provider. */
  credentialIds: string[];
  targetType: Exclude<TargetType, 'cli_machine'>;
  hostname: string;
  tags: string[];
  /** Tags: one online host of them, or every host; undefined: the trigger's default (one for a schedule, every host otherwise). */
  pick: TargetPick | undefined;
  /** Fan-out over tags; empty: no limit. */
  maxConcurrency: string;
  maxErrors: string;
  flavour: Flavour;
  interpreter: Interpreter;
  script: string;
  notes: string;
  /** The script's timeout, or the cloud action's wait for the instance's state. */
  timeoutSeconds: string;
  limitEnabled: boolean;
  limitMax: string;
  limitWindowSeconds: string;
  onLimit: 'escalate' | 'drop';
}

export type FormField = keyof RuleForm;
export type FormErrors = Partial<Record<FormField, string>>;

export const STEPS = [
  { id: 'trigger', title: 'Trigger', fields: ['name', 'trigger', 'schedule', 'timezone', 'overlap'] },
  { id: 'flapping', title: 'Flapping protection', fields: ['flappingEnabled', 'flappingMaxEvents', 'flappingWindowSeconds', 'flappingCooldownSeconds', 'flappingMaxStateChanges'] },
  { id: 'target', title: 'Infrastructure and target', fields: ['infrastructureType', 'actionType', 'targetType', 'hostname', 'tags', 'pick', 'maxConcurrency', 'maxErrors'] },
  {
    id: 'action',
    title: 'Runbook',
    fields: [
      'flavour', 'interpreter', 'script', 'notes', 'timeoutSeconds', 'credentialIds',
      'runbookSource', 'runbookId', 'runbookPin', 'runbookVersion', 'newRunbookName', 'repositoryId', 'repositoryPath', 'repositoryRef',
      'operation', 'region', 'credentialId', 'instancesFrom', 'instanceField', 'instanceIds', 'instanceTags', 'instancesAtOnce', 'failedInstances', 'confirmTerminate',
      'snapshotEnabled', 'snapshotIntegrationId', 'snapshotGraphs', 'snapshotWindowMinutes'],
  },
  { id: 'limit', title: 'Action limit', fields: ['limitEnabled', 'limitMax', 'limitWindowSeconds', 'onLimit'] },
  { id: 'review', title: 'Review and create', fields: ['enabled'] },
] as const satisfies ReadonlyArray<{ id: string; title: string; fields: readonly FormField[] }>;

export type StepId = (typeof STEPS)[number]['id'];

/** A step's title for this form: the action step is the runbook, the cloud action or the CLI runbook. */
export function stepTitle(step: (typeof STEPS)[number], form: Pick<RuleForm, 'actionType'>): string {
  if (step.id !== 'action' || form.actionType === 'script') return step.title;
  return form.actionType === 'cloud' ? 'Cloud action' : form.actionType === 'graph_snapshot' ? 'Graph snapshot' : 'CLI runbook';
}

export { CLI_SAMPLE_SCRIPT, SAMPLE_SCRIPT, SCHEDULE_SAMPLE_SCRIPT };

/** The sample script for a trigger kind, when the script is still a sample: what the run gets differs. */
export function sampleScriptFor(trigger: RuleInput['trigger']['type'], script: string): string | undefined {
  if (script !== SAMPLE_SCRIPT && script !== SCHEDULE_SAMPLE_SCRIPT) return undefined;
  return trigger === 'cron' ? SCHEDULE_SAMPLE_SCRIPT : SAMPLE_SCRIPT;
}

export function emptyForm(): RuleForm {
  return {
    name: '',
    enabled: true,
    trigger: { type: 'webhook' },
    schedule: '',
    timezone: browserTimeZone(),
    overlap: 'skip',
    flappingEnabled: false,
    flappingMaxEvents: '5',
    flappingWindowSeconds: '300',
    flappingCooldownSeconds: '600',
    flappingMaxStateChanges: '3',
    infrastructureType: 'On_Premise',
    actionType: 'script',
    credentialIds: [],
    targetType: 'trigger_host',
    hostname: '',
    tags: [],
    pick: undefined,
    maxConcurrency: '',
    maxErrors: '',
    flavour: 'autofix',
    interpreter: 'sh',
    script: SAMPLE_SCRIPT,
    notes: '',
    timeoutSeconds: '300',
    limitEnabled: false,
    limitMax: '3',
    limitWindowSeconds: '3600',
    onLimit: 'escalate',
    ...emptyCloudFields(),
    ...emptyRunbookSourceFields(),
    ...emptySnapshotFields(),
  };
}

/** The form of an existing rule, or null when the wizard cannot edit its kind (a graph or email action; instances by tag). */
export function formFromRule(rule: Rule): RuleForm | null {
  const { action, target } = rule;
  const actionFields = action.type === 'cli' ? cliFieldsOf(action) : target.type === 'cli_machine' ? null : action.type === 'script' ? scriptFieldsOf(action) : action.type === 'cloud' ? cloudFormOf(action) : action.type === 'graph_snapshot' ? { actionType: 'graph_snapshot' as const, ...snapshotFieldsOf(action, true) } : null;
  if (!actionFields) return null;
  const fix = action.type === 'script' || action.type === 'cloud' || action.type === 'cli' ? action : undefined;
  const { triggerId: _id, webhookUrl: _url, curl: _curl, ...trigger } = rule.trigger;
  const cron = trigger.type === 'cron';
  return {
    ...emptyForm(),
    ...actionFields,
    ...(fix?.snapshot ? snapshotFieldsOf(fix.snapshot, true) : {}),
    name: rule.name,
    enabled: rule.enabled,
    trigger: cron ? { type: 'cron' } : trigger,
    ...(cron ? { schedule: trigger.schedule ?? '', timezone: trigger.timezone ?? 'UTC', overlap: trigger.overlap ?? 'skip' } : {}),
    flappingEnabled: rule.flapping.enabled,
    flappingMaxEvents: String(rule.flapping.maxEvents),
    flappingWindowSeconds: String(rule.flapping.windowSeconds),
    flappingCooldownSeconds: String(rule.flapping.cooldownSeconds),
    flappingMaxStateChanges: String(rule.flapping.maxStateChanges),
    infrastructureType: rule.infrastructureType,
    targetType: target.type === 'cli_machine' ? 'trigger_host' : target.type,
    hostname: target.hostname ?? '',
    tags: target.tags ?? [],
    pick: target.pick,
    maxConcurrency: target.maxConcurrency === undefined ? '' : String(target.maxConcurrency),
    maxErrors: target.maxErrors === undefined ? '' : String(target.maxErrors),
    limitEnabled: rule.actionLimit !== null,
    limitMax: String(rule.actionLimit?.max ?? 3),
    limitWindowSeconds: String(rule.actionLimit?.windowSeconds ?? 3600),
    onLimit: rule.actionLimit?.onLimit ?? 'escalate',
  };
}

function scriptFieldsOf(action: Extract<Rule['action'], { type: 'script' }>): Partial<RuleForm> {
  return {
    actionType: 'script',
    flavour: action.flavour,
    ...runbookFieldsOf(action.runbook),
    timeoutSeconds: String(action.timeoutSeconds ?? 300),
  };
}

function cliFieldsOf(action: Extract<Rule['action'], { type: 'cli' }>): Partial<RuleForm> {
  return {
    actionType: 'cli',
    ...runbookFieldsOf(action.runbook),
    credentialIds: action.credentialIds ?? [],
    timeoutSeconds: String(action.timeoutSeconds ?? 300),
  };
}

function cloudFormOf(action: Extract<Rule['action'], { type: 'cloud' }>): Partial<RuleForm> {
  return { actionType: 'cloud', ...cloudFieldsOf(action), timeoutSeconds: String(action.timeoutSeconds ?? 300) };
}

/** An optional number: left empty, the field is not sent. */
function optional<Name extends string>(name: Name, text: string): Partial<Record<Name, number>> {
  return text.trim() ? ({ [name]: toNumber(text) } as Record<Name, number>) : {};
}

/** How a tag target picks its hosts when `pick` is absent: one for a schedule (DESIGN.md §7), every host otherwise. */
function defaultPick(trigger: RuleInput['trigger']['type']): TargetPick {
  return trigger === 'cron' ? 'one' : 'all';
}

/** How the tag target picks its hosts; `pick` is sent only when it is not the trigger's default. */
export function pickOf(form: Pick<RuleForm, 'pick' | 'trigger'>): TargetPick {
  return form.pick ?? defaultPick(form.trigger.type);
}

function toTarget(form: RuleForm): Target {
  switch (form.targetType) {
    case 'specific_host':
      return { type: form.targetType, hostname: form.hostname.trim() };
    case 'specific_tags': {
      const pick = pickOf(form);
      // One host per tick is no fan-out: its limits would say nothing.
      if (pick === 'one') return { type: form.targetType, tags: form.tags, ...(defaultPick(form.trigger.type) === 'one' ? {} : { pick }) };
      return {
        type: form.targetType,
        tags: form.tags,
        ...(defaultPick(form.trigger.type) === 'all' ? {} : { pick }),
        ...optional('maxConcurrency', form.maxConcurrency),
        ...optional('maxErrors', form.maxErrors),
      };
    }
    case 'trigger_host':
      return { type: form.targetType };
  }
}

function toTrigger(form: RuleForm): RuleInput['trigger'] {
  if (form.trigger.type !== 'cron') return form.trigger;
  const timezone = form.timezone.trim();
  return { type: 'cron', schedule: form.schedule.trim(), ...(timezone ? { timezone } : {}), overlap: form.overlap };
}

function toAction(form: RuleForm): RuleInput['action'] {
  if (form.actionType === 'graph_snapshot') return { type: 'graph_snapshot', ...toSnapshotRequest(form) };
  const snapshot = form.snapshotEnabled ? { snapshot: toSnapshotRequest(form) } : {};
  if (form.actionType === 'cloud') return { ...toCloudAction(form), ...snapshot };
  const runbook = toRunbook(form);
  if (form.actionType === 'cli') {
    return { type: 'cli', runbook, ...(form.credentialIds.length > 0 ? { credentialIds: form.credentialIds } : {}), timeoutSeconds: toNumber(form.timeoutSeconds), ...snapshot };
  }
  return { type: 'script', flavour: form.flavour, runbook, timeoutSeconds: toNumber(form.timeoutSeconds), ...snapshot };
}

/** The service asks a target of every rule: a cloud action's instances are its own (the alert's target says nothing more), a CLI runbook runs on the CLI Machine. */
function targetOf(form: RuleForm): Target {
  if (form.actionType === 'cloud' || form.actionType === 'graph_snapshot') return { type: 'trigger_host' };
  if (form.actionType === 'cli') return { type: 'cli_machine' };
  return toTarget(form);
}

export function toRuleInput(form: RuleForm): RuleInput {
  return {
    name: form.name.trim(),
    enabled: form.enabled,
    trigger: toTrigger(form),
    action: toAction(form),
    target: targetOf(form),
    infrastructureType: form.infrastructureType,
    // A run by the service past its limit is recorded, never escalated (docs/cloud-actions.md): onLimit would say nothing.
    actionLimit: form.limitEnabled
      ? { max: toNumber(form.limitMax), windowSeconds: toNumber(form.limitWindowSeconds), ...(form.actionType === 'script' ? { onLimit: form.onLimit } : {}) }
      : null,
    flapping: form.flappingEnabled
      ? {
          enabled: true,
          maxEvents: toNumber(form.flappingMaxEvents),
          windowSeconds: toNumber(form.flappingWindowSeconds),
          cooldownSeconds: toNumber(form.flappingCooldownSeconds),
          maxStateChanges: toNumber(form.flappingMaxStateChanges),
        }
      : { enabled: false },
  };
}

const BODY_FIELDS: Array<[RegExp, FormField]> = [
  [/^\/body\/name/, 'name'],
  [/^\/body\/enabled/, 'enabled'],
  [/^\/body\/action\/(snapshot\/)?integrationId/, 'snapshotIntegrationId'],
  [/^\/body\/action\/(snapshot\/)?graphs/, 'snapshotGraphs'],
  [/^\/body\/action\/(snapshot\/)?windowMinutes/, 'snapshotWindowMinutes'],
  [/^\/body\/trigger\/schedule/, 'schedule'],
  [/^\/body\/trigger\/timezone/, 'timezone'],
  [/^\/body\/trigger\/overlap/, 'overlap'],
  [/^\/body\/trigger/, 'trigger'],
  [/^\/body\/flapping\/maxEvents/, 'flappingMaxEvents'],
  [/^\/body\/flapping\/windowSeconds/, 'flappingWindowSeconds'],
  [/^\/body\/flapping\/cooldownSeconds/, 'flappingCooldownSeconds'],
  [/^\/body\/flapping\/maxStateChanges/, 'flappingMaxStateChanges'],
  [/^\/body\/flapping/, 'flappingEnabled'],
  [/^\/body\/infrastructureType/, 'infrastructureType'],
  [/^\/body\/target\/hostname/, 'hostname'],
  [/^\/body\/target\/tags/, 'tags'],
  [/^\/body\/target\/maxConcurrency/, 'maxConcurrency'],
  [/^\/body\/target\/maxErrors/, 'maxErrors'],
  [/^\/body\/target\/pick/, 'pick'],
  [/^\/body\/target/, 'targetType'],
  [/^\/body\/action\/credentialIds/, 'credentialIds'],
  ...CLOUD_BODY_FIELDS,
  ...RUNBOOK_BODY_FIELDS,
  [/^\/body\/action\/flavour/, 'flavour'],
  [/^\/body\/action\/runbook\/interpreter/, 'interpreter'],
  [/^\/body\/action\/runbook\/notes/, 'notes'],
  [/^\/body\/action\/timeoutSeconds/, 'timeoutSeconds'],
  [/^\/body\/action(\/|$)/, 'script'],
  [/^\/body\/actionLimit\/max/, 'limitMax'],
  [/^\/body\/actionLimit\/windowSeconds/, 'limitWindowSeconds'],
  [/^\/body\/actionLimit/, 'onLimit'],
];

/**
 * The wizard's field that a service error's JSON pointer into the body names, if any; what else is
 * wrong with a cloud action goes to its operation, with a stored runbook to the runbook picked, with
 * a repository's file to its path.
 */
export function formFieldOf(path: string, actionType: RuleForm['actionType'] = 'script', runbookSource: RunbookSource = 'inline'): FormField | undefined {
  const field = BODY_FIELDS.find(([pattern]) => pattern.test(path))?.[1];
  if (field !== 'script') return field;
  if (actionType === 'cloud') return 'operation';
  return runbookSource === 'stored' ? 'runbookId' : runbookSource === 'git' ? 'repositoryPath' : field;
}

export function stepOf(field: FormField): StepId {
  return STEPS.find((step) => (step.fields as readonly FormField[]).includes(field))?.id ?? 'review';
}

const HOSTNAME = /^[A-Za-z0-9_.:-]+$/;

/** Quick checks before leaving a step; the service checks everything again on create. */
export function stepErrors(step: StepId, form: RuleForm): FormErrors {
  const errors: FormErrors = {};
  const set = (field: FormField, message: string | undefined) => {
    if (message) errors[field] = message;
  };
  switch (step) {
    case 'trigger':
      set('name', form.name.trim() ? (form.name.trim().length > 200 ? 'at most 200 characters' : undefined) : 'give the rule a name people will recognise in an alert');
      if (form.trigger.type === 'alert' && !form.trigger.integrationId) set('trigger', 'choose the integration whose alerts raise the rule');
      if (form.trigger.type === 'cron') set('schedule', form.schedule.trim() ? undefined : 'write the cron expression, such as */5 * * * * for every 5 minutes');
      break;
    case 'flapping':
      if (form.flappingEnabled) {
        set('flappingMaxEvents', wholeNumberError(form.flappingMaxEvents, 1, 100_000));
        set('flappingWindowSeconds', wholeNumberError(form.flappingWindowSeconds, 1, 86_400));
        set('flappingCooldownSeconds', wholeNumberError(form.flappingCooldownSeconds, 0, 86_400));
        set('flappingMaxStateChanges', wholeNumberError(form.flappingMaxStateChanges, 1, 100_000));
      }
      break;
    case 'target':
      if (form.actionType === 'cli' || form.actionType === 'graph_snapshot') break;
      if (form.actionType === 'cloud') {
        if (!providerOfInfrastructure(form.infrastructureType)) set('actionType', 'a cloud action needs a cloud infrastructure type: AWS EC2, Azure, Google Cloud or OpenStack');
        break;
      }
      if (form.trigger.type === 'cron' && form.targetType === 'trigger_host') {
        set('targetType', 'a schedule names no host: choose one specific host, or hosts with tags');
      }
      if (form.targetType === 'specific_host') {
        set('hostname', !form.hostname.trim() ? 'pick the host to act on' : HOSTNAME.test(form.hostname.trim()) ? undefined : 'a hostname has letters, digits and _ . : - only');
      }
      if (form.targetType === 'specific_tags') {
        if (form.tags.length === 0) set('tags', 'add at least one tag; every host carrying all of them is a target');
        if (pickOf(form) === 'all' && form.maxConcurrency.trim()) set('maxConcurrency', wholeNumberError(form.maxConcurrency, 1, 10_000));
        if (pickOf(form) === 'all' && form.maxErrors.trim()) set('maxErrors', wholeNumberError(form.maxErrors, 1, 10_000));
      }
      break;
    case 'action':
      if (form.actionType === 'graph_snapshot') return snapshotErrors(form);
      if (form.snapshotEnabled) Object.assign(errors, snapshotErrors(form));
      if (form.actionType === 'cloud') return { ...errors, ...cloudStepErrors(form) };
      Object.assign(errors, runbookSourceErrors(form));
      set('timeoutSeconds', wholeNumberError(form.timeoutSeconds, 1, 86_400));
      break;
    case 'limit':
      if (form.limitEnabled) {
        set('limitMax', wholeNumberError(form.limitMax, 1, 100_000));
        set('limitWindowSeconds', wholeNumberError(form.limitWindowSeconds, 1, 30 * 86_400));
      }
      break;
    case 'review':
      break;
  }
  return errors;
}
