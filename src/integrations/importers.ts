import type { Importer } from './observation.js';
import { AlertmanagerImporter } from './alertmanager/import.js';
import { MonascaImporter } from './monasca/import.js';
import type { IntegrationType } from './schema.js';

/**
 * Each tool's importer (integrations/<tool>/import.ts), built once: undefined for a tool pitcrew
 * does not import from (yet). Importers keep nothing between pages but the cursor they return
 * (Monasca also keeps a Keystone token until shortly before it expires).
 */
export function toolImporters(): (type: IntegrationType) => Importer | undefined {
  const alertmanager = new AlertmanagerImporter();
  const monasca = new MonascaImporter();
  return (type) => {
    switch (type) {
      case 'alertmanager':
        return alertmanager;
      case 'monasca':
        return monasca;
      case 'zabbix':
      case 'datadog':
      case 'pagerduty':
      case 'cloudwatch_sns':
      case 'grafana':
      case 'generic':
        return undefined;
    }
  };
}
