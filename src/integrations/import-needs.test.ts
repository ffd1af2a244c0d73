import { describe, expect, it } from 'vitest';
import { importNeeds, type ImportReadiness } from './import-needs.js';
import { INTEGRATION_TYPES } from './schema.js';

const ready = (config: Record<string, unknown>, more: Partial<ImportReadiness> = {}): ImportReadiness => ({ config, hasSecret: true, credentialProvider: undefined, integrationHasSecret: false, ...more });
const paths = (errors: Array<{ path: string }>) => errors.map((e) => e.path);

describe('each tool’s import needs', () => {
  it('names the tools that import, and the credential each reads with', () => {
    expect(INTEGRATION_TYPES.filter((type) => importNeeds(type) === undefined)).toEqual(['grafana', 'generic']);
    expect(importNeeds('cloudwatch_sns')!.credentialProviders).toEqual(['aws']);
    for (const type of ['alertmanager', 'monasca', 'zabbix', 'datadog', 'pagerduty'] as const) expect(importNeeds(type)!.credentialProviders, type).toEqual([]);
  });

  it('takes each tool’s secret in the shape its API authenticates with, and refuses other shapes', () => {
    const table: Array<[(typeof INTEGRATION_TYPES)[number], unknown, boolean]> = [
      ['alertmanager', 'bearer-token', true], ['alertmanager', { username: 'u', password: 'p' }, true], ['alertmanager', { token: 'x' }, false],
      ['monasca', 'keystone-token', true], ['monasca', { version: 'v3', identityUrl: 'http://keystone:5000', username: 'u', password: 'p', project: 'ops' }, true], ['monasca', { version: 'v3', username: 'u' }, false],
      ['zabbix', 'api-token', true], ['zabbix', { token: 'x' }, false],
      ['datadog', { apiKey: 'a', applicationKey: 'b' }, true], ['datadog', 'api-key-only', false],
      ['pagerduty', 'rest-key', true], ['pagerduty', '', false],
      ['cloudwatch_sns', { accessKeyId: 'AKIA', secretAccessKey: 's' }, false],
    ];
    for (const [type, secret, accepted] of table) expect(importNeeds(type)!.secretErrors(secret, '/body/import/secret').length === 0, `${type} ${JSON.stringify(secret)}`).toBe(accepted);
  });

  it('names the setting an import cannot run without', () => {
    expect(paths(importNeeds('alertmanager')!.settingsErrors(ready({})))).toEqual(['/body/config/alertmanagerUrl']);
    expect(paths(importNeeds('monasca')!.settingsErrors(ready({}, { hasSecret: false })))).toEqual(['/body/config/monascaUrl', '/body/import/secret']);
    expect(paths(importNeeds('monasca')!.settingsErrors(ready({ monascaUrl: 'http://monasca:8070' }, { hasSecret: false, integrationHasSecret: true })))).toEqual([]);
    expect(paths(importNeeds('zabbix')!.settingsErrors(ready({ zabbixUrl: 'not a url' })))).toEqual(['/body/config/zabbixUrl']);
    expect(paths(importNeeds('datadog')!.settingsErrors(ready({ site: 'datadoghq.eu' })))).toEqual([]);
    expect(paths(importNeeds('datadog')!.settingsErrors(ready({ site: 'evil.example.com' })))).toEqual(['/body/config/site']);
    expect(paths(importNeeds('pagerduty')!.settingsErrors(ready({}, { hasSecret: false })))).toEqual(['/body/import/secret']);
    expect(paths(importNeeds('cloudwatch_sns')!.settingsErrors(ready({ region: 'eu-west-1' }, { hasSecret: false })))).toEqual(['/body/import/credentialId']);
    expect(paths(importNeeds('cloudwatch_sns')!.settingsErrors(ready({ region: 'eu-west-1' }, { hasSecret: false, credentialProvider: 'aws' })))).toEqual([]);
  });
});
