import type { FieldError } from '../errors/catalogue.js';
import type { Provider, Secret } from './schema.js';

interface ServiceAccountKey {
  type?: unknown;
  project_id?: unknown;
  client_email?: unknown;
  private_key?: unknown;
}

/** What the schema cannot check: a GCP key file must be a service account's JSON key. */
export function secretProblems(provider: Provider, secret: Secret): FieldError[] {
  if (provider !== 'gcp') return [];
  const path = '/body/secret/serviceAccountJson';
  let key: ServiceAccountKey;
  try {
    key = JSON.parse((secret as Secret<'gcp'>).serviceAccountJson) as ServiceAccountKey;
  } catch {
    return [{ path, message: 'is not JSON: paste the whole key file Google gave for the service account' }];
  }
  const missing = (['type', 'project_id', 'client_email', 'private_key'] as const).filter((field) => typeof key[field] !== 'string');
  if (missing.length > 0) return [{ path, message: `is not a service account key: it lacks ${missing.join(', ')}` }];
  if (key.type !== 'service_account') return [{ path, message: `is a key of type "${String(key.type)}"; a service account key (type service_account) is needed` }];
  return [];
}

/** What people may see of a secret: identifiers, the access key id masked, never a secret value. */
export function summaryOf(provider: Provider, secret: Secret): Record<string, string> {
  switch (provider) {
    case 'aws': {
      const aws = secret as Secret<'aws'>;
      return { accessKeyId: mask(aws.accessKeyId), ...(aws.roleArn ? { roleArn: aws.roleArn } : {}), ...(aws.sessionToken ? { sessionToken: 'set' } : {}) };
    }
    case 'azure': {
      const { tenantId, clientId, subscriptionId } = secret as Secret<'azure'>;
      return { tenantId, clientId, subscriptionId };
    }
    case 'gcp': {
      const key = JSON.parse((secret as Secret<'gcp'>).serviceAccountJson) as { project_id: string; client_email: string };
      return { projectId: key.project_id, clientEmail: key.client_email };
    }
    case 'openstack': {
      const os = secret as Secret<'openstack'>;
      return { authUrl: os.authUrl, applicationCredentialId: mask(os.applicationCredentialId), ...(os.region ? { region: os.region } : {}) };
    }
  }
}

/** The first and last four characters: enough to tell keys apart, not to use one. */
export function mask(value: string): string {
  return value.length > 12 ? `${value.slice(0, 4)}…${value.slice(-4)}` : `…${value.slice(-2)}`;
}
