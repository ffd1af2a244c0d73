import type { FieldError } from '../errors/catalogue.js';
import { alertmanagerImportNeeds } from './alertmanager/import.js';
import { cloudwatchImportNeeds } from './cloudwatch-sns/import-needs.js';
import { datadogImportNeeds } from './datadog/import-needs.js';
import { monascaImportNeeds } from './monasca/import.js';
import { pagerdutyImportNeeds } from './pagerduty/import-needs.js';
import type { IntegrationType } from './schema.js';
import { zabbixImportNeeds } from './zabbix/import-needs.js';

/**
 * What an import of a tool needs (docs/incidents-import.md), checked when it is set up (PATCH
 * /integrations/{id} {import}) and before an import on demand; and which calls other than GET it
 * may make because they read (src/imports/read-only.ts refuses every other write before it leaves).
 */
export interface ImportNeeds {
  /** The tool's name in messages ("Alertmanager", "Monasca"). */
  tool: string;
  /** What the import reads with, in words, for people setting it up (the UI's import section). */
  secretShape: string;
  /** The providers of stored credentials the import may read with (CloudWatch: aws); none: a secret only. */
  credentialProviders: readonly string[];
  /** Field errors of a secret as given: its shape for this tool. */
  secretErrors(secret: unknown, at: string): FieldError[];
  /** What the integration lacks before an import can run: a setting of its config, a secret. */
  settingsErrors(input: ImportReadiness): FieldError[];
  /** The integration's own secret serves when the import has none (Monasca: the token kept by POST …/monasca/token). */
  integrationSecret: boolean;
  /** A call other than GET that reads (a token request, a JSON-RPC `.get` method, a signed Describe* call). */
  readOnlyCall?(method: string, url: URL, body: string | undefined, headers: Record<string, string>): boolean;
}

export interface ImportReadiness {
  config: Record<string, unknown>;
  hasSecret: boolean;
  /** The stored credential's provider, when the import reads with one. */
  credentialProvider: string | undefined;
  integrationHasSecret: boolean;
}

/** The tools pitcrew imports alarms from, as people name them. */
export const IMPORTING_TOOLS = ['alertmanager (Alertmanager and Prometheus)', 'monasca', 'zabbix', 'datadog', 'pagerduty', 'cloudwatch_sns'];

/** Each tool's import needs: the one list of the tools pitcrew imports from. */
export function importNeeds(type: IntegrationType): ImportNeeds | undefined {
  switch (type) {
    case 'alertmanager':
      return alertmanagerImportNeeds;
    case 'monasca':
      return monascaImportNeeds;
    case 'zabbix':
      return zabbixImportNeeds;
    case 'datadog':
      return datadogImportNeeds;
    case 'pagerduty':
      return pagerdutyImportNeeds;
    case 'cloudwatch_sns':
      return cloudwatchImportNeeds;
    case 'grafana':
    case 'generic':
      return undefined;
  }
}

/** A required setting of the config: an http(s) URL. */
export function urlSettingErrors(config: Record<string, unknown>, name: string, what: string, required: boolean): FieldError[] {
  const value = config[name];
  if (value === undefined && !required) return [];
  if (typeof value === 'string' && /^https?:\/\/[^/]/.test(value.trim()) && URL.canParse(value.trim())) return [];
  return [{ path: `/body/config/${name}`, message: `${name} must be ${what}: set it in the integration's config` }];
}

/** A secret that must be a non-empty string. */
export function stringSecretErrors(secret: unknown, at: string, what: string): FieldError[] {
  return typeof secret === 'string' && secret.trim() !== '' ? [] : [{ path: at, message: `the import's secret must be ${what} (a string)` }];
}

/** The import has no secret (nor credential) yet. */
export function missingSecret(input: ImportReadiness, what: string): FieldError[] {
  return input.hasSecret || input.credentialProvider !== undefined ? [] : [{ path: '/body/import/secret', message: `an import needs ${what} as its secret` }];
}
