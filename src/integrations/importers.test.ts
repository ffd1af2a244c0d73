import { describe, expect, it } from 'vitest';
import { CloudwatchImporter } from './cloudwatch-sns/import.js';
import { DatadogImporter } from './datadog/import.js';
import { toolImporters } from './importers.js';
import { PagerDutyImporter } from './pagerduty/import.js';
import { INTEGRATION_TYPES } from './schema.js';
import { ZabbixImporter } from './zabbix/import.js';

describe('toolImporters', () => {
  it('gives each tool its importer, the same one every time, and none to a tool without one', () => {
    const importerOf = toolImporters();
    expect(importerOf('zabbix')).toBeInstanceOf(ZabbixImporter);
    expect(importerOf('datadog')).toBeInstanceOf(DatadogImporter);
    expect(importerOf('pagerduty')).toBeInstanceOf(PagerDutyImporter);
    expect(importerOf('cloudwatch_sns')).toBeInstanceOf(CloudwatchImporter);
    expect(importerOf('zabbix')).toBe(importerOf('zabbix'));
    expect(INTEGRATION_TYPES.filter((type) => importerOf(type) === undefined)).toEqual(['grafana', 'generic']);
  });
});
