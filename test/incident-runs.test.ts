import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../src/identity/tokens.js';
import { applyObservations } from '../src/incidents/apply.js';
import { troubleshootRuleId } from '../src/incidents/troubleshoot.js';
import type { AlarmObservation } from '../src/integrations/observation.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { RUNBOOK_LIBRARY, scriptRule, startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';
import { waitFor } from './support/wait.js';

const UNKNOWN = '7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c';

// Troubleshoot now and Fix now (issue 38.3, DESIGN.md §7): a person runs a diagnostics runbook,
// or a rule's action, on an incident's host through the ingest and a real agent; the runs join
// the incident. And an alert rule created for an alarm joins its incidents' rules (38.4).
describe.each(testDialects())('runs on an incident on %s', (dialect) => {
  let env: TestEnv;
  let agent: AgentProcess;
  let integrationId: string;
  let otherIntegrationId: string;
  let viewer: string;
  let operator: string;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'db-7', fingerprint });
    integrationId = (await env.api('POST', '/api/v1/integrations', { name: 'am', type: 'alertmanager' })).json().id;
    otherIntegrationId = (await env.api('POST', '/api/v1/integrations', { name: 'am 2', type: 'alertmanager' })).json().id;
    const owner = (await env.store.db.selectFrom('tokens').select('user_id').where('tenant_id', '=', env.tenant.tenantId).executeTakeFirstOrThrow()).user_id!;
    viewer = (await issueToken(env.store.db, { tenantId: env.tenant.tenantId, userId: owner, name: 'watcher', role: 'viewer' })).token;
    operator = (await issueToken(env.store.db, { tenantId: env.tenant.tenantId, userId: owner, name: 'on call', role: 'operator' })).token;
    await waitOnline(env.api, 'db-7');
  });
  afterAll(async () => {
    await agent?.stop();
    await env?.close();
  });

  let keys = 0;
  /** An open incident, as an import of the tool opens one (incidents/apply.ts). */
  const openIncident = async (alarmName: string, hostname: string | null, integration = integrationId): Promise<string> => {
    const observation: AlarmObservation = { incidentKey: `key-${++keys}`, alarmName, hostname, severity: 'critical', state: 'firing', at: Date.now() };
    const applied = await applyObservations(env.store.db, env.tenant.tenantId, integration, [observation], Date.now());
    return applied.incidentIds[0]!;
  };
  const incident = async (id: string) => {
    const row = await env.store.db.selectFrom('incidents').select(['rule_ids', 'execution_ids', 'execution_count']).where('id', '=', id).executeTakeFirstOrThrow();
    return { ruleIds: JSON.parse(row.rule_ids) as string[], executionIds: JSON.parse(row.execution_ids) as string[], executionCount: Number(row.execution_count) };
  };
  const troubleshoot = (id: string, body: unknown, token?: string) => env.api('POST', `/api/v1/incidents/${id}/troubleshoot`, body, token);
  const finished = (id: string) => waitFor(async () => {
    const execution = (await env.api('GET', `/api/v1/executions/${id}`)).json();
    return ['succeeded', 'failed'].includes(execution.state) ? execution : undefined;
  }, `execution ${id} to end`);

  it('runs a starter runbook on the incident\'s host through its agent: an execution of the incident, who asked recorded', async () => {
    const id = await openIncident('HighMemoryUsage', 'db-7');
    const reply = await troubleshoot(id, { starter: 'top-memory' }, operator);
    expect(reply.statusCode, reply.body).toBe(202);
    const { executionId, eventId, hostname } = reply.json();
    expect(hostname).toBe('db-7');
    expect(reply.headers.location).toBe(`/api/v1/executions/${executionId}`);

    const execution = await finished(executionId);
    const starter = RUNBOOK_LIBRARY.get('top-memory');
    expect(execution).toMatchObject({ state: 'succeeded', hostname: 'db-7', eventId, ruleId: troubleshootRuleId(env.tenant.tenantId), runbook: { sha256: starter.sha256 } });
    // The agent ran the starter's script: its report of the host's memory.
    expect(execution.stdout).toMatch(/Mem:/);
    expect(await incident(id)).toEqual({ ruleIds: [], executionIds: [executionId], executionCount: 1 });

    const event = (await env.api('GET', `/api/v1/events/${eventId}`)).json();
    expect(event).toMatchObject({ source: 'troubleshoot', outcome: 'accepted', requestedBy: { type: 'token', name: 'on call' }, payload: { AlarmName: 'HighMemoryUsage', HostName: 'db-7', Severity: 'critical' } });
    const stored = await env.store.db.selectFrom('events').select('incident_id').where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(stored.incident_id).toBe(id);
    // The run is diagnostics: it fixes nothing, whatever the runbook.
    const spec = JSON.parse((await env.store.db.selectFrom('executions').select('spec').where('id', '=', executionId).executeTakeFirstOrThrow()).spec);
    expect(spec).toMatchObject({ flavour: 'diagnostics', runbook: { name: 'top memory processes (starter library)', sha256: starter.sha256 } });

    // The tenant's troubleshooting rule is in no list, and a second run reuses it.
    expect((await env.api('GET', '/api/v1/rules')).json().items.map((r: { id: string }) => r.id)).not.toContain(troubleshootRuleId(env.tenant.tenantId));
    const again = await troubleshoot(id, { starter: 'top-memory' });
    expect(again.statusCode).toBe(202);
    await finished(again.json().executionId);
    expect((await incident(id)).executionIds).toEqual([executionId, again.json().executionId]);
    // The runs' events are the (imported) incident's events, newest first, counted.
    const page = (await env.api('GET', `/api/v1/incidents/${id}`)).json() as { events: Array<{ id: string }>; eventCount: number; executions: Array<{ id: string }> };
    expect([page.events.map((e) => e.id), page.eventCount]).toEqual([[again.json().eventId, eventId], 2]);
    expect(page.executions.map((e) => e.id)).toEqual([again.json().executionId, executionId]);
    const audit = (await env.api('GET', `/api/v1/audit?action=incident.troubleshoot`)).json().items;
    expect(audit[audit.length - 1]).toMatchObject({ action: 'incident.troubleshoot', targetType: 'incident', targetId: id });
  });

  it('runs a stored runbook, its latest version or the one named, on a host given', async () => {
    const saved = (await env.api('POST', '/api/v1/runbooks', { name: 'who am i', script: 'echo "v1 on $HostName for $AlarmName"' })).json();
    await env.api('PUT', `/api/v1/runbooks/${saved.id}`, { name: 'who am i', script: 'echo "v2 on $HostName for $AlarmName"' });
    // The incident names a host without an agent; the person runs on one that has it.
    const id = await openIncident('DiskFull', 'lb-1');
    const latest = await troubleshoot(id, { runbookId: saved.id, hostname: 'db-7' });
    expect(latest.statusCode, latest.body).toBe(202);
    expect((await finished(latest.json().executionId)).stdout).toBe('v2 on db-7 for DiskFull\n');
    const first = await troubleshoot(id, { runbookId: saved.id, version: 1, hostname: 'db-7' });
    const execution = await finished(first.json().executionId);
    expect(execution.stdout).toBe('v1 on db-7 for DiskFull\n');
    expect(execution.runbook).toMatchObject({ runbookId: saved.id, version: 1, name: 'who am i' });
  });

  it('refuses what cannot run, at the field, and says why nothing ran when no agent has the host', async () => {
    const id = await openIncident('DiskFull', 'lb-1');
    expect(expectProblem(await troubleshoot(id, {}), 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/name one runbook: runbookId .* or starter/);
    expect(expectProblem(await troubleshoot(id, { starter: 'top-memory', runbookId: UNKNOWN }), 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/name one runbook/);
    expect(expectProblem(await troubleshoot(id, { starter: 'nope' }), 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/\/body\/starter: not in the starter library; one of: disk-cleanup, /);
    expect(expectProblem(await troubleshoot(id, { runbookId: UNKNOWN }), 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/\/body\/runbookId: no runbook/);
    expect(expectProblem(await troubleshoot(id, { starter: 'top-memory' }), 409, 'PITCREW_ERR_CONFLICT').detail).toMatch(/nothing ran on lb-1: the rule's host "lb-1" has no agent in this tenant/);
    expect((await incident(id)).executionIds).toEqual([]);
    const hostless = await openIncident('QueueBacklog', null);
    expect(expectProblem(await troubleshoot(hostless, { starter: 'top-memory' }), 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/\/body\/hostname: the incident names no host/);
  });

  it('is an operator\'s: a viewer is refused, another tenant\'s incident is not found', async () => {
    const id = await openIncident('HighMemoryUsage', 'db-7');
    expectProblem(await troubleshoot(id, { starter: 'top-memory' }, viewer), 403, 'PITCREW_ERR_FORBIDDEN');
    expectProblem(await env.api('POST', `/api/v1/incidents/${id}/fix`, { ruleId: UNKNOWN }, viewer), 403, 'PITCREW_ERR_FORBIDDEN');
    const other = await env.addTenant('other');
    expectProblem(await troubleshoot(id, { starter: 'top-memory' }, other.token), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await troubleshoot(UNKNOWN, { starter: 'top-memory' }), 404, 'PITCREW_ERR_NOT_FOUND');
    expect((await incident(id)).executionIds).toEqual([]);
  });

  it('Fix now runs a rule\'s action with the incident as the payload: its runs and the rule join the incident', async () => {
    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "fixed $AlarmName on $HostName"' } } });
    const id = await openIncident('ServiceDown', 'db-7');
    const reply = await env.api('POST', `/api/v1/incidents/${id}/fix`, { ruleId: rule.id }, operator);
    expect(reply.statusCode, reply.body).toBe(202);
    expect(reply.json()).toMatchObject({ outcome: 'accepted', executionCount: 1, act: true, replayed: false });
    const [executionId] = reply.json().executionIds;
    expect((await finished(executionId)).stdout).toBe('fixed ServiceDown on db-7\n');
    expect(await incident(id)).toEqual({ ruleIds: [rule.id], executionIds: [executionId], executionCount: 1 });
    expect((await env.api('GET', `/api/v1/events/${reply.json().eventId}`)).json()).toMatchObject({ source: 'manual', requestedBy: { name: 'on call' } });

    // A dry run is recorded on the incident's event list and runs nothing: the rule does not join.
    const other = await env.createWebhookRule();
    const dry = await env.api('POST', `/api/v1/incidents/${id}/fix`, { ruleId: other.id, act: false });
    expect(dry.json()).toMatchObject({ outcome: 'dry_run', executionCount: 0 });
    expect((await incident(id)).ruleIds).toEqual([rule.id]);
    expect(expectProblem(await env.api('POST', `/api/v1/incidents/${id}/fix`, { ruleId: UNKNOWN }), 400, 'PITCREW_ERR_VALIDATION').detail).toMatch(/\/body\/ruleId: no rule/);
  });

  it('an alert rule created for an alarm joins the rules of that alarm\'s incidents on its integration, and no others', async () => {
    const open = await openIncident('CertExpiring', 'web-1');
    const onOther = await openIncident('CertExpiring', 'web-1', otherIntegrationId);
    const otherAlarm = await openIncident('CertRenewed', 'web-1');
    const created = await env.api('POST', '/api/v1/rules', scriptRule({ trigger: { type: 'alert', integrationId, alarmName: 'CertExpiring' } }));
    expect(created.statusCode, created.body).toBe(201);
    expect((await incident(open)).ruleIds).toEqual([created.json().id]);
    expect((await incident(onOther)).ruleIds).toEqual([]);
    expect((await incident(otherAlarm)).ruleIds).toEqual([]);

    // A glob names the alarms it matches; a rule for every alert of the tool names none in particular.
    const glob = (await env.api('POST', '/api/v1/rules', scriptRule({ trigger: { type: 'alert', integrationId, alarmName: 'Cert*' } }))).json();
    expect((await incident(open)).ruleIds).toEqual([created.json().id, glob.id]);
    expect((await incident(otherAlarm)).ruleIds).toEqual([glob.id]);
    await env.api('POST', '/api/v1/rules', scriptRule({ trigger: { type: 'alert', integrationId } }));
    expect((await incident(otherAlarm)).ruleIds).toEqual([glob.id]);
  });
});
