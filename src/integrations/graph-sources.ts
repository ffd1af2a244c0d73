import { assertNever } from '../errors/assert-never.js';
import { PrometheusGraphSource } from './alertmanager/graph.js';
import type { GraphSource } from './graph-source.js';
import type { IntegrationType } from './schema.js';

/**
 * Each tool's graph source (integrations/<tool>/graph.ts): undefined for a tool pitcrew reads no
 * graphs from. The one list, as importers.ts is for imports.
 */
export function graphSources(): (type: IntegrationType) => GraphSource | undefined {
  return (type) => {
    switch (type) {
      case 'alertmanager':
        return PROMETHEUS;
      case 'generic':
      case 'grafana':
      case 'monasca':
      case 'cloudwatch_sns':
      case 'datadog':
      case 'zabbix':
      case 'pagerduty':
        return undefined;
      default:
        return assertNever(type);
    }
  };
}

const PROMETHEUS = new PrometheusGraphSource();
