import type { Provider } from '../api/credential-types';
import type { CloudProvider, InfrastructureType } from '../api/types';

/** One field of a provider's secret (SECRET_SCHEMAS in src/credentials/schema.ts). */
export interface SecretField {
  name: string;
  label: string;
  /** text: an identifier; password: a secret value, hidden as typed; json: a key file, pasted or loaded. */
  kind: 'text' | 'password' | 'json';
  required: boolean;
  hint?: string;
  placeholder?: string;
}

export interface ProviderInfo {
  title: string;
  /** What the credential is at that provider. */
  what: string;
  fields: SecretField[];
  /** The infrastructure type of its rules (DESIGN.md §1). */
  infrastructureType: InfrastructureType;
  /** What its cloud actions act on, singular and plural: "EC2 instance". */
  instance: string;
  instances: string;
}

export const PROVIDER_INFO: Record<Provider, ProviderInfo> = {
  aws: {
    title: 'AWS',
    what: 'Access keys of an IAM user (or temporary keys with their session token).',
    infrastructureType: 'CLOUD_EC2',
    instance: 'EC2 instance',
    instances: 'EC2 instances',
    fields: [
      { name: 'accessKeyId', label: 'Access key ID', kind: 'text', required: true, placeholder: 'AKIA…', hint: 'AKIA…, or ASIA… for temporary keys. Shown masked afterwards.' },
      { name: 'secretAccessKey', label: 'Secret access key', kind: 'password', required: true },
      { name: 'sessionToken', label: 'Session token (optional)', kind: 'password', required: false, hint: 'Only for temporary keys (ASIA…).' },
      { name: 'roleArn', label: 'Role ARN (optional)', kind: 'text', required: false, placeholder: 'arn:aws:iam::123456789012:role/pitcrew', hint: 'A role to assume with the keys (sts:AssumeRole): cloud actions and CLI runbooks act as it.' },
      { name: 'externalId', label: 'External ID (optional)', kind: 'text', required: false, hint: 'The role’s external ID, if its trust policy asks for one.' },
    ],
  },
  azure: {
    title: 'Azure',
    what: 'A service principal: its tenant, client ID and client secret, and the subscription of the VMs.',
    infrastructureType: 'CLOUD_AZURE',
    instance: 'Azure VM',
    instances: 'Azure VMs',
    fields: [
      { name: 'tenantId', label: 'Tenant ID', kind: 'text', required: true, placeholder: '00000000-0000-0000-0000-000000000000' },
      { name: 'clientId', label: 'Client ID', kind: 'text', required: true, placeholder: '00000000-0000-0000-0000-000000000000' },
      { name: 'clientSecret', label: 'Client secret', kind: 'password', required: true },
      { name: 'subscriptionId', label: 'Subscription ID', kind: 'text', required: true, placeholder: '00000000-0000-0000-0000-000000000000' },
    ],
  },
  gcp: {
    title: 'Google Cloud',
    what: 'A service account’s JSON key file, whole, as Google gives it.',
    infrastructureType: 'CLOUD_GCP',
    instance: 'Compute Engine instance',
    instances: 'Compute Engine instances',
    fields: [
      { name: 'serviceAccountJson', label: 'Service account key (JSON)', kind: 'json', required: true, hint: 'Paste the whole key file, or load it. Its project and client email are shown afterwards; the private key never is.' },
    ],
  },
  openstack: {
    title: 'OpenStack',
    what: 'An application credential of a user with the member role on the project.',
    infrastructureType: 'CLOUD_OPENSTACK',
    instance: 'OpenStack server',
    instances: 'OpenStack servers',
    fields: [
      { name: 'authUrl', label: 'Keystone URL', kind: 'text', required: true, placeholder: 'https://keystone.example.com:5000/v3', hint: 'The Keystone v3 URL.' },
      { name: 'applicationCredentialId', label: 'Application credential ID', kind: 'text', required: true },
      { name: 'applicationCredentialSecret', label: 'Application credential secret', kind: 'password', required: true },
      { name: 'region', label: 'Region (optional)', kind: 'text', required: false, placeholder: 'RegionOne' },
    ],
  },
};

/** The cloud provider whose rules have this infrastructure type, if it is a cloud's. */
export function providerOfInfrastructure(type: InfrastructureType): CloudProvider | undefined {
  return (Object.entries(PROVIDER_INFO) as Array<[Provider, ProviderInfo]>).find(([, info]) => info.infrastructureType === type)?.[0];
}

const SUMMARY_LABELS: Record<string, string> = {
  accessKeyId: 'Access key',
  roleArn: 'Role',
  sessionToken: 'Session token',
  tenantId: 'Tenant',
  clientId: 'Client',
  subscriptionId: 'Subscription',
  projectId: 'Project',
  clientEmail: 'Service account',
  authUrl: 'Keystone',
  applicationCredentialId: 'Application credential',
  region: 'Region',
};

/** The summary's identifiers as label and value pairs, in the order the service gave them. */
export function summaryRows(summary: Record<string, string>): Array<[string, string]> {
  return Object.entries(summary).map(([key, value]) => [SUMMARY_LABELS[key] ?? key, value]);
}
