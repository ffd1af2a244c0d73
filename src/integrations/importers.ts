import { assertNever } from '../errors/assert-never.js';
import { AlertmanagerImporter } from './alertmanager/import.js';
import { CloudwatchImporter, type CloudwatchImportSettings } from './cloudwatch-sns/import.js';
import { DatadogImporter } from './datadog/import.js';
import { MonascaImporter } from './monasca/import.js';
import type { Importer } from './observation.js';
import { PagerDutyImporter } from './pagerduty/import.js';
import type { IntegrationType } from './schema.js';
import { ZabbixImporter } from './zabbix/import.js';

/** What the importers are built with, read once from the service's config (the AWS endpoints of the cloud actions). */
export type ImporterSettings = Pick<CloudwatchImportSettings, 'awsEndpoint' | 'stsEndpoint'>;

/**
 * Each tool's importer (integrations/<tool>/import.ts), built once: undefined for a tool pitcrew
 * does not import from (yet). Importers keep nothing between pages but the cursor they return
 * (Monasca also keeps a Keystone token until shortly before it expires; CloudWatch an assumed
 * role's credentials until they near expiry).
 */
export function toolImporters(settings: ImporterSettings = {}): (type: IntegrationType) => Importer | undefined {
  const alertmanager = new AlertmanagerImporter();
  const monasca = new MonascaImporter();
  const zabbix = new ZabbixImporter();
  const datadog = new DatadogImporter();
  const pagerduty = new PagerDutyImporter();
  const cloudwatch = new CloudwatchImporter(settings);
  return (type) => {
    switch (type) {
      case 'alertmanager':
        return alertmanager;
      case 'monasca':
        return monasca;
      case 'zabbix':
        return zabbix;
      case 'datadog':
        return datadog;
      case 'pagerduty':
        return pagerduty;
      case 'cloudwatch_sns':
        return cloudwatch;
      case 'grafana':
      case 'generic':
        return undefined;
      default:
        return assertNever(type);
    }
  };
}
