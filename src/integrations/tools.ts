import { assertNever } from '../errors/assert-never.js';
import type { FieldError } from '../errors/catalogue.js';
import { checkAlertmanagerConfig, parseAlertmanager } from './alertmanager/parse.js';
import { checkGenericMapping } from './generic/mapping.js';
import { parseGeneric } from './generic/parse.js';
import { checkGrafanaConfig, parseGrafana } from './grafana/parse.js';
import { cloudwatchSnsParser, type CloudwatchSnsDeps } from './cloudwatch-sns/parse.js';
import { parseDatadog } from './datadog/parse.js';
import { checkMonascaConfig, parseMonasca } from './monasca/parse.js';
import type { ToolNotification, ToolRequest } from './notification.js';
import { parsePagerDuty } from './pagerduty/parse.js';
import type { IntegrationType } from './schema.js';
import { parseZabbix } from './zabbix/parse.js';

export type ToolParser = (request: ToolRequest) => ToolNotification | Promise<ToolNotification>;

/** What the tools' parsers reach out for: SNS's signing certificates and subscription confirmations. */
export type ToolDeps = CloudwatchSnsDeps;

/** Each tool's parser (integrations/<tool>/): the one list of the tools pitcrew reads. */
export function toolParsers(deps: ToolDeps): (type: IntegrationType) => ToolParser {
  const sns = cloudwatchSnsParser(deps);
  return (type) => {
    switch (type) {
      case 'datadog':
        return parseDatadog;
      case 'pagerduty':
        return parsePagerDuty;
      case 'zabbix':
        return parseZabbix;
      case 'monasca':
        return parseMonasca;
      case 'cloudwatch_sns':
        return sns;
      case 'alertmanager':
        return parseAlertmanager;
      case 'grafana':
        return parseGrafana;
      case 'generic':
        return parseGeneric;
      default:
        return assertNever(type);
    }
  };
}

/** The settings a tool's integration is created with, checked: the field errors (none: fine). */
export function configErrors(type: IntegrationType, config: Record<string, unknown>): FieldError[] {
  switch (type) {
    case 'alertmanager':
      return checkAlertmanagerConfig(config);
    case 'grafana':
      return checkGrafanaConfig(config);
    case 'generic':
      return checkGenericMapping(config);
    case 'monasca':
      return checkMonascaConfig(config);
    default:
      return [];
  }
}

/** SNS's certificates, fetched once an hour at most: every notification of a topic names the same one. */
export function snsCertificates(fetcher: typeof fetch = fetch, ttlMs = 3_600_000): ToolDeps {
  const cache = new Map<string, { pem: Promise<string>; at: number }>();
  return {
    fetchCertificate(url) {
      const known = cache.get(url);
      if (known && Date.now() - known.at < ttlMs) return known.pem;
      const pem = fetcher(url, { signal: AbortSignal.timeout(10_000) }).then(async (response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return response.text();
      });
      cache.set(url, { pem, at: Date.now() });
      pem.catch(() => cache.delete(url));
      return pem;
    },
    async get(url) {
      const response = await fetcher(url, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`SNS answered HTTP ${response.status}`);
    },
  };
}
