import { join } from 'node:path';
import type { Provider, Secret } from '../../credentials/schema.js';
import { awsEndpointEnv, awsShim } from './aws-cli.js';

/*
 * The environment of a CLI runbook on the CLI Machine (docs/cli-machine.md): a clean base (nothing
 * of the service's own environment, which holds DATABASE_URL and the secret key), the payload's
 * variables, the PITCREW_* context, then the referenced credentials in each CLI's own variables.
 * Pure: the runner writes the files and spawns.
 */

export interface CliCredential {
  name: string;
  provider: Provider;
  secret: Secret;
  /** An AWS credential's role, assumed by the service for this run: what the runbook gets instead of the stored keys. */
  assumed?: TemporaryAwsCredentials | undefined;
}

export interface TemporaryAwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | undefined;
}

/** A file of the run's HOME: relative to it, written 0600 unless `executable` (0700). */
export interface HomeFile {
  path: string;
  content: string;
  executable?: boolean;
}

/** Where the shim of aws-cli.ts goes, first on the run's PATH. */
export const SHIM_DIR = '.pitcrew/bin';

export interface CliEnvironment {
  env: Record<string, string>;
  /** Files the CLIs read their credentials from, and the programs pitcrew puts first on PATH. */
  files: HomeFile[];
  /** Every value to mask in the run's output. */
  secrets: string[];
  /** Payload names left out; logged by name only. */
  skipped: string[];
}

export interface CliEnvironmentSettings {
  /** The PATH runbooks get: where the operator put the CLIs it allows. */
  path: string;
  /** PITCREW_AWS_ENDPOINT_URL: given to the AWS CLI as its EC2 endpoint (aws-cli.ts). */
  awsEndpoint: string | undefined;
  /** PITCREW_AWS_STS_ENDPOINT_URL: given to the AWS CLI as its STS endpoint. */
  awsStsEndpoint?: string | undefined;
}

/**
 * Names a payload may not set for a CLI runbook: they choose where a CLI sends the credentials it
 * holds (an endpoint, a proxy, a CA bundle) or which credentials it uses, so a webhook caller could
 * redirect the tenant's keys to a server of its own.
 */
const CLI_PREFIXES = ['AWS_', 'AZURE_', 'ARM_', 'GOOGLE_', 'GCLOUD_', 'CLOUDSDK_', 'GCE_', 'OS_', 'OPENSTACK_', 'KUBE', 'BOTO_', 'SDK_'];
const CLI_NAMES = new Set(['REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'NODE_EXTRA_CA_CERTS', 'NO_GCE_CHECK']);

function configuresACli(name: string): boolean {
  return CLI_NAMES.has(name) || CLI_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Why the CLI Machine does not give a runbook this payload variable (the event's skippedEnv), or undefined. */
export function cliEnvRefusal(name: string): string | undefined {
  if (name.startsWith('PITCREW_')) return 'reserved for pitcrew: only the service sets PITCREW_* variables';
  if (configuresACli(name)) return 'reserved on the CLI Machine: it would choose where a cloud CLI sends the tenant\'s credentials, or which ones it uses';
  return undefined;
}

export function cliEnvironment(
  home: string,
  settings: CliEnvironmentSettings,
  payload: Record<string, string>,
  context: Record<string, string>,
  credentials: readonly CliCredential[],
): CliEnvironment {
  const env: Record<string, string> = {
    PATH: settings.path,
    HOME: home,
    TMPDIR: join(home, 'tmp'),
    LANG: 'C.UTF-8',
    // A CLI on a cloud VM would otherwise fall back to the machine's own identity (instance
    // metadata) when a runbook names no credential: the service's role, not the tenant's.
    AWS_EC2_METADATA_DISABLED: 'true',
    NO_GCE_CHECK: 'True',
    AWS_PAGER: '',
  };
  const skipped: string[] = [];
  // The payload's names passed ingress's checks (ingress/env.ts: shell identifiers, none that
  // changes how a process runs), and the writer left out those a CLI runbook refuses (cliKind's
  // refusesEnv); checked again here for the events stored before it did.
  for (const [name, value] of Object.entries(payload)) {
    if (cliEnvRefusal(name) === undefined) env[name] = value;
    else skipped.push(name);
  }
  for (const [name, value] of Object.entries(context)) if (name.startsWith('PITCREW_')) env[name] = value;
  const result: CliEnvironment = { env, files: [], secrets: [], skipped };
  for (const credential of credentials) addCredential(result, home, settings, credential);
  return result;
}

function addCredential(out: CliEnvironment, home: string, settings: CliEnvironmentSettings, { provider, secret, assumed }: CliCredential): void {
  switch (provider) {
    case 'aws':
      return addAws(out, home, settings, secret as Secret<'aws'>, assumed);
    case 'azure':
      return addAzure(out, home, secret as Secret<'azure'>);
    case 'gcp':
      return addGcp(out, home, secret as Secret<'gcp'>);
    case 'openstack':
      return addOpenStack(out, secret as Secret<'openstack'>);
  }
}

/**
 * The AWS CLI's variables: the stored keys, or with a role the temporary credentials the service
 * assumed for the run (runner.ts). The CLI cannot be left to assume the role itself from a config
 * file: its credential chain takes AWS_ACCESS_KEY_ID first (botocore credentials.py,
 * create_credential_resolver: env before assume-role), and before 2.13 it reads no STS endpoint.
 * The operator's endpoints come as the CLI's variables and, for older CLIs, through the shim.
 */
function addAws(out: CliEnvironment, home: string, settings: CliEnvironmentSettings, secret: Secret<'aws'>, assumed: TemporaryAwsCredentials | undefined): void {
  const keys = assumed ?? secret;
  Object.assign(out.env, { AWS_ACCESS_KEY_ID: keys.accessKeyId, AWS_SECRET_ACCESS_KEY: keys.secretAccessKey });
  if (keys.sessionToken) out.env.AWS_SESSION_TOKEN = keys.sessionToken;
  const endpoints = { ec2: settings.awsEndpoint, sts: settings.awsStsEndpoint };
  Object.assign(out.env, awsEndpointEnv(endpoints));
  const shim = awsShim(endpoints, settings.path);
  if (shim) {
    out.files.push({ path: `${SHIM_DIR}/aws`, content: shim, executable: true });
    out.env.PATH = `${join(home, SHIM_DIR)}:${settings.path}`;
  }
  out.secrets.push(secret.accessKeyId, secret.secretAccessKey, ...optional(secret.sessionToken, secret.externalId));
  if (assumed) out.secrets.push(assumed.accessKeyId, assumed.secretAccessKey, ...optional(assumed.sessionToken));
}

/** The names the Azure SDKs and Terraform read; `az` logs in with them (docs/cli-machine.md). */
function addAzure(out: CliEnvironment, home: string, secret: Secret<'azure'>): void {
  Object.assign(out.env, {
    AZURE_TENANT_ID: secret.tenantId,
    AZURE_CLIENT_ID: secret.clientId,
    AZURE_CLIENT_SECRET: secret.clientSecret,
    AZURE_SUBSCRIPTION_ID: secret.subscriptionId,
    AZURE_CONFIG_DIR: join(home, '.azure'),
    AZURE_CORE_COLLECT_TELEMETRY: 'false',
  });
  out.secrets.push(secret.clientSecret);
}

/** gcloud and the Google client libraries read the key file these variables name. */
function addGcp(out: CliEnvironment, home: string, secret: Secret<'gcp'>): void {
  const key = JSON.parse(secret.serviceAccountJson) as { project_id?: string; private_key?: string; private_key_id?: string };
  const file = join(home, '.config/gcloud/service-account.json');
  out.files.push({ path: '.config/gcloud/service-account.json', content: secret.serviceAccountJson });
  Object.assign(out.env, { GOOGLE_APPLICATION_CREDENTIALS: file, CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: file, CLOUDSDK_CONFIG: join(home, '.config/gcloud') });
  if (key.project_id) out.env.CLOUDSDK_CORE_PROJECT = key.project_id;
  // The key as a whole, and each line of it: a CLI may print the PEM, or the JSON with its escapes.
  const pem = key.private_key ?? '';
  out.secrets.push(secret.serviceAccountJson, pem, ...pem.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----')), ...optional(key.private_key_id));
}

/** The openstack CLI's (openstacksdk's) variables for an application credential. */
function addOpenStack(out: CliEnvironment, secret: Secret<'openstack'>): void {
  Object.assign(out.env, {
    OS_AUTH_TYPE: 'v3applicationcredential',
    OS_AUTH_URL: secret.authUrl,
    OS_APPLICATION_CREDENTIAL_ID: secret.applicationCredentialId,
    OS_APPLICATION_CREDENTIAL_SECRET: secret.applicationCredentialSecret,
    OS_IDENTITY_API_VERSION: '3',
    OS_INTERFACE: 'public',
  });
  if (secret.region) out.env.OS_REGION_NAME = secret.region;
  out.secrets.push(secret.applicationCredentialSecret);
}

function optional(...values: Array<string | undefined>): string[] {
  return values.filter((value): value is string => typeof value === 'string' && value !== '');
}
