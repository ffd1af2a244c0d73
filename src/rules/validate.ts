import { alarmNameProblem } from './alarm-name.js';
import { refProblem, runbookPathProblem } from '../runbooks/git/names.js';
import { Cron } from 'croner';
import type { FieldError } from '../errors/catalogue.js';
import { INFRASTRUCTURE_TYPES, type Action, type RuleBody, type Target } from './schema.js';

export interface CheckOptions {
  /** A cron schedule must have a tick after this moment (a schedule being saved); absent: not asked (one stored before). */
  firesAfter?: number | undefined;
}

/**
 * Checks that span fields, which the JSON schema cannot express. Returns every problem at once,
 * each pointing at the field a person has to change.
 */
export function crossFieldErrors(rule: RuleBody, options: CheckOptions = {}): FieldError[] {
  return [...targetErrors(rule.target), ...compatibilityErrors(rule), ...triggerErrors(rule, options), ...runbookErrors(rule.action)];
}

function targetErrors(target: Target): FieldError[] {
  const errors: FieldError[] = [];
  if (target.type === 'specific_host' && !target.hostname) {
    errors.push({ path: '/target/hostname', message: 'target type specific_host needs the hostname of the host to act on' });
  }
  if (target.type !== 'specific_host' && target.hostname !== undefined) {
    errors.push({ path: '/target/hostname', message: `hostname is only used with target type specific_host, not ${target.type}` });
  }
  if (target.type === 'specific_tags' && !target.tags?.length) {
    errors.push({ path: '/target/tags', message: 'target type specific_tags needs at least one tag; every host carrying all of them is a target' });
  }
  if (target.type !== 'specific_tags' && target.tags !== undefined) {
    errors.push({ path: '/target/tags', message: `tags are only used with target type specific_tags, not ${target.type}` });
  }
  for (const field of ['maxConcurrency', 'maxErrors'] as const) {
    if (target.type !== 'specific_tags' && target[field] !== undefined) {
      errors.push({ path: `/target/${field}`, message: `${field} limits a fan-out over tags: it is only used with target type specific_tags, not ${target.type}` });
    }
  }
  if (target.type !== 'specific_tags' && target.pick !== undefined) {
    errors.push({ path: '/target/pick', message: `pick chooses among the hosts of the tags: it is only used with target type specific_tags, not ${target.type}` });
  }
  return errors;
}

/** Which targets each action kind can act on. */
const ALLOWED_TARGETS: Record<Action['type'], Target['type'][]> = {
  script: ['trigger_host', 'specific_host', 'specific_tags'],
  cloud: ['trigger_host', 'specific_host', 'specific_tags'],
  cli: ['cli_machine'],
  graph_snapshot: ['trigger_host', 'specific_host', 'specific_tags', 'cli_machine'],
  email_runbook: ['trigger_host', 'specific_host', 'specific_tags', 'cli_machine'],
};

function compatibilityErrors(rule: RuleBody): FieldError[] {
  const errors: FieldError[] = [];
  const allowed = ALLOWED_TARGETS[rule.action.type];
  if (!allowed.includes(rule.target.type)) {
    errors.push({
      path: '/target/type',
      message: `a ${rule.action.type} action cannot target ${rule.target.type}; use one of ${allowed.join(', ')}`,
    });
  }
  const given = rule.infrastructureType;
  if (given === undefined || (rule.action.type === 'cloud' && !given.startsWith('CLOUD_'))) {
    errors.push({ path: '/infrastructureType', message: infrastructureMessage(rule.action, given) });
  }
  if (rule.action.type === 'cloud') errors.push(...cloudErrors(rule.action, given ?? ''));
  return errors;
}

/**
 * What to send as the infrastructure type. Only a cloud action is ever without one
 * (rules/infrastructure.ts gives the others On_Premise): its cloud's, named when the action names its provider.
 */
function infrastructureMessage(action: Action, given: string | undefined): string {
  if (action.type !== 'cloud') return `give the infrastructure type: one of ${INFRASTRUCTURE_TYPES.join(', ')}`;
  const types = Object.entries(PROVIDER_INFRASTRUCTURE).map(([provider, type]) => `${type} (${provider})`).join(', ');
  const send = action.provider ? `send "infrastructureType": "${PROVIDER_INFRASTRUCTURE[action.provider]}"` : `send the type of its cloud: ${types}`;
  return given === undefined ? `a cloud action needs its cloud's infrastructure type: ${send}` : `a cloud action needs a cloud infrastructure type, not ${given}: ${send}`;
}

/** The infrastructure type of each cloud provider (DESIGN.md §1). */
export const PROVIDER_INFRASTRUCTURE = { aws: 'CLOUD_EC2', azure: 'CLOUD_AZURE', gcp: 'CLOUD_GCP', openstack: 'CLOUD_OPENSTACK' } as const;

function cloudErrors(action: Extract<Action, { type: 'cloud' }>, infrastructureType: string): FieldError[] {
  const errors: FieldError[] = [];
  const fits = action.provider && PROVIDER_INFRASTRUCTURE[action.provider];
  if (fits && infrastructureType.startsWith('CLOUD_') && fits !== infrastructureType) {
    errors.push({ path: '/action/provider', message: `${action.provider} actions belong to infrastructure type ${fits}, not ${infrastructureType}; change one of them` });
  }
  if (action.credentialId === undefined) {
    errors.push({ path: '/action/credentialId', message: "a cloud action acts with one of the tenant's credentials: store one (POST /api/v1/credentials) and give its id" });
  }
  if (action.operation === 'terminate' && action.confirmTerminate !== true) {
    errors.push({ path: '/action/confirmTerminate', message: 'terminate destroys the instance and its local disks for good: set confirmTerminate to true to allow it' });
  }
  if ((action.provider ?? providerOf(infrastructureType)) === 'aws' && action.region === undefined) {
    errors.push({ path: '/action/region', message: 'an AWS action needs the region of its instances, e.g. eu-west-1' });
  }
  if ((action.provider ?? providerOf(infrastructureType)) === 'gcp') errors.push(...gcpErrors(action));
  return errors;
}

/**
 * A Compute Engine zone (us-central1-a, europe-west1-b): a region, a dash and the zone's letter
 * (https://cloud.google.com/compute/docs/regions-zones), loosely enough for newer zones' suffixes.
 */
export const GCE_ZONE = /^[a-z]+(?:-[a-z]+)*[0-9]+-[a-z][a-z0-9]*$/;
/** GCE label keys and values: lowercase letters (international ones too), digits, _ and -, at most 63 (labeling-resources#requirements). */
const GCE_LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
const GCE_LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;

/** A GCP action's region is a zone (it names the zone of instances given by name alone); its tags are GCE labels. */
function gcpErrors(action: Extract<Action, { type: 'cloud' }>): FieldError[] {
  const errors: FieldError[] = [];
  if (action.region !== undefined && !GCE_ZONE.test(action.region)) {
    errors.push({ path: '/action/region', message: `a GCP action's region is the Compute Engine zone of its instances, e.g. europe-west1-b (used for instances named without their zone); "${action.region}" is not a zone` });
  }
  const tags = action.instances && 'tags' in action.instances ? Object.entries(action.instances.tags) : [];
  for (const [name, value] of tags) {
    if (!GCE_LABEL_KEY.test(name) || !GCE_LABEL_VALUE.test(value)) {
      errors.push({ path: '/action/instances/tags', message: `"${name}": "${value}" cannot be a Compute Engine label (lowercase letters, digits, _ and -, at most 63, the name starting with a letter), so no instance carries it` });
    }
  }
  return errors;
}

/** The provider an infrastructure type implies, if it is a cloud's. */
export function providerOf(infrastructureType: string): keyof typeof PROVIDER_INFRASTRUCTURE | undefined {
  const entry = Object.entries(PROVIDER_INFRASTRUCTURE).find(([, type]) => type === infrastructureType);
  return entry?.[0] as keyof typeof PROVIDER_INFRASTRUCTURE | undefined;
}

function triggerErrors(rule: RuleBody, options: CheckOptions): FieldError[] {
  const { trigger } = rule;
  if (trigger.type === 'alert') {
    const problem = trigger.alarmName === undefined ? undefined : alarmNameProblem(trigger.alarmName);
    return problem ? [{ path: '/trigger/alarmName', message: problem }] : [];
  }
  if (trigger.type !== 'cron') return [];
  const errors = scheduleErrors(trigger, options.firesAfter).map((e) => ({ ...e, path: `/trigger${e.path}` }));
  const { action } = rule;
  // A cloud action that names its instances, or finds them by tag, has no use for the target.
  const namesInstances = action.type === 'cloud' && action.instances !== undefined && !('from' in action.instances);
  if (rule.target.type === 'trigger_host' && action.type === 'cloud' && !namesInstances) {
    errors.push({
      path: '/action/instances',
      message: "a cron trigger carries no payload to name an instance: list the instances (ids), choose them by tag (tags), or target hosts whose cloudInstanceId is set (specific_host, specific_tags)",
    });
  } else if (rule.target.type === 'trigger_host' && !namesInstances) {
    errors.push({
      path: '/target/type',
      message: 'a cron trigger carries no host; choose specific_host, specific_tags (one healthy host of them runs it) or cli_machine',
    });
  }
  return errors;
}

/**
 * A schedule's problems, at `/schedule` and `/timezone`: croner's reading, a zone Intl knows, and,
 * with `firesAfter`, a tick to come: `0 0 31 2 *` reads well and never fires, so a rule saved with
 * it would wait for ever in silence.
 */
export function scheduleErrors(schedule: { schedule: string; timezone?: string | undefined }, firesAfter?: number): FieldError[] {
  const errors: FieldError[] = [];
  // The zone is checked on its own so that each mistake is reported at the field that holds it.
  const zoneKnown = schedule.timezone === undefined || isTimeZone(schedule.timezone);
  if (!zoneKnown) {
    errors.push({ path: '/timezone', message: `"${schedule.timezone}" is not an IANA time zone such as UTC or Europe/Paris` });
  }
  const timezone = zoneKnown ? (schedule.timezone ?? 'UTC') : 'UTC';
  let next: Date | null;
  try {
    next = new Cron(schedule.schedule, { paused: true, timezone }).nextRun(firesAfter === undefined ? undefined : new Date(firesAfter));
  } catch (error) {
    errors.unshift({ path: '/schedule', message: `not a valid schedule: ${cronerProblem(schedule.schedule, (error as Error).message)}` });
    return errors;
  }
  if (firesAfter !== undefined && next === null && zoneKnown) {
    errors.unshift({ path: '/schedule', message: `never fires: no moment from now on matches "${schedule.schedule}" in ${timezone} (a day its months do not have, such as 31 February, or a year gone by); correct the day, month or year` });
  }
  return errors;
}

/** The forms croner reads (its README, "Pattern"; rules/cron.test.ts), as docs/scheduler.md lists them. */
export const SCHEDULE_FORMS = '5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, 7 with seconds first and a year last, or a nickname: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly';

/** Croner's refusal, with the forms it takes when the shape is wrong rather than a field's value. */
function cronerProblem(schedule: string, message: string): string {
  if (!/space separated parts/.test(message)) return message.split('. Original error')[0]!;
  const text = schedule.trim();
  const shape = text.startsWith('@') ? `${JSON.stringify(text)} is not a nickname croner knows` : `it has ${text === '' ? 0 : text.split(/\s+/).length} fields`;
  return `${shape}; write ${SCHEDULE_FORMS}`;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

type RunbookRef = Extract<Action, { type: 'script' | 'cli' }>['runbook'];

/**
 * The fields each form of a runbook takes (schema.ts Runbook), with the read-only ones the view
 * shows of it, so that a rule read back can be sent back.
 */
const RUNBOOK_FORMS = [
  { key: 'script', fields: ['script', 'interpreter', 'notes', 'sha256'], says: 'a script written here' },
  { key: 'runbookId', fields: ['runbookId', 'version', 'name', 'resolvedVersion', 'sha256', 'interpreter'], says: 'a stored runbook, which brings its own interpreter and notes' },
  { key: 'repositoryId', fields: ['repositoryId', 'path', 'ref', 'interpreter'], says: 'a file of a git repository' },
] as const;

/** A script or CLI runbook is one of three forms, each with its own fields. */
function runbookErrors(action: Action): FieldError[] {
  if (action.type === 'email_runbook') return mailedRunbookErrors(action.runbook);
  if (action.type !== 'script' && action.type !== 'cli') return [];
  const runbook: RunbookRef = action.runbook;
  const path = '/action/runbook';
  const forms = RUNBOOK_FORMS.filter((form) => runbook[form.key] !== undefined);
  if (forms.length === 0) return [{ path, message: 'give the script to run (script), a stored runbook (runbookId, and version to pin one), or a file of a connected git repository (repositoryId and path)' }];
  if (forms.length > 1) return [{ path: `${path}/${forms[1]!.key}`, message: `a runbook is ${forms.map((f) => f.says).join(' or ')}, not both: keep one of ${forms.map((f) => f.key).join(', ')}` }];
  const form = forms[0]!;
  const fields: readonly string[] = form.fields;
  const errors: FieldError[] = Object.keys(runbook)
    .filter((field) => !fields.includes(field))
    .map((field) => ({ path: `${path}/${field}`, message: `${field} does not go with ${form.key}: the runbook is ${form.says}` }));
  if (form.key !== 'repositoryId') return errors;
  // Nothing outside the repository can be named: the same checks the read makes (runbooks/git/names.ts).
  const pathProblem = runbook.path === undefined ? "is needed: the path of the runbook's file in the repository, e.g. runbooks/restart-nginx.sh" : runbookPathProblem(runbook.path);
  if (pathProblem) errors.push({ path: `${path}/path`, message: runbook.path === undefined ? pathProblem : `"${runbook.path}" ${pathProblem}` });
  const badRef = runbook.ref === undefined ? undefined : refProblem(runbook.ref);
  if (badRef) errors.push({ path: `${path}/ref`, message: `"${runbook.ref}" ${badRef}` });
  return errors;
}

/** An email runbook is notes written here (and a script), or a stored runbook, whose description is the notes. */
function mailedRunbookErrors(runbook: Extract<Action, { type: 'email_runbook' }>['runbook']): FieldError[] {
  const path = '/action/runbook';
  if (runbook.runbookId === undefined) {
    const stray = (['version', 'name', 'resolvedVersion'] as const).filter((field) => runbook[field] !== undefined);
    const errors = stray.map((field) => ({ path: `${path}/${field}`, message: `${field} goes with runbookId, a stored runbook` }));
    if (runbook.notes === undefined) errors.push({ path: `${path}/notes`, message: 'give the steps to mail (notes, Markdown, and a script if you like), or a stored runbook (runbookId)' });
    return errors;
  }
  return (['notes', 'script'] as const)
    .filter((field) => runbook[field] !== undefined)
    .map((field) => ({ path: `${path}/${field}`, message: `${field} does not go with runbookId: a stored runbook mails its own description and script` }));
}
