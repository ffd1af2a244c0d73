import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { invite } from './support/people.js';
import { expectProblem } from './support/problems.js';

/*
 * Incidents (issue 38) through the real ingest routes. Alertmanager bodies as its webhook sends
 * them (prometheus/alertmanager notify/webhook/webhook.go `Message`, version "4";
 * template/template.go `Alert`: status, labels, annotations, startsAt, endsAt, fingerprint; a
 * firing alert's endsAt is when it would time out, a resolved one's when it ended).
 */

const MIN = 60_000;

interface Incident {
  id: string; state: string; alarmName: string; severity: string | null; hostname: string | null; integrationId: string | null; fingerprint: string;
  openedAt: string; resolvedAt: string | null; resolutionSeconds: number | null; occurrences: number; resolvedBy: string | null; resolvedByUser: string | null;
  ruleIds: string[]; executionIds: string[]; executionCount: number;
}

function amAlert(fingerprint: string, instance: string, status: 'firing' | 'resolved', startsAt: number, endsAt?: number, alertname = 'DiskFull') {
  return {
    status,
    labels: { alertname, instance: `${instance}:9100`, job: 'node', severity: 'critical' },
    annotations: { summary: `${alertname} on ${instance}` },
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(endsAt ?? startsAt + 4 * MIN).toISOString(),
    generatorURL: 'http://prometheus:9090/graph',
    fingerprint,
  };
}
const amBody = (alerts: unknown[]) => ({
  receiver: 'pitcrew', status: 'firing', alerts, groupLabels: {}, commonLabels: {}, commonAnnotations: {},
  externalURL: 'http://alertmanager:9093', version: '4', groupKey: '{}:{}', truncatedAlerts: 0,
});

describe.each(testDialects())('incidents on %s', (dialect) => {
  let env: TestEnv;
  let now = Date.UTC(2026, 10, 20, 9, 0, 0);
  const T0 = now;

  beforeAll(async () => {
    // The service's clock is the test's: received times, quiet periods.
    env = await startTestEnv(dialect, { clock: () => now });
  });
  afterAll(() => env.close());

  const integration = async (name: string) => {
    const reply = await env.api('POST', '/api/v1/integrations', { name: `${name}-${dialect}`, type: 'alertmanager' });
    expect(reply.statusCode, reply.body).toBe(201);
    return reply.json().id as string;
  };
  const alertRule = async (integrationId: string, overrides: Record<string, unknown> = {}) => {
    const reply = await env.api('POST', '/api/v1/rules', {
      name: `rule-${Math.random().toString(36).slice(2, 10)}`,
      trigger: { type: 'alert', integrationId },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'df -h' } },
      target: { type: 'trigger_host' },
      infrastructureType: 'On_Premise',
      ...overrides,
    });
    expect(reply.statusCode, reply.body).toBe(201);
    return reply.json().id as string;
  };
  const post = async (integrationId: string, alerts: unknown[]) => {
    const reply = await env.app.server.inject({
      method: 'POST', url: `/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${integrationId}`,
      headers: { 'content-type': 'application/json' }, payload: JSON.stringify(amBody(alerts)),
    });
    expect(reply.statusCode, reply.body).toBe(202);
    return reply.json() as { alerts: Array<{ events: Array<{ eventId: string; outcome: string; executionIds: string[] }> }> };
  };
  const list = async (query: string) => {
    const reply = await env.api('GET', `/api/v1/incidents${query}`);
    expect(reply.statusCode, reply.body).toBe(200);
    return reply.json() as { items: Incident[]; nextCursor: string | null };
  };
  const one = async (id: string) => {
    const reply = await env.api('GET', `/api/v1/incidents/${id}`);
    expect(reply.statusCode, reply.body).toBe(200);
    return reply.json() as Incident & { alerts: Array<{ id: string; state: string; fingerprint: string }>; alertCount: number; events: Array<{ id: string; outcome: string }>; eventCount: number; executions: Array<{ id: string }> };
  };

  it('an alert opens an incident at startsAt, a re-sent notification counts nothing, a new firing counts, the resolution closes it at endsAt', async () => {
    const am = await integration('lifecycle');
    await post(am, [amAlert('aa01', 'web-1', 'firing', T0)]);
    const [opened] = (await list(`?integrationId=${am}`)).items;
    expect(opened).toMatchObject({
      state: 'open', alarmName: 'DiskFull', severity: 'critical', hostname: 'web-1', integrationId: am, fingerprint: 'aa01',
      openedAt: new Date(T0).toISOString(), resolvedAt: null, resolutionSeconds: null, occurrences: 1, resolvedBy: null, ruleIds: [], executionIds: [],
    });
    // Alertmanager's repeat_interval: the same alert again (its endsAt moved on), twice in one notification even.
    now += MIN;
    await post(am, [amAlert('aa01', 'web-1', 'firing', T0, T0 + 9 * MIN), amAlert('aa01', 'web-1', 'firing', T0, T0 + 9 * MIN)]);
    expect((await one(opened!.id)).occurrences).toBe(1);
    // Fired again (a resolve Alertmanager never sent): another occurrence of the same incident.
    now += MIN;
    await post(am, [amAlert('aa01', 'web-1', 'firing', T0 + 2 * MIN)]);
    expect((await one(opened!.id)).occurrences).toBe(2);
    now += 5 * MIN;
    await post(am, [amAlert('aa01', 'web-1', 'resolved', T0 + 2 * MIN, T0 + 6 * MIN)]);
    const resolved = await one(opened!.id);
    expect(resolved).toMatchObject({ state: 'resolved', resolvedAt: new Date(T0 + 6 * MIN).toISOString(), resolutionSeconds: 360, resolvedBy: 'tool', occurrences: 2 });
    expect(resolved.alertCount).toBe(5);
    expect(resolved.alerts.map((a) => a.state)).toEqual(['resolved', 'firing', 'firing', 'firing', 'firing']);
    // Its resolution re-sent: nothing changes. Its next firing is a new incident.
    await post(am, [amAlert('aa01', 'web-1', 'resolved', T0 + 2 * MIN, T0 + 6 * MIN)]);
    now += MIN;
    await post(am, [amAlert('aa01', 'web-1', 'firing', T0 + 10 * MIN)]);
    const items = (await list(`?integrationId=${am}`)).items;
    expect(items.map((i) => [i.state, i.openedAt, i.occurrences])).toEqual([
      ['open', new Date(T0 + 10 * MIN).toISOString(), 1],
      ['resolved', new Date(T0).toISOString(), 2],
    ]);
    expect((await one(opened!.id)).alertCount).toBe(6);
  });

  it('keeps the alarm history whether a rule matches or not, and when the rule is off: its events and rules belong to the incident', async () => {
    const am = await integration('rules');
    const off = await alertRule(am, { enabled: false });
    await post(am, [amAlert('bb01', 'web-2', 'firing', T0), amAlert('bb02', 'web-3', 'firing', T0, undefined, 'CpuHot')]);
    const byKey = Object.fromEntries((await list(`?integrationId=${am}`)).items.map((i) => [i.fingerprint, i]));
    expect(Object.keys(byKey).sort()).toEqual(['bb01', 'bb02']);
    const incident = await one(byKey.bb01!.id);
    expect(incident.ruleIds).toEqual([off]);
    expect(incident.events.map((e) => e.outcome)).toEqual(['rule_off']);
    // A re-sent alert is a duplicate for the rule, and nothing for the incident.
    await post(am, [amAlert('bb01', 'web-2', 'firing', T0)]);
    const again = await one(byKey.bb01!.id);
    expect(again.occurrences).toBe(1);
    expect(again.events.map((e) => e.outcome)).toEqual(['duplicate', 'rule_off']);
  });

  it('an incident\'s page shows its newest 100 alerts and events of more, counts them all, and ends where the alert log was pruned', async () => {
    const am = await integration('long');
    await alertRule(am);
    // 130 firings of one alarm in three notifications: chains within a batch and across batches.
    const firings = (from: number, n: number) => Array.from({ length: n }, (_, i) => amAlert('dd01', 'web-7', 'firing', T0 + (from + i) * MIN));
    await post(am, firings(0, 60));
    now += MIN;
    await post(am, firings(60, 60));
    now += MIN;
    await post(am, firings(120, 10));
    const [incident] = (await list(`?integrationId=${am}`)).items;
    const { db } = env.store;
    const newest = (table: 'alerts' | 'events', limit: number) =>
      db.selectFrom(table).select('id').where('incident_id', '=', incident!.id).orderBy('id', 'desc').limit(limit).execute().then((rows) => rows.map((r) => r.id));
    const page = await one(incident!.id);
    expect([page.alertCount, page.eventCount, page.occurrences]).toEqual([130, 130, 130]);
    expect(page.alerts.map((a) => a.id)).toEqual(await newest('alerts', 100));
    expect(page.events.map((e) => e.id)).toEqual(await newest('events', 100));
    // Retention deletes the oldest alerts: the page lists those left.
    const kept = await newest('alerts', 80);
    await db.deleteFrom('alerts').where('incident_id', '=', incident!.id).where('id', 'not in', kept).execute();
    const pruned = await one(incident!.id);
    expect(pruned.alerts.map((a) => a.id)).toEqual(kept);
    expect(pruned.alertCount).toBe(130);
  });

  it('lists newest opened first, filtered by state, integration, host (without case), alarm and opening time, page by page', async () => {
    const am = await integration('list');
    await post(am, [
      amAlert('cc01', 'list-1', 'firing', T0 - 30 * MIN, undefined, 'Load'),
      amAlert('cc02', 'list-2', 'firing', T0 - 20 * MIN, undefined, 'Load'),
      amAlert('cc03', 'list-1', 'firing', T0 - 10 * MIN, undefined, 'Swap'),
    ]);
    await post(am, [amAlert('cc02', 'list-2', 'resolved', T0 - 20 * MIN, T0 - 15 * MIN, 'Load')]);
    const keys = async (query: string) => (await list(`?integrationId=${am}${query}`)).items.map((i) => i.fingerprint);
    expect(await keys('')).toEqual(['cc03', 'cc02', 'cc01']);
    expect(await keys('&state=open')).toEqual(['cc03', 'cc01']);
    expect(await keys('&state=resolved')).toEqual(['cc02']);
    expect(await keys('&hostname=LIST-1')).toEqual(['cc03', 'cc01']);
    expect(await keys('&alarmName=Load')).toEqual(['cc02', 'cc01']);
    expect(await keys(`&from=${new Date(T0 - 20 * MIN).toISOString()}&to=${new Date(T0 - 10 * MIN).toISOString()}`)).toEqual(['cc03', 'cc02']);
    const first = await list(`?integrationId=${am}&limit=2`);
    expect(first.items.map((i) => i.fingerprint)).toEqual(['cc03', 'cc02']);
    expect((await list(`?integrationId=${am}&limit=2&cursor=${first.nextCursor}`)).items.map((i) => i.fingerprint)).toEqual(['cc01']);
    expectProblem(await env.api('GET', '/api/v1/incidents?state=closed'), 400, 'PITCREW_ERR_VALIDATION');
  });

  it('a webhook call naming an alarm and a host opens an incident; each call counts; it closes after the tenant\'s quiet period', async () => {
    const rule = await env.createWebhookRule();
    expect((await env.api('PATCH', '/api/v1/tenant', { incidents: { quietSeconds: 600 } })).json().incidents).toEqual({ automationWindowSeconds: 3600, quietSeconds: 600 });
    const start = now;
    const call = async (body: Record<string, unknown>) => {
      const reply = await env.webhook(rule.triggerId, body);
      expect(reply.statusCode, reply.statusCode === 500 ? env.logs.filter((l) => l.includes('"err"')).slice(-1).join('\n') : reply.body).toBe(202);
      return reply.json() as { eventId: string };
    };
    const first = await call({ HostName: 'Web-9', AlarmName: 'nginx_down', Severity: 'major' });
    now += 2 * MIN;
    await call({ HostName: 'web-9', AlarmName: 'nginx_down' });
    // Without an alarm name, or a host, a call is no incident's.
    await call({ HostName: 'web-9' });
    await call({ AlarmName: 'nginx_down' });
    const [open] = (await list('?hostname=web-9')).items;
    expect(open).toMatchObject({ state: 'open', alarmName: 'nginx_down', hostname: 'Web-9', integrationId: null, occurrences: 2, ruleIds: [rule.id], openedAt: new Date(start).toISOString() });
    expect(open!.fingerprint).toMatch(/^webhook:[0-9a-f]{64}$/);
    expect((await one(open!.id)).events.map((e) => e.id)).toContain(first.eventId);

    // Quiet for 9 minutes: still open. Past 10: the closer resolves it when it was last heard of.
    now += 9 * MIN;
    expect(await env.app.context.quietCloser.closeQuiet(now)).toBe(0);
    now += 2 * MIN;
    expect(await env.app.context.quietCloser.closeQuiet(now)).toBe(1);
    expect(await env.app.context.quietCloser.closeQuiet(now)).toBe(0);
    expect(await one(open!.id)).toMatchObject({ state: 'resolved', resolvedBy: 'tool', resolvedAt: new Date(start + 2 * MIN).toISOString(), occurrences: 2 });

    // The next call opens another; one after a quiet period the closer has not yet seen, another again.
    await call({ HostName: 'web-9', AlarmName: 'nginx_down' });
    now += 11 * MIN;
    await call({ HostName: 'web-9', AlarmName: 'nginx_down' });
    const items = (await list('?hostname=web-9')).items;
    expect(items.map((i) => [i.state, i.occurrences])).toEqual([['open', 1], ['resolved', 1], ['resolved', 2]]);
    // A call saying the alarm is over (State: resolved) resolves it then.
    now += MIN;
    await call({ HostName: 'web-9', AlarmName: 'nginx_down', State: 'OK' });
    expect((await one(items[0]!.id))).toMatchObject({ state: 'resolved', resolvedAt: new Date(now).toISOString() });
    expect((await env.api('PATCH', '/api/v1/tenant', { incidents: { quietSeconds: 1800 } })).statusCode).toBe(200);
  });

  it('is resolved by automation when the tool resolves it within the window after a pitcrew fix succeeded; else by the tool', async () => {
    const host = await env.enrol('fix-1');
    const am = await integration('automation');
    await alertRule(am);
    const diagnostics = await integration('diagnostics');
    await alertRule(diagnostics, { action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'df -h' } } });
    const { ledger } = env.app.context;
    // A fix runs on the host and succeeds: its result is reported as the agent reports it.
    const runOn = async (executionId: string) => {
      await ledger.claim(host.hostId, [executionId], { sessionId: 'test-session', nodeId: 'test-node' });
      await ledger.result(host.hostId, {
        executionId, ending: 'exited', exitCode: 0, signal: null, reason: null, startedAt: Date.now(), finishedAt: Date.now(), stdout: 'cleaned', stderr: '',
        stdoutTruncated: false, stderrTruncated: false, artifacts: [], artifactsTruncated: false,
      });
    };
    const fired = Date.now() - 10 * MIN;
    const fixed = await post(am, [amAlert('dd01', 'fix-1', 'firing', fired), amAlert('dd02', 'fix-1', 'firing', fired, undefined, 'Late')]);
    const looked = await post(diagnostics, [amAlert('dd03', 'fix-1', 'firing', fired)]);
    for (const alert of [fixed.alerts[0]!, looked.alerts[0]!]) await runOn(alert.events[0]!.executionIds[0]!);
    // A fix resolves dd01 within the hour; dd02's fix ran too, but the tool resolved it 2 h later (the window is 1 h).
    const { incidents } = (await env.api('PATCH', '/api/v1/tenant', { incidents: { automationWindowSeconds: 3600 } })).json();
    expect(incidents.automationWindowSeconds).toBe(3600);
    await runOn(fixed.alerts[1]!.events[0]!.executionIds[0]!);
    await post(am, [amAlert('dd01', 'fix-1', 'resolved', fired, Date.now() + MIN), amAlert('dd02', 'fix-1', 'resolved', fired, Date.now() + 2 * 3_600_000, 'Late')]);
    await post(diagnostics, [amAlert('dd03', 'fix-1', 'resolved', fired, Date.now() + MIN)]);
    const by = async (integrationId: string) => Object.fromEntries((await list(`?integrationId=${integrationId}`)).items.map((i) => [i.fingerprint, [i.resolvedBy, i.executionCount]]));
    expect(await by(am)).toEqual({ dd01: ['automation', 1], dd02: ['tool', 1] });
    // A diagnostics script fixes nothing.
    expect(await by(diagnostics)).toEqual({ dd03: ['tool', 1] });
    const detail = await one((await list(`?integrationId=${am}&alarmName=DiskFull`)).items[0]!.id);
    expect(detail.executions.map((e) => e.id)).toEqual(detail.executionIds);
  });

  it('an operator resolves an open incident by hand, audited; a viewer may only look; twice is a conflict', async () => {
    const am = await integration('manual');
    await post(am, [amAlert('ee01', 'web-5', 'firing', T0)]);
    const [incident] = (await list(`?integrationId=${am}`)).items;
    const viewer = await invite(env, `viewer-${dialect}@example.com`, 'viewer');
    const operator = await invite(env, `operator-${dialect}@example.com`, 'operator');
    expect((await viewer.call('GET', `/api/v1/incidents/${incident!.id}`)).statusCode).toBe(200);
    expectProblem(await viewer.call('POST', `/api/v1/incidents/${incident!.id}/resolve`), 403, 'PITCREW_ERR_FORBIDDEN');
    const resolved = await operator.call('POST', `/api/v1/incidents/${incident!.id}/resolve`);
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ state: 'resolved', resolvedBy: 'manual', resolvedByUser: operator.userId, resolvedAt: new Date(now).toISOString() });
    expectProblem(await operator.call('POST', `/api/v1/incidents/${incident!.id}/resolve`), 409, 'PITCREW_ERR_CONFLICT');
    const audit = (await env.api('GET', `/api/v1/audit?action=incident.resolve&target=incident:${incident!.id}`)).json() as { items: Array<{ actor: { userId?: string }; targetType: string; targetId: string }> };
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({ targetType: 'incident', targetId: incident!.id });
    // The tool's resolution later changes nothing; its next firing is a new incident.
    await post(am, [amAlert('ee01', 'web-5', 'resolved', T0, now + MIN)]);
    expect((await one(incident!.id)).resolvedBy).toBe('manual');
  });

  it('another tenant\'s incident is the same 404 as an unknown one, and is in none of its lists', async () => {
    const am = await integration('isolation');
    await post(am, [amAlert('ff01', 'web-6', 'firing', T0)]);
    const [mine] = (await list(`?integrationId=${am}`)).items;
    const other = await env.addTenant(`other-${dialect}`);
    const theirs = await env.api('GET', `/api/v1/incidents/${mine!.id}`, undefined, other.token);
    const unknown = await env.api('GET', '/api/v1/incidents/01900000-0000-7000-8000-000000000000', undefined, other.token);
    const a = expectProblem(theirs, 404, 'PITCREW_ERR_NOT_FOUND');
    const b = expectProblem(unknown, 404, 'PITCREW_ERR_NOT_FOUND');
    expect(a.detail.replace(mine!.id, 'ID')).toBe(b.detail.replace('01900000-0000-7000-8000-000000000000', 'ID'));
    expectProblem(await env.api('POST', `/api/v1/incidents/${mine!.id}/resolve`, undefined, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
    expect((await env.api('GET', '/api/v1/incidents', undefined, other.token)).json().items).toEqual([]);
    expect((await one(mine!.id)).state).toBe('open');
  });

  it('refuses incident settings out of range, naming the field', async () => {
    expectProblem(await env.api('PATCH', '/api/v1/tenant', { incidents: { quietSeconds: 5 } }), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('PATCH', '/api/v1/tenant', { incidents: {} }), 400, 'PITCREW_ERR_VALIDATION');
    expect((await env.api('GET', '/api/v1/tenant')).json().incidents).toEqual({ automationWindowSeconds: 3600, quietSeconds: 1800 });
  });
});
