import { assertNever } from '../errors/assert-never.js';
import { CloudwatchImporter, type CloudwatchImportSettings } from './cloudwatch-sns/import.js';
import { DatadogImporter } from './datadog/import.js';
import type { Importer } from './observation.js';
import { PagerDutyImporter } from './pagerduty/import.js';
import type { IntegrationType } from './schema.js';
import { ZabbixImporter } from './zabbix/import.js';

/** What the importers are built with, read once from the service's config (the AWS endpoints of the cloud actions). */
export type ImporterSettings = Pick<CloudwatchImportSettings, 'awsEndpoint' | 'stsEndpoint'>;

/**
 * Each tool's importer (integrations/<tool>/import.ts), built once: undefined for a tool pitcrew
 * does not import from (yet). Importers keep nothing between pages but the cursor they return
 * (CloudWatch also reuses an assumed role's credentials until they near expiry).
 */
export function toolImporters(settings: ImporterSettings = {}): (type: IntegrationType) => Importer | undefined {
  const zabbix = new ZabbixImporter();
  const datadog = new DatadogImporter();
  const pagerduty = new PagerDutyImporter();
  const cloudwatch = new CloudwatchImporter(settings);
  return (type) => {
    switch (type) {
      case 'zabbix':
        return zabbix;
      case 'datadog':
        return datadog;
      case 'pagerduty':
        return pagerduty;
      case 'cloudwatch_sns':
        return cloudwatch;
      case 'alertmanager':
      case 'grafana':
      case 'monasca':
      case 'generic':
        return undefined;
      default:
        return assertNever(type);
    }
  };
}
