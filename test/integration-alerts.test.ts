import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';

/*
 * An integration's alert log, the rule wizard's preview against it, the test alert, and one
 * transaction per notification. Alertmanager bodies follow its webhook message
 * (prometheus/alertmanager notify/webhook/webhook.go `Message`, version "4"; template/template.go `Alert`).
 */

function amAlert(alertname: string, instance: string, extra: Record<string, string> = {}, status = 'firing') {
  return {
    status,
    labels: { alertname, instance, job: 'node', severity: 'critical', ...extra },
    annotations: { summary: `${alertname} on ${instance}` },
    startsAt: '2026-11-25T10:00:00Z',
    endsAt: status === 'firing' ? '0001-01-01T00:00:00Z' : '2026-11-25T10:05:00Z',
    generatorURL: 'http://prometheus:9090/graph',
    fingerprint: `${alertname}-${instance}-${status}`,
  };
}

const amBody = (alerts: Array<Record<string, unknown>>) => ({
  receiver: 'pitcrew', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {},
  externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0,
});

interface AlertView { id: string; source: string; state: string; alarmName: string | null; hostName: string | null; labels: Record<string, string>; events: Array<{ ruleId: string; eventId: string | null; outcome: string }> }

describe.each(testDialects())('integration alert logs on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    // Four occurrences per transaction at most: a notification of more must still be stored in one.
    env = await startTestEnv(dialect, { ingestMaxBatch: 4 });
    await env.enrol('web-1');
  });
  afterAll(() => env.close());

  const integration = async (name: string) => (await env.api('POST', '/api/v1/integrations', { name: `${name}-${dialect}`, type: 'alertmanager' })).json() as { id: string };
  const rule = async (integrationId: string, trigger: Record<string, unknown>) => {
    const response = await env.api('POST', '/api/v1/rules', {
      name: `rule-${Math.random().toString(36).slice(2, 10)}`,
      trigger: { type: 'alert', integrationId, ...trigger },
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'uptime' } },
      target: { type: 'trigger_host' },
      infrastructureType: 'On_Premise',
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: string };
  };
  const post = (id: string, body: unknown) => env.app.server.inject({
    method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${id}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body),
  });
  const log = async (id: string, query = '') => {
    const response = await env.api('GET', `/api/v1/integrations/${id}/alerts${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { items: AlertView[]; nextCursor: string | null };
  };

  it('records every alert, matched or not, newest first, with the events it raised', async () => {
    const am = await integration('log');
    const disk = await rule(am.id, { alarmName: 'Disk*' });
    expect((await post(am.id, amBody([amAlert('DiskFull', 'web-1:9100'), amAlert('CpuHot', 'web-1:9100')]))).statusCode).toBe(202);
    expect((await post(am.id, amBody([amAlert('DiskFull', 'web-1:9100')]))).statusCode).toBe(202);

    const { items } = await log(am.id);
    expect(items.map((a) => [a.alarmName, a.hostName, a.events.map((e) => [e.ruleId, e.outcome])])).toEqual([
      ['DiskFull', 'web-1', [[disk.id, 'duplicate']]],
      // The alerts of one notification are stored in its order, so the last comes first here.
      ['CpuHot', 'web-1', []],
      ['DiskFull', 'web-1', [[disk.id, 'accepted']]],
    ]);
    const matched = items.find((a) => a.events.some((e) => e.outcome === 'accepted'))!;
    expect(matched).toMatchObject({ source: 'alertmanager', state: 'firing', labels: { alertname: 'DiskFull', job: 'node' } });
    expect((await env.api('GET', `/api/v1/events/${matched.events[0]!.eventId}`)).statusCode).toBe(200);

    const first = await log(am.id, '?limit=2');
    expect(first.items).toHaveLength(2);
    const rest = await log(am.id, `?limit=2&cursor=${first.nextCursor}`);
    expect(rest.items.map((a) => a.id)).toEqual([items[2]!.id]);
    expectProblem(await env.api('GET', `/api/v1/integrations/${'0'.repeat(8)}-0000-7000-8000-000000000000/alerts`), 404, 'PITCREW_ERR_NOT_FOUND');
  });

  // Issue 36: it said "send HostName", which an Alertmanager user cannot do.
  it('says which label an alert lacks to name the host, the rule\'s trigger.hostLabel or the tool\'s, and the labels it has', async () => {
    const am = await integration('no-host');
    const byInstance = await rule(am.id, {});
    const byNode = await rule(am.id, { hostLabel: 'nodename' });
    const { instance: _instance, ...labels } = amAlert('DiskFull', '').labels;
    const reply = await post(am.id, amBody([{ ...amAlert('DiskFull', ''), labels }]));
    expect(reply.statusCode, reply.body).toBe(202);
    const reasons = new Map<string, string>();
    for (const event of reply.json().alerts[0].events as Array<{ ruleId: string; eventId: string; outcome: string }>) {
      expect(event.outcome).toBe('no_target');
      reasons.set(event.ruleId, (await env.api('GET', `/api/v1/events/${event.eventId}`)).json().reason);
    }
    expect(reasons.get(byInstance.id)).toBe('the rule acts on the trigger host, and the alert has no "instance" label, which names the host (the integration\'s config.hostLabel; its labels are "alertname", "job", "severity"): add "instance" to the alert, or set the rule\'s trigger.hostLabel to the label that names the host');
    expect(reasons.get(byNode.id)).toBe('the rule acts on the trigger host, and the alert has no "nodename" label, which the rule\'s trigger.hostLabel names as the host\'s (its labels are "alertname", "job", "severity"): set trigger.hostLabel to the label that names the host, or add "nodename" to the alert');
  });

  it('stores a notification of more alerts than a transaction usually takes in one transaction', async () => {
    const am = await integration('big');
    await rule(am.id, {});
    const sizes = async () => (await env.app.context.metrics.ingestBatchSize.get()).values;
    const count = async () => (await sizes()).find((v) => v.metricName === 'pitcrew_ingest_batch_size_count')!.value;
    const sum = async () => (await sizes()).find((v) => v.metricName === 'pitcrew_ingest_batch_size_sum')!.value;
    const [countBefore, sumBefore] = [await count(), await sum()];
    const alerts = Array.from({ length: 10 }, (_, i) => amAlert('Batch', `web-${i}:9100`));
    const reply = await post(am.id, amBody(alerts));
    expect(reply.statusCode, reply.body).toBe(202);
    expect(await count()).toBe(countBefore + 1);
    expect(await sum()).toBe(sumBefore + 10);
    expect((await log(am.id)).items).toHaveLength(10);
  });

  interface PreviewItem { alert: AlertView; matches: boolean; outcome: string | null; reason: string | null; acts: boolean; hostName: string | null; targets: string[]; targetCount: number }
  const previewOf = async (id: string, body: Record<string, unknown>) => {
    const response = await env.api('POST', `/api/v1/integrations/${id}/alerts/preview`, body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { scanned: number; matched: number; items: PreviewItem[] };
  };

  it("previews a trigger against the integration's recent alerts with the ingest's decision, storing nothing", async () => {
    const am = await integration('preview');
    await post(am.id, amBody([
      amAlert('DiskFull', 'web-1:9100', { node: 'db-1' }),
      amAlert('DiskFull', 'web-2:9100', { severity: 'warning' }, 'resolved'),
      amAlert('CpuHot', 'web-3:9100'),
    ]));
    const preview = (body: Record<string, unknown>) => previewOf(am.id, body);
    const disk = await preview({ alarmName: '/^Disk/' });
    expect([disk.scanned, disk.matched]).toEqual([3, 2]);
    const byHost = (p: typeof disk) => Object.fromEntries(p.items.map((i) => [i.alert.hostName, [i.matches, i.outcome, i.hostName, i.targets]]));
    // Only web-1 has an agent: the trigger host of any other alert is no target, as the ingest says.
    expect(byHost(disk)).toEqual({ 'web-1': [true, 'accepted', 'web-1', ['web-1']], 'web-2': [true, 'recorded', 'web-2', []], 'web-3': [false, null, null, []] });
    const warning = await preview({ alarmName: 'Disk*', on: 'both', severity: ['WARNING'] });
    expect(byHost(warning)).toEqual({ 'web-1': [false, null, null, []], 'web-2': [true, 'no_target', 'web-2', []], 'web-3': [false, null, null, []] });
    expect(warning.items.find((i) => i.matches)).toMatchObject({ acts: false, reason: 'no host named "web-2" has an agent in this tenant', targetCount: 0 });
    expect(byHost(await preview({ labels: { node: 'db-*' }, hostLabel: 'node' }))).toEqual({ 'web-1': [true, 'no_target', 'db-1', []], 'web-2': [false, null, null, []], 'web-3': [false, null, null, []] });
    expect((await env.api('POST', `/api/v1/integrations/${am.id}/alerts/preview?limit=1`, {})).json().scanned).toBe(1);

    const bad = expectProblem(await env.api('POST', `/api/v1/integrations/${am.id}/alerts/preview`, { alarmName: '/disk_(full/' }), 400, 'PITCREW_ERR_VALIDATION');
    expect(bad.detail).toMatch(/^\/alarmName: not a valid regular expression/);
    expect((await log(am.id)).items).toHaveLength(3);
  });

  it('previews with the target and action written so far, and says no_target with the reason the ingest records', async () => {
    await env.enrol('tagged-1', ['edge']);
    await env.enrol('tagged-2', ['edge']);
    const am = await integration('preview-target');
    const acting = await rule(am.id, {});
    await post(am.id, amBody([amAlert('DiskFull', 'gone-7:9100')]));
    // What the ingest recorded for this very alert on a rule of the same trigger and target.
    const [stored] = (await log(am.id)).items;
    const event = (await env.api('GET', `/api/v1/events/${stored!.events.find((e) => e.ruleId === acting.id)!.eventId}`)).json();
    expect(event.outcome).toBe('no_target');

    const [asIngest] = (await previewOf(am.id, {})).items;
    expect(asIngest).toMatchObject({ matches: true, outcome: 'no_target', reason: event.reason, acts: false });
    const tags = (await previewOf(am.id, { target: { type: 'specific_tags', tags: ['edge'] } })).items[0]!;
    expect(tags).toMatchObject({ outcome: 'accepted', acts: true, targets: ['tagged-1', 'tagged-2'], targetCount: 2 });
    const host = (await previewOf(am.id, { target: { type: 'specific_host', hostname: 'db-9' } })).items[0]!;
    expect(host).toMatchObject({ outcome: 'no_target', reason: 'the rule\'s host "db-9" has no agent in this tenant' });
    // A run by the service needs no host: the CLI Machine acts, about the host the alert names.
    const cli = (await previewOf(am.id, { target: { type: 'cli_machine' }, action: { type: 'cli', runbook: { script: 'aws sts get-caller-identity' } } })).items[0]!;
    expect(cli).toMatchObject({ outcome: 'accepted', targets: ['gone-7'] });

    // The draft is checked as a rule is: a tag target needs its tags.
    const bad = expectProblem(await env.api('POST', `/api/v1/integrations/${am.id}/alerts/preview`, { target: { type: 'specific_tags' } }), 400, 'PITCREW_ERR_VALIDATION');
    expect(bad.detail).toMatch(/^\/target\/tags: target type specific_tags needs at least one tag/);
    expect((await log(am.id)).items).toHaveLength(1);
  });

  it('sends a test alert through the integration: a dry run of the matching rules unless asked to act, in the log as a test', async () => {
    const am = await integration('test-alert');
    const any = await rule(am.id, {});
    const other = await rule(am.id, { alarmName: 'Something*' });
    const sent = await env.api('POST', `/api/v1/integrations/${am.id}/test`, { hostName: 'web-1' });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(sent.json().alert).toMatchObject({ alarmName: 'PitcrewTestAlert', hostName: 'web-1', state: 'firing', events: [{ ruleId: any.id, outcome: 'dry_run', executionIds: [], ifActed: { outcome: 'accepted', reason: null } }] });
    // A dry run says what acting would do: here, find no host, with the reason the ingest would record.
    const nowhere = (await env.api('POST', `/api/v1/integrations/${am.id}/test`, { hostName: 'ghost-1' })).json().alert;
    expect(nowhere.events).toMatchObject([{ ruleId: any.id, outcome: 'dry_run', ifActed: { outcome: 'no_target', reason: 'no host named "ghost-1" has an agent in this tenant' } }]);
    const event = (await env.api('GET', `/api/v1/events/${sent.json().alert.events[0].eventId}`)).json();
    expect(event.env).toMatchObject({ AlarmName: 'PitcrewTestAlert', HostName: 'web-1', Source: 'test', LABEL_pitcrew_test: 'true' });

    const acting = (await env.api('POST', `/api/v1/integrations/${am.id}/test`, { alarmName: 'SomethingBroke', hostName: 'web-1', act: true })).json().alert;
    expect(Object.fromEntries(acting.events.map((e: { ruleId: string; outcome: string }) => [e.ruleId, e.outcome]))).toEqual({ [any.id]: 'accepted', [other.id]: 'accepted' });
    const [latest, earlier] = (await log(am.id)).items;
    expect([latest!.source, latest!.alarmName, earlier!.source]).toEqual(['test', 'SomethingBroke', 'test']);
    // A test alert is never a repeat of an earlier one.
    const again = (await env.api('POST', `/api/v1/integrations/${am.id}/test`, { hostName: 'web-1' })).json().alert;
    expect(again.events[0].outcome).toBe('dry_run');

    expectProblem(await env.api('POST', `/api/v1/integrations/${am.id}/test`, { state: 'broken' }), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('POST', `/api/v1/integrations/${'0'.repeat(8)}-0000-7000-8000-000000000000/test`, {}), 404, 'PITCREW_ERR_NOT_FOUND');
  });
});
