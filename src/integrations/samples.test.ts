import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ToolNotification } from './notification.js';
import { sampleDelivery, SECRET_VARIABLE } from './samples.js';
import { INTEGRATION_TYPES, type IntegrationType } from './schema.js';
import { toolParsers } from './tools.js';

const parserOf = toolParsers({
  fetchCertificate: () => Promise.reject(new Error('no certificate in a unit test')),
  get: () => Promise.reject(new Error('no subscription in a unit test')),
});

/** The tool's parser reads the sample as the service would: the body's bytes, its headers, the integration's secret. */
async function read(type: IntegrationType, config: Record<string, unknown> = {}, secret?: string): Promise<ToolNotification> {
  const sample = sampleDelivery(type, config, secret !== undefined);
  if (!sample) throw new Error(`no sample for ${type}`);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(sample.headers)) headers[name.toLowerCase()] = value === SECRET_VARIABLE ? secret! : value;
  const rawBody = JSON.stringify(sample.body);
  return parserOf(type)({ rawBody, body: JSON.parse(rawBody), headers, config, secret, now: Date.now() });
}

const oneFiringAlertAboutWeb1 = { kind: 'alerts', alerts: [expect.objectContaining({ hostName: 'web-1', state: 'firing' })] };

describe('the sample an integration offers', () => {
  it.each(INTEGRATION_TYPES.filter((t) => t !== 'cloudwatch_sns' && t !== 'generic'))('is read by the %s parser as one firing alert about web-1', async (type) => {
    expect(await read(type, type === 'pagerduty' ? { hostField: 'service.summary' } : {})).toEqual(oneFiringAlertAboutWeb1);
  });

  it('names the host under the label the integration reads it from', async () => {
    expect(await read('alertmanager', { hostLabel: 'nodename' })).toEqual(oneFiringAlertAboutWeb1);
    expect(await read('grafana', { hostLabel: 'host' })).toEqual(oneFiringAlertAboutWeb1);
    expect(await read('pagerduty', { hostField: 'escalation_policy.summary' })).toEqual(oneFiringAlertAboutWeb1);
  });

  it("sends a Datadog or Zabbix integration's secret in its header, from the shell", async () => {
    expect(sampleDelivery('datadog', {}, true)!.headers).toEqual({ 'x-pitcrew-secret': '${PITCREW_INTEGRATION_SECRET}' });
    expect(sampleDelivery('zabbix', { secretHeader: 'X-Zabbix-Token' }, true)!.headers).toEqual({ 'X-Zabbix-Token': '${PITCREW_INTEGRATION_SECRET}' });
    expect(await read('datadog', {}, 's3cret')).toEqual(oneFiringAlertAboutWeb1);
    expect(await read('zabbix', { secretHeader: 'X-Zabbix-Token' }, 's3cret')).toEqual(oneFiringAlertAboutWeb1);
  });

  it('is none where only the tool can sign what it sends', () => {
    expect(sampleDelivery('cloudwatch_sns', {}, false)).toBeUndefined();
    expect(sampleDelivery('grafana', {}, true)).toBeUndefined();
    expect(sampleDelivery('pagerduty', {}, true)).toBeUndefined();
    expect(sampleDelivery('monasca', {}, true)).toBeDefined();
  });

  it("is the JSON a generic integration's mapping reads, alerts list and state words included", async () => {
    const mappings = [
      { name: 'title', host: 'host' },
      // Uptime Kuma's webhook (generic/parse.test.ts), DOWN as 0.
      { name: 'monitor.name', host: 'monitor.hostname', state: 'heartbeat.status', stateValues: { firing: ['0'], resolved: ['1'] } },
      { alerts: 'alerts', name: 'labels.alertname', host: 'labels.instance', severity: 'labels.severity', state: 'status', fingerprint: 'fingerprint' },
      { alerts: '$.data.items', host: 'targets[1]["host.name"]', state: 'state', stateValues: { firing: ['PROBLEM'] } },
    ];
    for (const mapping of mappings) expect(await read('generic', { mapping }), JSON.stringify(mapping)).toEqual(oneFiringAlertAboutWeb1);
    expect(sampleDelivery('generic', { mapping: { alerts: 'alerts', state: 'status' } }, false)!.body).toEqual({ alerts: [{ status: 'firing' }] });
    // Paths that cross cannot both be filled: no sample rather than one the integration refuses.
    expect(sampleDelivery('generic', { mapping: { name: 'alert', host: 'alert.host' } }, false)).toBeUndefined();
  });

  it("holds every field pitcrew's Zabbix media type sends", () => {
    const script = readFileSync(new URL('./zabbix/media-type.yaml', import.meta.url), 'utf8');
    const fields = [...(/var fields = \[([^\]]*)\]/.exec(script)![1]!).matchAll(/'(\w+)'/g)].map((m) => m[1]);
    expect(Object.keys(sampleDelivery('zabbix', {}, false)!.body as object)).toEqual(['pitcrew_media_type', ...fields, 'event_tags']);
  });
});
