import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../src/identity/tokens.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { expectProblem } from './support/problems.js';
import { waitFor } from './support/wait.js';

const UNKNOWN = '7b0c2a52-3a8e-4a51-9a57-1f1b4d4a0b0c';

interface Reply { eventId: string; outcome: string; reason: string | null; executionIds: string[]; executionCount: number; executionsUrl: string; skippedEnv: Array<{ name: string; reason: string }>; act: boolean; replayed: boolean }

// Run now (issue 36.8): a person raises a rule through the management API, the webhook's way.
describe.each(testDialects())('Run now on %s', (dialect) => {
  let env: TestEnv;
  let bootstrapTokenId: string;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    await env.enrol('web-1');
    await env.enrol('web-2');
    bootstrapTokenId = (await env.store.db.selectFrom('tokens').select('id').where('tenant_id', '=', env.tenant.tenantId).executeTakeFirstOrThrow()).id;
  });
  afterAll(() => env.close());

  const run = (ruleId: string, body?: unknown, token?: string) => env.api('POST', `/api/v1/rules/${ruleId}/run`, body, token);
  const accepted = async (ruleId: string, body?: unknown, token?: string): Promise<Reply> => {
    const response = await run(ruleId, body, token);
    expect(response.statusCode, response.body).toBe(202);
    expect(response.headers.location).toBe(`/api/v1/events/${response.json().eventId}`);
    return response.json();
  };
  const event = async (id: string) => (await env.api('GET', `/api/v1/events/${id}`)).json();

  it('raises a webhook rule as its webhook would: the same reply, an event of source manual that says who asked', async () => {
    const rule = await env.createWebhookRule();
    const reply = await accepted(rule.id, { payload: { HostName: 'web-1', AlarmName: 'disk_full', MetaData: { Disk: '/var' } } });
    expect(reply).toEqual({
      eventId: expect.any(String), outcome: 'accepted', reason: null, executionIds: [expect.any(String)], executionCount: 1,
      executionsUrl: `/api/v1/executions?eventId=${reply.eventId}`, skippedEnv: [], act: true, replayed: false,
    });
    const stored = await event(reply.eventId);
    expect(stored).toMatchObject({
      ruleId: rule.id, outcome: 'accepted', source: 'manual', sourceIp: '127.0.0.1',
      requestedBy: { type: 'token', id: bootstrapTokenId, name: 'bootstrap', userId: expect.any(String) },
      payload: { HostName: 'web-1', AlarmName: 'disk_full', MetaData: { Disk: '/var' } },
      env: { HostName: 'web-1', AlarmName: 'disk_full', Disk: '/var' },
      executionIds: reply.executionIds,
    });
    expect((await env.api('GET', `/api/v1/executions/${reply.executionIds[0]}`)).json()).toMatchObject({ ruleId: rule.id, eventId: reply.eventId, hostname: 'web-1', state: 'queued' });
    // The rule's events list says the same; an event its webhook raised says no one asked.
    const fired = (await env.webhook(rule.triggerId, { HostName: 'web-1' })).json();
    const listed = (await env.api('GET', `/api/v1/rules/${rule.id}/events`)).json().items;
    expect(listed.map((e: { id: string; source: string; requestedBy: unknown }) => [e.id, e.source, e.requestedBy])).toEqual([
      [fired.eventId, 'webhook', null],
      [reply.eventId, 'manual', { type: 'token', id: bootstrapTokenId, name: 'bootstrap', userId: expect.any(String) }],
    ]);
  });

  it('records the token that asked, by id and name', async () => {
    const rule = await env.createWebhookRule();
    const owner = (await env.store.db.selectFrom('tokens').select('user_id').where('id', '=', bootstrapTokenId).executeTakeFirstOrThrow()).user_id!;
    const { id: tokenId, token } = await issueToken(env.store.db, { tenantId: env.tenant.tenantId, userId: owner, name: 'alice laptop' });
    const reply = await accepted(rule.id, { payload: { HostName: 'web-2' } }, token);
    expect((await event(reply.eventId)).requestedBy).toEqual({ type: 'token', id: tokenId, name: 'alice laptop', userId: owner });
  });

  it('act false is a dry run: recorded, nothing runs; act stands for the payload’s Act either way', async () => {
    const rule = await env.createWebhookRule();
    const dry = await accepted(rule.id, { payload: { HostName: 'web-1' }, act: false });
    expect(dry).toMatchObject({ outcome: 'dry_run', executionIds: [], executionCount: 0, act: false });
    expect(await event(dry.eventId)).toMatchObject({ outcome: 'dry_run', payload: { HostName: 'web-1', Act: false }, executionIds: [] });
    expect(await accepted(rule.id, { payload: { HostName: 'web-1', Act: false } })).toMatchObject({ outcome: 'dry_run', act: false });
    const overridden = await accepted(rule.id, { payload: { HostName: 'web-1', Act: 'false' }, act: true });
    expect(overridden).toMatchObject({ outcome: 'accepted', act: true, executionCount: 1 });
    expect((await event(overridden.eventId)).payload).toEqual({ HostName: 'web-1', Act: true });
  });

  it('records a disabled rule’s run as rule_off, and runs nothing', async () => {
    const rule = await env.createWebhookRule({ enabled: false });
    const reply = await accepted(rule.id, { payload: { HostName: 'web-1' } });
    expect(reply).toMatchObject({ outcome: 'rule_off', executionIds: [], act: true });
    expect(reply.reason).toMatch(/off/);
    expect(await event(reply.eventId)).toMatchObject({ outcome: 'rule_off', source: 'manual', requestedBy: { type: 'token', id: bootstrapTokenId } });
  });

  it('keeps the action limit and flapping protection, as for its webhook', async () => {
    const limited = await env.createWebhookRule({ actionLimit: { max: 1, windowSeconds: 3600, onLimit: 'drop' } });
    expect((await accepted(limited.id, { payload: { HostName: 'web-1' } })).outcome).toBe('accepted');
    expect((await env.webhook(limited.triggerId, { HostName: 'web-1' })).json().outcome).toBe('limited');
    expect((await accepted(limited.id, { payload: { HostName: 'web-1' } })).outcome).toBe('limited');
    const flappy = await env.createWebhookRule({ flapping: { enabled: true, maxEvents: 2, windowSeconds: 300, cooldownSeconds: 600 } });
    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push((await accepted(flappy.id, { payload: { HostName: 'web-2' } })).outcome);
    expect(outcomes).toEqual(['accepted', 'accepted', 'flapping']);
  });

  it('says which names were not exported, as the webhook does', async () => {
    const rule = await env.createWebhookRule();
    const reply = await accepted(rule.id, { payload: { HostName: 'web-1', MetaData: { PATH: '/tmp', 'bad-name': 'x', LD_PRELOAD: 'evil.so', Fine: 'yes' } } });
    expect(reply.skippedEnv.map((s) => s.name)).toEqual(['PATH', 'bad-name', 'LD_PRELOAD']);
    expect(await event(reply.eventId)).toMatchObject({ env: { HostName: 'web-1', Fine: 'yes' }, skippedEnv: reply.skippedEnv });
    expect((await event(reply.eventId)).env).not.toHaveProperty('PATH');
  });

  it('runs with no body at all, and with an empty one', async () => {
    const rule = await env.createWebhookRule({ target: { type: 'specific_host', hostname: 'web-2' } });
    const bare = await env.app.server.inject({ method: 'POST', url: `/api/v1/rules/${rule.id}/run`, headers: { authorization: `Bearer ${env.tenant.token}` } });
    expect(bare.statusCode, bare.body).toBe(202);
    expect(bare.json()).toMatchObject({ outcome: 'accepted', executionCount: 1 });
    expect(await accepted(rule.id, {})).toMatchObject({ outcome: 'accepted', executionCount: 1 });
    expect((await event(bare.json().eventId)).payload).toEqual({});
  });

  it('404 for an unknown rule, a deleted one and another tenant’s, and nothing is recorded', async () => {
    expectProblem(await run(UNKNOWN, {}), 404, 'PITCREW_ERR_NOT_FOUND');
    const other = await env.addTenant(`other-${dialect}`);
    const theirs = await env.createWebhookRule({}, other.token);
    const refused = expectProblem(await run(theirs.id, { payload: { HostName: 'web-1' } }), 404, 'PITCREW_ERR_NOT_FOUND');
    expect(refused.detail).toBe(`rule ${theirs.id} does not exist in this tenant`);
    expect((await env.api('GET', `/api/v1/rules/${theirs.id}/events`, undefined, other.token)).json().items).toEqual([]);
    const gone = await env.createWebhookRule();
    expect((await env.api('DELETE', `/api/v1/rules/${gone.id}`)).statusCode).toBe(204);
    expectProblem(await run(gone.id, {}), 404, 'PITCREW_ERR_NOT_FOUND');
    expectProblem(await run('not-a-uuid', {}), 400, 'PITCREW_ERR_VALIDATION');
    expectProblem(await env.api('GET', `/api/v1/rules/${theirs.id}/run-fields`), 404, 'PITCREW_ERR_NOT_FOUND');
  });

  it('refuses a payload the webhook would refuse, at the field, and without a token', async () => {
    const rule = await env.createWebhookRule();
    const cases: Array<[unknown, string]> = [
      [{ payload: { HostName: { name: 'web-1' } } }, '/body/payload/HostName'],
      [{ payload: { HostName: 'x'.repeat(256) } }, '/body/payload/HostName'],
      [{ payload: { Act: 'maybe' } }, '/body/payload/Act'],
      [{ payload: { MetaData: [1] } }, '/body/payload/MetaData'],
      [{ act: 'false' }, '/body/act'],
      [{ HostName: 'web-1' }, '/body/HostName'],
    ];
    for (const [body, path] of cases) {
      const problem = expectProblem(await run(rule.id, body), 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors?.map((e) => e.path), JSON.stringify(problem)).toContain(path);
    }
    const anonymous = await env.app.server.inject({ method: 'POST', url: `/api/v1/rules/${rule.id}/run`, headers: { 'content-type': 'application/json' }, payload: '{}' });
    expectProblem(anonymous, 401, 'PITCREW_ERR_UNAUTHENTICATED');
    expect((await env.api('GET', `/api/v1/rules/${rule.id}/events`)).json().items).toEqual([]);
  });

  it('an Idempotency-Key makes a repeat harmless: the original event back, nothing new run', async () => {
    const rule = await env.createWebhookRule();
    const send = (body: unknown) => env.app.server.inject({
      method: 'POST', url: `/api/v1/rules/${rule.id}/run`, payload: JSON.stringify(body),
      headers: { authorization: `Bearer ${env.tenant.token}`, 'content-type': 'application/json', 'idempotency-key': 'page-42' },
    });
    const first = await send({ payload: { HostName: 'web-1' } });
    const again = await send({ payload: { HostName: 'web-1' } });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toMatchObject({ eventId: first.json().eventId, executionIds: first.json().executionIds, replayed: true });
    const other = expectProblem(await send({ payload: { HostName: 'web-2' } }), 422, 'PITCREW_ERR_IDEMPOTENCY_KEY_REUSED');
    expect(other.detail).toMatch(/was used on this rule within 24 h for a different body/);
  });

  it('runs a cron rule with what its ticks give the runbook, at the time asked', async () => {
    const made = await env.api('POST', '/api/v1/rules', {
      name: `nightly-${dialect}`, trigger: { type: 'cron', schedule: '0 3 * * *', timezone: 'Europe/Berlin' },
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'echo "$PITCREW_SCHEDULED_TIME $Extra"' } },
      target: { type: 'specific_host', hostname: 'web-2' }, infrastructureType: 'On_Premise',
    });
    expect(made.statusCode, made.body).toBe(201);
    const before = Date.now();
    const reply = await accepted(made.json().id, { payload: { MetaData: { Extra: 'by hand' } } });
    expect(reply).toMatchObject({ outcome: 'accepted', executionCount: 1 });
    const stored = await event(reply.eventId);
    expect(stored).toMatchObject({ source: 'manual', payload: { schedule: '0 3 * * *', timezone: 'Europe/Berlin', MetaData: { Extra: 'by hand' } }, env: { Extra: 'by hand', PITCREW_SCHEDULE_TIMEZONE: 'Europe/Berlin' } });
    expect(Date.parse(stored.env.PITCREW_SCHEDULED_TIME)).toBeGreaterThanOrEqual(before - 1000);
    expect(stored.env.PITCREW_SCHEDULED_TIME).toBe(stored.payload.scheduledTime);
  });

  it('runs an alert rule with the webhook form’s fields', async () => {
    const integration = (await env.api('POST', '/api/v1/integrations', { name: `prom-${dialect}`, type: 'alertmanager' })).json() as { id: string };
    const made = await env.api('POST', '/api/v1/rules', {
      name: `alerting-${dialect}`, trigger: { type: 'alert', integrationId: integration.id, alarmName: 'Disk*' },
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'df -h' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise',
    });
    expect(made.statusCode, made.body).toBe(201);
    const reply = await accepted(made.json().id, { payload: { HostName: 'web-2', AlarmName: 'DiskFull', MetaData: { LABEL_severity: 'page' } } });
    expect(reply).toMatchObject({ outcome: 'accepted', executionCount: 1 });
    expect((await env.api('GET', `/api/v1/executions/${reply.executionIds[0]}`)).json()).toMatchObject({ hostname: 'web-2' });
  });

  it('offers the fields the rule reads, prefilled from its last events, and the names its script reads', async () => {
    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script: 'restart "$Service" on $HostName; n=1; echo $n $Queue' } } });
    const fields = async () => (await env.api('GET', `/api/v1/rules/${rule.id}/run-fields`)).json();
    expect(await fields()).toEqual({ fields: ['HostName', 'AlarmName'], payload: { MetaData: {} }, actionVariables: ['Service', 'HostName', 'Queue'], lastEventId: null, eventsRead: 0 });
    await env.webhook(rule.triggerId, { HostName: 'web-1', AlarmName: 'old_alarm', MetaData: { Service: 'nginx', Region: 'eu' } });
    await env.webhook(rule.triggerId, { hostname: 'web-2', Severity: 'critical', MetaData: { Service: 'haproxy', PATH: '/x' } });
    const last = await accepted(rule.id, { payload: { MetaData: { Ticket: 'OPS-1' } }, act: false });
    expect(await fields()).toEqual({
      fields: ['HostName', 'AlarmName'],
      payload: { HostName: 'web-2', AlarmName: 'old_alarm', MetaData: { Ticket: 'OPS-1', Severity: 'critical', Service: 'haproxy', Region: 'eu' } },
      actionVariables: ['Service', 'HostName', 'Queue'],
      lastEventId: last.eventId,
      eventsRead: 3,
    });
  });
});

describe.each(testDialects())('Run now with a real agent on %s', (dialect) => {
  let env: TestEnv;
  let agent: AgentProcess;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    const { httpsUrl, fingerprint } = env.listening!;
    agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname: 'run-1', tags: ['run'], fingerprint });
    await waitOnline(env.api, 'run-1');
  });
  afterAll(async () => {
    await agent?.stop();
    await env.close();
  });

  it('runs the runbook on the host it names, with the payload as its environment; a dry run runs nothing', async () => {
    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'echo "host=$HostName disk=$Disk ticket=$Ticket"' } } });
    const response = await env.api('POST', `/api/v1/rules/${rule.id}/run`, { payload: { HostName: 'run-1', MetaData: { Disk: '/var', Ticket: 'OPS-7' } } });
    expect(response.statusCode, response.body).toBe(202);
    const [executionId] = response.json().executionIds as string[];
    const done = await waitFor(async () => {
      const execution = (await env.api('GET', `/api/v1/executions/${executionId}`)).json();
      return ['succeeded', 'failed', 'timed_out', 'lost', 'expired'].includes(execution.state) ? execution : undefined;
    }, `execution ${executionId} to end`);
    expect(done).toMatchObject({ state: 'succeeded', hostname: 'run-1', exitCode: 0, stdout: 'host=run-1 disk=/var ticket=OPS-7\n' });

    const dry = await env.api('POST', `/api/v1/rules/${rule.id}/run`, { payload: { HostName: 'run-1' }, act: false });
    expect(dry.json()).toMatchObject({ outcome: 'dry_run', executionIds: [] });
    expect((await env.api('GET', `/api/v1/executions?ruleId=${rule.id}`)).json().items.map((e: { id: string }) => e.id)).toEqual([executionId]);
  });
});
