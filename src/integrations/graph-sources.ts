import { assertNever } from '../errors/assert-never.js';
import type { GraphSource } from './graph-source.js';
import { DatadogGraphSource } from './datadog/graph.js';
import { GrafanaGraphSource } from './grafana/graph.js';
import { MonascaGraphSource } from './monasca/graph.js';
import type { IntegrationType } from './schema.js';

/**
 * Each tool's graph source (integrations/<tool>/graph.ts): undefined for a tool pitcrew reads no
 * graphs from. The one list, as importers.ts is for imports.
 */
export function graphSources(): (type: IntegrationType) => GraphSource | undefined {
  const grafana = new GrafanaGraphSource();
  const monasca = new MonascaGraphSource();
  const datadog = new DatadogGraphSource();
  return (type) => {
    switch (type) {
      case 'grafana':
        return grafana;
      case 'monasca':
        return monasca;
      case 'datadog':
        return datadog;
      case 'alertmanager':
      case 'generic':
      case 'cloudwatch_sns':
      case 'zabbix':
      case 'pagerduty':
        return undefined;
      default:
        return assertNever(type);
    }
  };
}
