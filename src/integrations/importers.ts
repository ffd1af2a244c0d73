import type { FieldError } from '../errors/catalogue.js';
import { alertmanagerImportNeeds, AlertmanagerImporter } from './alertmanager/import.js';
import { monascaImportNeeds, MonascaImporter } from './monasca/import.js';
import type { Importer } from './observation.js';
import type { IntegrationType } from './schema.js';

/** What an import of a tool needs, checked when it is set up (PATCH /integrations/{id} {import}) and before each run. */
export interface ImportNeeds {
  /** The tool's name in messages ("Alertmanager", "Monasca"). */
  tool: string;
  /** The providers of stored credentials the import may read with (CloudWatch: aws); none: a secret only. */
  credentialProviders: readonly string[];
  /** Field errors of a secret as given: its shape for this tool. */
  secretErrors(secret: unknown, at: string): FieldError[];
  /** What the integration lacks before an import can run: a setting of its config, a secret. */
  settingsErrors(input: ImportReadiness): FieldError[];
  /** The integration's own secret serves when the import has none (Monasca: the token kept by POST …/monasca/token). */
  integrationSecret: boolean;
  /**
   * A call other than GET the import may make because it reads (a token request, a JSON-RPC `.get`
   * method): every other write is refused before it leaves (src/imports/read-only.ts).
   */
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
export const IMPORTING_TOOLS = ['alertmanager (Alertmanager and Prometheus)', 'monasca'];

/** Each tool's import needs (integrations/<tool>/import.ts): the one list of the tools pitcrew imports from. */
export function importNeeds(type: IntegrationType): ImportNeeds | undefined {
  switch (type) {
    case 'alertmanager':
      return alertmanagerImportNeeds;
    case 'monasca':
      return monascaImportNeeds;
    case 'grafana':
    case 'zabbix':
    case 'datadog':
    case 'pagerduty':
    case 'cloudwatch_sns':
    case 'generic':
      return undefined;
  }
}

/** Each tool's importer, built once for the service. */
export function toolImporters(): (type: IntegrationType) => Importer | undefined {
  const alertmanager = new AlertmanagerImporter();
  const monasca = new MonascaImporter();
  return (type) => {
    switch (type) {
      case 'alertmanager':
        return alertmanager;
      case 'monasca':
        return monasca;
      case 'grafana':
      case 'zabbix':
      case 'datadog':
      case 'pagerduty':
      case 'cloudwatch_sns':
      case 'generic':
        return undefined;
    }
  };
}
