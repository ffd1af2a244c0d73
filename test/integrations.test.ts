import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';
import { waitFor } from './support/wait.js';

/*
 * Integrations end to end in one process: the API, the inbound URL with the tool's own body, the
 * alert trigger's matching, one event per (alert, rule), duplicates and resolved alerts.
 * Alertmanager bodies follow its webhook message: prometheus/alertmanager notify/webhook/webhook.go
 * `Message` (version "4") and template/template.go `Data`/`Alert`; Grafana's signature follows
 * grafana/alerting http/hmac.go (hex HMAC-SHA256 of the body in X-Grafana-Alerting-Signature).
 */

function amAlert(instance: string, overrides: Record<string, unknown> = {}) {
  return {
    status: 'firing',
    labels: { alertname: 'NodeFilesystemAlmostFull', instance, job: 'node', mountpoint: '/var', severity: 'critical', 'team.name': 'shop' },
    annotations: { summary: `Filesystem /var on ${instance} is 95% full` },
    startsAt: '2026-11-25T10:00:00.123Z',
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus:9090/graph?g0.expr=node_filesystem_avail_bytes',
    fingerprint: `fp-${instance}`,
    ...overrides,
  };
}

function amBody(alerts: Array<Record<string, unknown>>) {
  return {
    receiver: 'pitcrew', status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved', alerts,
    groupLabels: { alertname: 'NodeFilesystemAlmostFull' }, commonLabels: { alertname: 'NodeFilesystemAlmostFull' }, commonAnnotations: {},
    externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{alertname="NodeFilesystemAlmostFull"}', truncatedAlerts: 0,
  };
}

describe.each(testDialects())('integrations on %s', (dialect) => {
  let env: TestEnv;
  const hosts: Record<string, string> = {};

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    for (const name of ['web-1', 'web-2']) hosts[name] = (await env.enrol(name, ['web'])).hostId;
  });
  afterAll(() => env.close());

  async function integration(body: Record<string, unknown>) {
    const response = await env.api('POST', '/api/v1/integrations', body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: string; url: string; type: string };
  }

  async function alertRule(integrationId: string, trigger: Record<string, unknown> = {}) {
    const response = await env.api('POST', '/api/v1/rules', {
      name: `alert-${Math.random().toString(36).slice(2, 10)}`,
      trigger: { type: 'alert', integrationId, ...trigger },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "$LABEL_mountpoint"' } },
      target: { type: 'trigger_host' },
      infrastructureType: 'On_Premise',
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: string };
  }

  const post = (type: string, id: string, body: unknown, options: { headers?: Record<string, string>; raw?: string } = {}) => env.app.server.inject({
    method: 'POST',
    url: `/api/v1/trigger/channel/${type}/${env.tenant.apiKey}/${id}`,
    headers: { 'content-type': 'application/json', ...options.headers },
    payload: options.raw ?? JSON.stringify(body),
  });

  const eventsOf = async (ruleId: string) => (await env.api('GET', `/api/v1/rules/${ruleId}/events?limit=100`)).json().items as Array<{ id: string; outcome: string; env: Record<string, string>; source: string }>;

  it('gives each integration its URL, keeps its secret write-only, and refuses what its tool cannot be', async () => {
    const made = await integration({ name: `grafana-${dialect}`, type: 'grafana', secret: 'grafana-signing-secret' });
    expect(made.url).toMatch(new RegExp(`/api/v1/trigger/channel/grafana/<api_key>/${made.id}$`));
    const read = (await env.api('GET', `/api/v1/integrations/${made.id}`)).json();
    expect(read).toMatchObject({ hasSecret: true, status: { lastAlertAt: null, lastError: null } });
    expect(JSON.stringify(read)).not.toContain('grafana-signing-secret');
    const stored = await env.store.db.selectFrom('integrations').select('secret').where('id', '=', made.id).executeTakeFirstOrThrow();
    expect(stored.secret).not.toContain('grafana-signing-secret');

    expectProblem(await env.api('POST', '/api/v1/integrations', { name: 'x', type: 'nagios' }), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('POST', '/api/v1/integrations', { name: 'g', type: 'generic', config: { mapping: { nmae: 'title' } } }), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('POST', '/api/v1/integrations', { name: `grafana-${dialect}`, type: 'grafana' }), 409, 'PITCREW_ERR_CONFLICT');
    const unknown = expectProblem(await env.api('POST', '/api/v1/rules', {
      name: 'no-integration', trigger: { type: 'alert', integrationId: '01900000-0000-7000-8000-000000000000' },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise',
    }), 400, 'PITCREW_ERR_VALIDATION');
    expect(unknown.errors![0]!.path).toBe('/body/trigger/integrationId');
  });

  it('runs a matching rule once per alert of a group, on each alert\'s instance host, with its labels in the environment', async () => {
    const am = await integration({ name: `am-${dialect}`, type: 'alertmanager' });
    const rule = await alertRule(am.id, { alarmName: 'NodeFilesystem*', severity: ['critical'] });
    const other = await alertRule(am.id, { alarmName: 'CPU*' });
    const reply = await post('alertmanager', am.id, amBody([amAlert('web-1:9100'), amAlert('web-2:9100')]));
    expect(reply.statusCode, reply.body).toBe(202);
    const { alerts } = reply.json() as { alerts: Array<{ hostName: string; events: Array<{ ruleId: string; outcome: string; executionIds: string[] }> }> };
    expect(alerts.map((a) => a.hostName)).toEqual(['web-1', 'web-2']);
    for (const alert of alerts) {
      expect(alert.events).toEqual([expect.objectContaining({ ruleId: rule.id, outcome: 'accepted', executionIds: [expect.any(String)] })]);
    }
    const executions = await Promise.all(alerts.map(async (a) => (await env.api('GET', `/api/v1/executions/${a.events[0]!.executionIds[0]}`)).json()));
    expect(executions.map((e) => e.hostname)).toEqual(['web-1', 'web-2']);
    const events = await eventsOf(rule.id);
    expect(events).toHaveLength(2);
    expect(events[0]!.source).toBe('alertmanager');
    expect(events[0]!.env).toMatchObject({ AlarmName: 'NodeFilesystemAlmostFull', HostName: expect.stringMatching(/^web-[12]$/), Severity: 'critical', State: 'firing', Source: 'alertmanager', LABEL_mountpoint: '/var', LABEL_team_name: 'shop', ANNOTATION_summary: expect.stringContaining('95% full') });
    expect(await eventsOf(other.id)).toEqual([]);
    // Stamped within a second of the alert (integrations/delivery-stamps.ts).
    await waitFor(async () => (await env.api('GET', `/api/v1/integrations/${am.id}`)).json().status.lastAlertAt !== null, 'the last alert time');
  });

  it('finds the host an alert names without its domain, as the agent enrolled with it', async () => {
    const fqdn = (await env.enrol('db-7.example.com', ['db'])).hostId;
    const am = await integration({ name: `am-domain-${dialect}`, type: 'alertmanager' });
    await alertRule(am.id);
    const reply = (await post('alertmanager', am.id, amBody([amAlert('db-7:9100')]))).json();
    const [event] = reply.alerts[0].events;
    expect(event).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
    expect((await env.api('GET', `/api/v1/executions/${event.executionIds[0]}`)).json()).toMatchObject({ hostId: fqdn, hostname: 'db-7.example.com' });
  });

  it('records a re-sent notification as a duplicate and a resolved alert without acting, unless the rule acts on both', async () => {
    const am = await integration({ name: `am-repeat-${dialect}`, type: 'alertmanager' });
    const firingOnly = await alertRule(am.id);
    const both = await alertRule(am.id, { on: 'both' });
    const body = amBody([amAlert('web-1:9100')]);
    expect((await post('alertmanager', am.id, body)).statusCode).toBe(202);
    const again = (await post('alertmanager', am.id, body)).json();
    expect(again.alerts[0].events.map((e: { outcome: string; executionIds: string[] }) => [e.outcome, e.executionIds.length])).toEqual([['duplicate', 0], ['duplicate', 0]]);
    const resolved = (await post('alertmanager', am.id, amBody([amAlert('web-1:9100', { status: 'resolved', endsAt: '2026-11-25T10:05:00Z' })]))).json();
    const byRule = new Map(resolved.alerts[0].events.map((e: { ruleId: string }) => [e.ruleId, e]));
    expect(byRule.get(firingOnly.id)).toMatchObject({ outcome: 'recorded', executionIds: [], reason: expect.stringMatching(/resolved and the rule acts on firing alerts/) });
    expect(byRule.get(both.id)).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });
    expect((await eventsOf(firingOnly.id)).map((e) => e.outcome).sort()).toEqual(['accepted', 'duplicate', 'recorded']);
  });

  it('refuses a body its tool never sends with a 400 that says where, recording nothing but the integration\'s last error', async () => {
    const am = await integration({ name: `am-bad-${dialect}`, type: 'alertmanager' });
    const rule = await alertRule(am.id);
    const wrongVersion = expectProblem(await post('alertmanager', am.id, { ...amBody([amAlert('web-1:9100')]), version: '3' }), 400, 'PITCREW_ERR_VALIDATION');
    expect(wrongVersion.detail).toMatch(/version/);
    expectProblem(await post('alertmanager', am.id, undefined, { raw: '{"alerts": [' }), 400, 'PITCREW_ERR_MALFORMED_JSON');
    expect(await eventsOf(rule.id)).toEqual([]);
    expect((await env.api('GET', `/api/v1/integrations/${am.id}`)).json().status.lastError).toMatch(/version/);
    expectProblem(await post('grafana', am.id, amBody([])), 404, 'PITCREW_ERR_INTEGRATION_NOT_FOUND');
    const gone = await integration({ name: `am-gone-${dialect}`, type: 'alertmanager' });
    expect((await env.api('DELETE', `/api/v1/integrations/${gone.id}`)).statusCode).toBe(204);
    expectProblem(await post('alertmanager', gone.id, amBody([amAlert('web-1:9100')])), 404, 'PITCREW_ERR_INTEGRATION_NOT_FOUND');
    expectProblem(await env.app.server.inject({ method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${'0'.repeat(64)}/${am.id}`, headers: { 'content-type': 'application/json' }, payload: '{}' }), 401, 'PITCREW_ERR_INVALID_API_KEY');
  });

  it("verifies Grafana's signature when the integration has a secret: a wrong one is a 401 and records nothing", async () => {
    const grafana = await integration({ name: `grafana-signed-${dialect}`, type: 'grafana', secret: 's3cret-for-grafana' });
    const rule = await alertRule(grafana.id);
    const body = JSON.stringify({
      receiver: 'pitcrew', status: 'firing', orgId: 1, alerts: [{ ...amAlert('web-1:9100'), silenceURL: '', dashboardURL: '', panelURL: '', values: null, valueString: '' }],
      groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://grafana:3000/', version: '1', groupKey: 'k', truncatedAlerts: 0, title: 't', state: 'alerting', message: 'm',
    });
    const sign = (secret: string) => createHmac('sha256', secret).update(body).digest('hex');
    expectProblem(await post('grafana', grafana.id, undefined, { raw: body, headers: { 'x-grafana-alerting-signature': sign('another-secret') } }), 401, 'PITCREW_ERR_INVALID_SIGNATURE');
    expectProblem(await post('grafana', grafana.id, undefined, { raw: body }), 401, 'PITCREW_ERR_INVALID_SIGNATURE');
    expect(await eventsOf(rule.id)).toEqual([]);
    const signed = await post('grafana', grafana.id, undefined, { raw: body, headers: { 'x-grafana-alerting-signature': sign('s3cret-for-grafana') } });
    expect(signed.statusCode, signed.body).toBe(202);
    expect((await eventsOf(rule.id)).map((e) => e.outcome)).toEqual(['accepted']);
  });

  it('takes the text/plain body SNS sends (no 415), and refuses an unsigned one', async () => {
    const sns = await integration({ name: `sns-${dialect}`, type: 'cloudwatch_sns' });
    const reply = await post('cloudwatch_sns', sns.id, undefined, {
      raw: JSON.stringify({ Type: 'Notification', MessageId: 'm', TopicArn: 'arn:aws:sns:eu-west-1:1:t', Message: '{}', Timestamp: new Date().toISOString(), SignatureVersion: '1' }),
      headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
    });
    expect([400, 401]).toContain(reply.statusCode);
    expect(reply.headers['content-type']).toMatch(/application\/problem\+json/);
  });
});
