import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as chains from '../src/store/migrations/0032_incident_chains.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

/*
 * Migration 0032: the alerts and events of incidents stored before it (found then by
 * `alerts_incident` and `events_incident`) get the chains the ingest now keeps, so their pages
 * read the same. Alertmanager bodies as its webhook sends them (prometheus/alertmanager
 * notify/webhook/webhook.go `Message`, version "4").
 */

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 20, 9, 0, 0);

const amAlert = (fingerprint: string, status: 'firing' | 'resolved', startsAt: number, endsAt = startsAt + 4 * MIN) => ({
  status,
  labels: { alertname: 'DiskFull', instance: `${fingerprint}:9100`, job: 'node' },
  annotations: {},
  startsAt: new Date(startsAt).toISOString(),
  endsAt: new Date(endsAt).toISOString(),
  generatorURL: 'http://prometheus:9090/graph',
  fingerprint,
});

describe.each(testDialects())('incident chains on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
  });
  afterAll(() => env.close());

  it('migration 0032 chains the alerts and events stored before it as the ingest chains them', async () => {
    const reply = await env.api('POST', '/api/v1/integrations', { name: `chains-${dialect}`, type: 'alertmanager' });
    const integrationId = reply.json().id as string;
    expect((await env.api('POST', '/api/v1/rules', {
      name: 'disk', trigger: { type: 'alert', integrationId }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'df -h' } },
      target: { type: 'trigger_host' }, infrastructureType: 'On_Premise',
    })).statusCode).toBe(201);
    const post = async (alerts: unknown[]) => {
      const sent = await env.app.server.inject({
        method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${integrationId}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ receiver: 'pitcrew', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0 }),
      });
      expect(sent.statusCode, sent.body).toBe(202);
    };
    // Two alarms interleaved within and across notifications; one resolved, then firing again (a second incident).
    await post([amAlert('c1', 'firing', T0), amAlert('c2', 'firing', T0), amAlert('c1', 'firing', T0 + MIN)]);
    await post([amAlert('c2', 'firing', T0 + 2 * MIN), amAlert('c1', 'resolved', T0 + MIN, T0 + 3 * MIN)]);
    await post([amAlert('c1', 'firing', T0 + 5 * MIN), amAlert('c2', 'firing', T0 + 6 * MIN)]);
    const pages = async () => {
      const ids = ((await env.api('GET', `/api/v1/incidents?integrationId=${integrationId}`)).json() as { items: Array<{ id: string }> }).items.map((i) => i.id);
      return Promise.all(ids.map(async (id) => (await env.api('GET', `/api/v1/incidents/${id}`)).json() as { alerts: Array<{ id: string }>; alertCount: number; events: Array<{ id: string }>; eventCount: number }));
    };
    const before = await pages();
    expect(before.map((p) => [p.alerts.length, p.alertCount, p.events.length, p.eventCount])).toEqual([[1, 1, 1, 1], [3, 3, 3, 3], [3, 3, 3, 3]]);

    // Back to the indexes, the chains gone; then migrated again from the incident ids alone.
    await chains.down(env.store.db);
    await chains.up(env.store.db);
    expect(await pages()).toEqual(before);
  });
});
