import type { CloudAction, CloudOperation, InfrastructureType } from '../../api/types';
import { providerOfInfrastructure } from '../../credentials/providers';
import { toNumber, wholeNumberError } from '../../ui/numbers';

/** The wizard's fields of a cloud action (docs/cloud-actions.md); the wait is the form's timeoutSeconds. */
export interface CloudFields {
  operation: CloudOperation;
  /** As typed; required for AWS. */
  region: string;
  credentialId: string;
  /** The instance named by the alert's payload, or a fixed list. */
  instancesFrom: 'payload' | 'ids';
  /** The payload field (or MetaData key) holding the instance id. */
  instanceField: string;
  /** As typed: ids separated by new lines, spaces or commas. */
  instanceIds: string;
  /** terminate runs only with this ticked. */
  confirmTerminate: boolean;
}

export type CloudField = keyof CloudFields;

export const DEFAULT_INSTANCE_FIELD = 'InstanceId';

export function emptyCloudFields(): CloudFields {
  return { operation: 'reboot', region: '', credentialId: '', instancesFrom: 'payload', instanceField: DEFAULT_INSTANCE_FIELD, instanceIds: '', confirmTerminate: false };
}

/** The form of a stored cloud action, or null for one the wizard cannot show (instances chosen by tag). */
export function cloudFieldsOf(action: CloudAction): CloudFields | null {
  const instances = action.instances ?? { from: 'payload' as const };
  if ('tags' in instances) return null;
  return {
    operation: action.operation,
    region: action.region ?? '',
    credentialId: action.credentialId ?? '',
    instancesFrom: 'ids' in instances ? 'ids' : 'payload',
    instanceField: 'ids' in instances ? DEFAULT_INSTANCE_FIELD : (instances.field ?? DEFAULT_INSTANCE_FIELD),
    instanceIds: 'ids' in instances ? instances.ids.join('\n') : '',
    confirmTerminate: action.confirmTerminate === true,
  };
}

/** The ids as typed, one each, in order, without repeats. */
export function parseInstanceIds(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
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
    instances: form.instancesFrom === 'ids' ? { ids: parseInstanceIds(form.instanceIds) } : { from: 'payload', field: form.instanceField.trim() },
    ...(form.operation === 'terminate' ? { confirmTerminate: form.confirmTerminate } : {}),
    timeoutSeconds: toNumber(form.timeoutSeconds),
  };
}

const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const EC2_INSTANCE = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

/** Quick checks of the cloud action step; the service checks everything again on create. */
export function cloudStepErrors(form: CloudFields & { infrastructureType: InfrastructureType; timeoutSeconds: string }): Partial<Record<CloudField | 'timeoutSeconds', string>> {
  const errors: Partial<Record<CloudField | 'timeoutSeconds', string>> = {};
  const provider = providerOfInfrastructure(form.infrastructureType);
  if (!form.credentialId) errors.credentialId = 'pick the credential the action acts with';
  const region = form.region.trim();
  if (provider === 'aws' && !region) errors.region = 'enter the region of the instances, e.g. eu-west-1';
  else if (provider === 'aws' && !AWS_REGION.test(region)) errors.region = `“${region}” is not an AWS region name such as eu-west-1`;
  if (form.instancesFrom === 'payload') {
    const field = form.instanceField.trim();
    if (!field) errors.instanceField = `name the payload field that holds the instance id, e.g. ${DEFAULT_INSTANCE_FIELD}`;
    else if (field.length > 200) errors.instanceField = 'at most 200 characters';
  } else {
    const ids = parseInstanceIds(form.instanceIds);
    const wrong = provider === 'aws' ? ids.find((id) => !EC2_INSTANCE.test(id)) : undefined;
    if (ids.length === 0) errors.instanceIds = 'list at least one instance id';
    else if (ids.length > 100) errors.instanceIds = 'at most 100 instances';
    else if (wrong !== undefined) errors.instanceIds = `“${wrong}” is not an EC2 instance id (i- and 8 or 17 hexadecimal digits)`;
  }
  if (form.operation === 'terminate' && !form.confirmTerminate) errors.confirmTerminate = 'terminate destroys the instance and its local disks for good: tick the box to allow it';
  const timeout = wholeNumberError(form.timeoutSeconds, 10, 3600);
  if (timeout) errors.timeoutSeconds = timeout;
  return errors;
}

/** Where the service's errors about a cloud action go in the wizard. */
export const CLOUD_BODY_FIELDS: Array<[RegExp, CloudField | 'actionType']> = [
  [/^\/body\/action\/provider/, 'actionType'],
  [/^\/body\/action\/operation/, 'operation'],
  [/^\/body\/action\/region/, 'region'],
  [/^\/body\/action\/credentialId/, 'credentialId'],
  [/^\/body\/action\/instances\/field/, 'instanceField'],
  [/^\/body\/action\/instances\/ids/, 'instanceIds'],
  [/^\/body\/action\/instances/, 'instancesFrom'],
  [/^\/body\/action\/confirmTerminate/, 'confirmTerminate'],
];
