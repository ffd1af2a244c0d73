import { assertNever } from '../errors/assert-never.js';
import { PrometheusGraphSource } from './alertmanager/graph.js';
import { CloudwatchGraphSource, type CloudwatchGraphSettings } from './cloudwatch-sns/graph.js';
import { DatadogGraphSource } from './datadog/graph.js';
import { GrafanaGraphSource } from './grafana/graph.js';
import type { GraphSource } from './graph-source.js';
import { MonascaGraphSource } from './monasca/graph.js';
import type { IntegrationType } from './schema.js';

/** What the graph sources are built with, read once from the service's config (the AWS endpoints, as the importers take them). */
export type GraphSourceSettings = CloudwatchGraphSettings;

/**
 * Each tool's graph source (integrations/<tool>/graph.ts), built once: undefined for a tool pitcrew
 * reads no graphs from. The one list, as importers.ts is for imports. Sources keep nothing between
 * captures but credentials (Monasca a Keystone token until shortly before it expires, CloudWatch an
 * assumed role's credentials until they near expiry).
 */
export function graphSources(settings: GraphSourceSettings = {}): (type: IntegrationType) => GraphSource | undefined {
  const prometheus = new PrometheusGraphSource();
  const grafana = new GrafanaGraphSource();
  const monasca = new MonascaGraphSource();
  const datadog = new DatadogGraphSource();
  const cloudwatch = new CloudwatchGraphSource(settings);
  return (type) => {
    switch (type) {
      case 'grafana':
        return grafana;
      case 'monasca':
        return monasca;
      case 'datadog':
        return datadog;
      case 'cloudwatch_sns':
        return cloudwatch;
      case 'alertmanager':
        return prometheus;
      case 'generic':
      case 'zabbix':
      case 'pagerduty':
        return undefined;
      default:
        return assertNever(type);
    }
  };
}

