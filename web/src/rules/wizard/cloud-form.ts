import type { CloudAction, CloudOperation, InfrastructureType } from '../../api/types';
import { providerOfInfrastructure } from '../../credentials/providers';
import { toNumber, wholeNumberError } from '../../ui/numbers';

/** The wizard's fields of a cloud action (docs/cloud-actions.md); the wait is the form's timeoutSeconds. */
export interface CloudFields {
  operation: CloudOperation;
  /** As typed; required for AWS. */
  region: string;
  credentialId: string;
  /** The instance named by the alert's payload, a fixed list, or those carrying tags at the provider. */
  instancesFrom: 'payload' | 'ids' | 'tags';
  /** The payload field (or MetaData key) holding the instance id. */
  instanceField: string;
  /** As typed: ids separated by new lines, spaces or commas. */
  instanceIds: string;
  /** As typed: name=value, one a line. */
  instanceTags: string;
  /** The instances' fan-out, as typed: maxConcurrency and maxErrors, empty for none. */
  instancesAtOnce: string;
  failedInstances: string;
  /** terminate runs only with this ticked. */
  confirmTerminate: boolean;
}

export type CloudField = keyof CloudFields;

export const DEFAULT_INSTANCE_FIELD = 'InstanceId';

export function emptyCloudFields(): CloudFields {
  return { operation: 'reboot', region: '', credentialId: '', instancesFrom: 'payload', instanceField: DEFAULT_INSTANCE_FIELD, instanceIds: '', instanceTags: '', instancesAtOnce: '', failedInstances: '', confirmTerminate: false };
}

/** The form of a stored cloud action. */
export function cloudFieldsOf(action: CloudAction): CloudFields {
  const instances = action.instances ?? { from: 'payload' as const };
  return {
    operation: action.operation,
    region: action.region ?? '',
    credentialId: action.credentialId ?? '',
    instancesFrom: 'ids' in instances ? 'ids' : 'tags' in instances ? 'tags' : 'payload',
    instanceField: 'from' in instances ? (instances.field ?? DEFAULT_INSTANCE_FIELD) : DEFAULT_INSTANCE_FIELD,
    instanceIds: 'ids' in instances ? instances.ids.join('\n') : '',
    instanceTags: 'tags' in instances ? Object.entries(instances.tags).map(([name, value]) => `${name}=${value}`).join('\n') : '',
    instancesAtOnce: action.maxConcurrency === undefined ? '' : String(action.maxConcurrency),
    failedInstances: action.maxErrors === undefined ? '' : String(action.maxErrors),
    confirmTerminate: action.confirmTerminate === true,
  };
}

/** The ids as typed, one each, in order, without repeats. */
export function parseInstanceIds(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

/** The tags as typed, `name=value` one a line (blank lines skipped), or the first line that is not one. */
export function parseInstanceTags(text: string): Record<string, string> | { wrong: string } {
  const tags: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf('=');
    if (at <= 0) return { wrong: line };
    tags[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return tags;
}

function instancesOf(form: CloudFields): NonNullable<CloudAction['instances']> {
  if (form.instancesFrom === 'ids') return { ids: parseInstanceIds(form.instanceIds) };
  if (form.instancesFrom === 'tags') {
    const tags = parseInstanceTags(form.instanceTags);
    return { tags: 'wrong' in tags ? {} : tags };
  }
  return { from: 'payload', field: form.instanceField.trim() };
}

/** The action to send: the provider is the infrastructure type's, stated. */
export function toCloudAction(form: CloudFields & { infrastructureType: InfrastructureType; timeoutSeconds: string }): CloudAction {
  const provider = providerOfInfrastructure(form.infrastructureType);
  const region = form.region.trim();
  return {
    type: 'cloud',
    ...(provider ? { provider } : {}),
    operation: form.operation,
    ...(region ? { region } : {}),
    ...(form.credentialId ? { credentialId: form.credentialId } : {}),
    instances: instancesOf(form),
    ...(form.operation === 'terminate' ? { confirmTerminate: form.confirmTerminate } : {}),
    ...(form.instancesAtOnce.trim() ? { maxConcurrency: toNumber(form.instancesAtOnce) } : {}),
    ...(form.failedInstances.trim() ? { maxErrors: toNumber(form.failedInstances) } : {}),
    timeoutSeconds: toNumber(form.timeoutSeconds),
  };
}

const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const EC2_INSTANCE = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

/** Quick checks of the cloud action step; the service checks everything again on create. */
export function cloudStepErrors(form: CloudFields & { infrastructureType: InfrastructureType; timeoutSeconds: string; trigger: { type: string } }): Partial<Record<CloudField | 'timeoutSeconds', string>> {
  const errors: Partial<Record<CloudField | 'timeoutSeconds', string>> = {};
  const provider = providerOfInfrastructure(form.infrastructureType);
  if (!form.credentialId) errors.credentialId = 'pick the credential the action acts with';
  const region = form.region.trim();
  if (provider === 'aws' && !region) errors.region = 'enter the region of the instances, e.g. eu-west-1';
  else if (provider === 'aws' && !AWS_REGION.test(region)) errors.region = `“${region}” is not an AWS region name such as eu-west-1`;
  if (form.instancesFrom === 'payload' && form.trigger.type === 'cron') {
    errors.instancesFrom = 'a schedule’s tick names no instance: list the instances, or choose them by tag';
  } else if (form.instancesFrom === 'payload') {
    const field = form.instanceField.trim();
    if (!field) errors.instanceField = `name the payload field that holds the instance id, e.g. ${DEFAULT_INSTANCE_FIELD}`;
    else if (field.length > 200) errors.instanceField = 'at most 200 characters';
  } else if (form.instancesFrom === 'tags') {
    const tags = tagsError(form.instanceTags);
    if (tags) errors.instanceTags = tags;
  } else {
    const ids = parseInstanceIds(form.instanceIds);
    const wrong = provider === 'aws' ? ids.find((id) => !EC2_INSTANCE.test(id)) : undefined;
    if (ids.length === 0) errors.instanceIds = 'list at least one instance id';
    else if (ids.length > 100) errors.instanceIds = 'at most 100 instances';
    else if (wrong !== undefined) errors.instanceIds = `“${wrong}” is not an EC2 instance id (i- and 8 or 17 hexadecimal digits)`;
  }
  if (form.operation === 'terminate' && !form.confirmTerminate) errors.confirmTerminate = 'terminate destroys the instance and its local disks for good: tick the box to allow it';
  if (form.instancesAtOnce.trim()) errors.instancesAtOnce = wholeNumberError(form.instancesAtOnce, 1, 10_000);
  if (form.failedInstances.trim()) errors.failedInstances = wholeNumberError(form.failedInstances, 1, 10_000);
  const timeout = wholeNumberError(form.timeoutSeconds, 10, 3600);
  if (timeout) errors.timeoutSeconds = timeout;
  return errors;
}

function tagsError(text: string): string | undefined {
  const tags = parseInstanceTags(text);
  if ('wrong' in tags) return `“${tags.wrong}” is not name=value`;
  const names = Object.keys(tags);
  if (names.length === 0) return 'enter at least one tag, name=value, e.g. env=prod';
  if (names.length > 10) return 'at most 10 tags';
  const long = names.find((name) => name.length > 128) ?? names.find((name) => tags[name]!.length > 256);
  return long === undefined ? undefined : `“${long}”: a tag name is at most 128 characters, its value 256`;
}

/** Where the service's errors about a cloud action go in the wizard. */
export const CLOUD_BODY_FIELDS: Array<[RegExp, CloudField | 'actionType']> = [
  [/^\/body\/action\/provider/, 'actionType'],
  [/^\/body\/action\/operation/, 'operation'],
  [/^\/body\/action\/region/, 'region'],
  [/^\/body\/action\/credentialId/, 'credentialId'],
  [/^\/body\/action\/instances\/field/, 'instanceField'],
  [/^\/body\/action\/instances\/ids/, 'instanceIds'],
  [/^\/body\/action\/instances\/tags/, 'instanceTags'],
  [/^\/body\/action\/instances/, 'instancesFrom'],
  [/^\/body\/action\/confirmTerminate/, 'confirmTerminate'],
  [/^\/body\/action\/maxConcurrency/, 'instancesAtOnce'],
  [/^\/body\/action\/maxErrors/, 'failedInstances'],
];
