import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tickOccurrences, tickTurn } from '../src/scheduler/scheduler.js';
import { planTick } from '../src/rules/cron.js';
import { connectRawAgent, spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { PROTOCOL_VERSION } from '../src/agents/protocol.js';
import { startReceiver } from './support/receivers.js';
import { tellNotRun } from '../src/notify/not-run.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 18: cron rules fire through the spine, once per tick, on one online host of their tags
 * (the least recently picked), with the tick's time in the script's environment; missed ticks past
 * the grace are recorded, not run. The clock is injected: a test moves it to the next tick and
 * runs a scheduler pass, never waiting for real time. Real agent processes run the scripts.
 */
describe.each(testDialects())('cron rules on %s', (dialect) => {
  let env: TestEnv;
  let now = Date.parse('2026-11-25T10:00:00Z');
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true, clock: () => now, executionExpirySeconds: 3600 });
    for (const hostname of ['batch-1', 'batch-2', 'batch-3']) {
      agents.push(spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname, tags: ['batch'], fingerprint: env.listening!.fingerprint }));
    }
    for (const hostname of ['batch-1', 'batch-2', 'batch-3']) await waitOnline(env.api, hostname);
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.kill()));
    await env.close();
  });

  const cronRule = async (schedule: string, extra: Record<string, unknown> = {}) => {
    const response = await env.api('POST', '/api/v1/rules', {
      name: `cron-${Math.random().toString(36).slice(2, 10)}`,
      trigger: { type: 'cron', schedule, timezone: 'Europe/Berlin' },
      // A day's timeout: the ledger stamps dispatched_at with the real time while the sweeper reads this
      // test's clock, hours ahead, and would take a run sent a moment ago for overdue (lost) after 10 min.
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'echo "at $PITCREW_SCHEDULED_TIME in $PITCREW_SCHEDULE_TIMEZONE on $PITCREW_HOSTNAME"' }, timeoutSeconds: 86_400 },
      target: { type: 'specific_tags', tags: ['batch'] },
      infrastructureType: 'On_Premise',
      ...extra,
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: string };
  };
  const nextAt = async (ruleId: string) => {
    const row = await env.store.db.selectFrom('schedules').select('next_at').where('rule_id', '=', ruleId).executeTakeFirst();
    return row ? Number(row.next_at) : undefined;
  };
  const events = async (ruleId: string) => (await env.api('GET', `/api/v1/rules/${ruleId}/events?limit=100`)).json().items as Array<{ id: string; outcome: string; reason: string | null; source: string }>;
  const executions = async (ruleId: string) => (await env.api('GET', `/api/v1/executions?ruleId=${ruleId}&limit=100`)).json().items as Array<{ id: string; hostname: string; state: string }>;
  const pass = (at: number) => env.app.context.scheduler.pass(at);

  it('fires each tick once on one online host of the tags, spreading the ticks, with the tick in the environment', async () => {
    const rule = await cronRule('*/5 * * * *');
    const first = (await nextAt(rule.id))!;
    expect(first).toBe(Date.parse('2026-11-25T10:05:00Z'));
    expect(await pass(first - 1)).toBe(0);

    for (let tick = 0; tick < 3; tick += 1) {
      now = (await nextAt(rule.id))!;
      // Two passes at once, as two nodes would: the tick is stored once.
      await Promise.all([pass(now), pass(now)]);
      expect(await nextAt(rule.id)).toBe(now + 5 * 60_000);
      // Each run ends before the next tick (a tick while one goes on is skipped: the next test).
      await waitFor(async () => (await executions(rule.id)).filter((e) => e.state === 'succeeded').length === tick + 1, `run ${tick + 1}`);
    }
    const fired = await events(rule.id);
    expect(fired.map((e) => [e.outcome, e.source])).toEqual([['accepted', 'cron'], ['accepted', 'cron'], ['accepted', 'cron']]);
    await waitFor(async () => (await executions(rule.id)).filter((e) => e.state === 'succeeded').length === 3, 'three runs');
    const runs = await executions(rule.id);
    expect(new Set(runs.map((e) => e.hostname))).toEqual(new Set(['batch-1', 'batch-2', 'batch-3']));
    const output = (await env.api('GET', `/api/v1/executions/${runs.at(-1)!.id}`)).json().stdout as string;
    expect(output).toBe(`at 2026-11-25T10:05:00.000Z in Europe/Berlin on ${runs.at(-1)!.hostname}\n`);
  });

  it('spreads ticks due in the same second over the hosts of the tags, each host in turn', async () => {
    const rules: Array<{ id: string }> = [];
    for (let i = 0; i < 6; i += 1) rules.push(await cronRule('0 0 * * *', { name: `nightly-${i}` }));
    expect((await env.api('GET', `/api/v1/rules/${rules[0]!.id}`)).json().schedule.nextTicks[0]).toBe(new Date((await nextAt(rules[0]!.id))!).toISOString());
    now = (await nextAt(rules[0]!.id))!;
    await pass(now);
    for (const rule of rules) expect(await executions(rule.id)).toHaveLength(1);
    // Every run this pass placed on the tag's hosts (earlier tests' rules tick at midnight too): in turn, none has two more than another.
    const placed = await env.store.db.selectFrom('executions').select('hostname').where('queued_at', '=', now).where('hostname', 'like', 'batch-%').execute();
    const perHost = ['batch-1', 'batch-2', 'batch-3'].map((name) => placed.filter((row) => row.hostname === name).length);
    expect(placed.length).toBeGreaterThanOrEqual(6);
    expect(Math.max(...perHost) - Math.min(...perHost), JSON.stringify(perHost)).toBeLessThanOrEqual(1);
    await waitFor(async () => (await Promise.all(rules.map((rule) => executions(rule.id)))).flat().every((e) => e.state === 'succeeded'), 'the six runs');
  });

  it('stores a tick once when a node died between storing it and moving on', async () => {
    const rule = await cronRule('0 * * * *');
    const due = (await nextAt(rule.id))!;
    now = due;
    const tenant = { rule_id: rule.id, tenant_id: env.tenant.tenantId };
    const trigger = { type: 'cron' as const, schedule: '0 * * * *', timezone: 'Europe/Berlin' };
    // What a node stored before it died: the tick's event, with next_at left where it was.
    await env.app.context.writer.submitAll(tickOccurrences(tenant, trigger, tickTurn(trigger, planTick(trigger, due, now, 300_000), null, undefined), now, 300_000));
    await pass(now);
    expect((await events(rule.id)).map((e) => e.outcome)).toEqual(['accepted']);
    expect(await nextAt(rule.id)).toBe(due + 3600_000);
  });

  it('after an outage runs the latest tick within the grace once, and records the missed ones without running them', async () => {
    const rule = await cronRule('*/5 * * * *');
    const due = (await nextAt(rule.id))!;
    now = due + 7 * 60_000;
    await pass(now);
    const [ran, missed] = await events(rule.id);
    expect(ran).toMatchObject({ outcome: 'accepted' });
    expect(missed).toMatchObject({ outcome: 'recorded', reason: expect.stringMatching(/^missed: the tick of .* came while no service node ran, more than 300 s ago/) });
    expect(await nextAt(rule.id)).toBe(due + 10 * 60_000);


    // An hourly schedule down for hours: its latest tick is past the grace too.
    const hourly = await cronRule('0 * * * *');
    const hour = (await nextAt(hourly.id))!;
    now = hour + 2 * 3600_000 + 30 * 60_000;
    await pass(now);
    expect((await events(hourly.id)).map((e) => [e.outcome, e.reason])).toEqual([
      ['recorded', `missed: 3 ticks from ${new Date(hour).toISOString()} to ${new Date(hour + 2 * 3600_000).toISOString()} came while no service node ran, more than 300 s ago (the grace, PITCREW_SCHEDULE_GRACE_SECONDS): recorded, not run`],
    ]);
    expect(await executions(hourly.id)).toEqual([]);
    expect(await nextAt(hourly.id)).toBe(hour + 3 * 3600_000);
  });

  it('has no tick while paused, starts afresh on resume, and says when no host of the tags is online', async () => {
    const rule = await cronRule('* * * * *', { target: { type: 'specific_tags', tags: ['nowhere'] } });
    expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { enabled: false })).statusCode).toBe(200);
    expect(await nextAt(rule.id)).toBeUndefined();
    now += 3600_000;
    expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { enabled: true })).statusCode).toBe(200);
    const resumed = (await nextAt(rule.id))!;
    expect(resumed).toBe(Math.floor(now / 60_000) * 60_000 + 60_000);
    now = resumed;
    await pass(now);
    expect((await events(rule.id)).map((e) => [e.outcome, e.reason])).toEqual([['no_target', 'no host carries all of the tags nowhere']]);


    await env.enrol('lonely-1', ['lonely']);
    const offline = await cronRule('* * * * *', { target: { type: 'specific_tags', tags: ['lonely'], pick: 'one' } });
    now = (await nextAt(offline.id))!;
    await pass(now);
    expect((await events(offline.id)).map((e) => [e.outcome, e.reason])).toEqual([['no_target', 'none of the 1 host with the tags lonely is online (the target picks one online host)']]);
    expect((await env.api('DELETE', `/api/v1/rules/${offline.id}`)).statusCode).toBe(204);
    expect(await nextAt(offline.id)).toBeUndefined();
  });

  it('keeps a due tick through a change that leaves the schedule alone, and starts afresh when the schedule changes', async () => {
    const rule = await cronRule('0 * * * *');
    const due = (await nextAt(rule.id))!;
    now = due + 500;
    expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { name: `renamed-${rule.id}` })).statusCode).toBe(200);
    expect(await nextAt(rule.id)).toBe(due);
    await pass(now);
    expect((await events(rule.id)).map((e) => e.outcome)).toEqual(['accepted']);
    expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, { trigger: { type: 'cron', schedule: '30 * * * *', timezone: 'Europe/Berlin' } })).statusCode).toBe(200);
    expect(await nextAt(rule.id)).toBe(due + 30 * 60_000);
  });

  it('skips a tick while the previous run has not ended, unless the rule allows overlap', async () => {
    await env.enrol('parked-1');
    const target = { type: 'specific_host', hostname: 'parked-1' };
    const skip = await cronRule('0 * * * *', { target });
    const allow = await cronRule('0 * * * *', { target, trigger: { type: 'cron', schedule: '0 * * * *', overlap: 'allow' } });
    now = (await nextAt(skip.id))!;
    await pass(now);
    now += 3600_000;
    await pass(now);
    const [second, first] = await events(skip.id);
    expect(first).toMatchObject({ outcome: 'accepted' });
    expect(second).toMatchObject({ outcome: 'recorded', reason: expect.stringMatching(/^overlap: the previous run \(execution [0-9a-f-]{36}, queued\) has not ended, and the rule skips a tick meanwhile/) });
    expect((await events(allow.id)).map((e) => e.outcome)).toEqual(['accepted', 'accepted']);
  });

  it('queues a tick while the previous run goes on (overlap queue): it runs once that run ends, one tick waits at most', async () => {
    await env.enrol('parked-2');
    const rule = await cronRule('* * * * *', { target: { type: 'specific_host', hostname: 'parked-2' }, trigger: { type: 'cron', schedule: '* * * * *', overlap: 'queue' } });
    const first = (await nextAt(rule.id))!;
    now = first;
    await pass(now);
    const [run] = await executions(rule.id);
    expect(run).toMatchObject({ state: 'queued' });

    // Ticks a minute apart: the run waits for an agent far less than its expiry (the sweeper reads this clock too).
    // The next tick waits for that run: no event yet, the rule says which tick waits.
    now = first + 60_000;
    await pass(now);
    expect(await events(rule.id)).toHaveLength(1);
    const view = (await env.api('GET', `/api/v1/rules/${rule.id}`)).json();
    expect(view.trigger.overlap).toBe('queue');
    expect(view.schedule.waitingTick).toBe(new Date(first + 60_000).toISOString());
    expect(view.schedule.nextTicks[0]).toBe(new Date(first + 2 * 60_000).toISOString());

    // A third tick while one already waits is recorded, not run, and not queued behind it.
    now = first + 2 * 60_000;
    await pass(now);
    const [third] = await events(rule.id);
    expect(third).toMatchObject({ outcome: 'recorded', reason: expect.stringMatching(new RegExp(`^overlap: the previous run \\(execution ${run!.id}, queued\\) has not ended, and the tick of ${new Date(first + 60_000).toISOString()} already waits for it`)) });
    await pass(now + 1000);
    expect(await events(rule.id)).toHaveLength(2);

    // The run ends: the waiting tick runs at the next pass, with its own scheduled time, and nothing waits.
    expect((await env.api('POST', `/api/v1/executions/${run!.id}/cancel`)).statusCode).toBeLessThan(300);
    await pass(now + 2000);
    const [released] = await events(rule.id);
    expect(released).toMatchObject({ outcome: 'accepted' });
    const payload = (await env.api('GET', `/api/v1/events/${released!.id}`)).json().payload as { scheduledTime: string };
    expect(payload.scheduledTime).toBe(new Date(first + 60_000).toISOString());
    expect((await env.api('GET', `/api/v1/rules/${rule.id}`)).json().schedule.waitingTick).toBeNull();
    expect((await executions(rule.id)).map((e) => e.state)).toEqual(['queued', 'cancelled']);
    await pass(now + 3000);
    expect(await events(rule.id)).toHaveLength(3);
  });

  it('moves a run off a host whose agent went offline before the run started, to another online host of the tags', async () => {
    const raw = await env.enrol('failover-raw', ['failover']);
    const agent = await connectRawAgent(env.listening!.httpsUrl, raw.token, 'failover-raw');
    agent.send({ type: 'hello', v: PROTOCOL_VERSION, hostname: 'failover-raw', tags: ['failover'], os: 'Linux (hand-written agent)', arch: 'x64', version: 'raw', running: [], interrupted: [] });
    await agent.next('welcome');
    agents.push(spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'failover-real', tags: ['failover'], fingerprint: env.listening!.fingerprint }));
    await waitOnline(env.api, 'failover-real');
    // The hand-written agent is the least recently picked: it gets the tick, takes it and never starts it.
    await env.store.db.updateTable('hosts').set({ last_picked_at: now }).where('hostname', '=', 'failover-real').execute();
    const rule = await cronRule('0 * * * *', { target: { type: 'specific_tags', tags: ['failover'] } });
    now = (await nextAt(rule.id))!;
    await pass(now);
    const execute = await agent.next('execute');
    const [run] = await executions(rule.id);
    expect(run).toMatchObject({ hostname: 'failover-raw' });
    expect(execute).toMatchObject({ executionId: run!.id });

    await agent.close();
    await waitFor(async () => (await executions(rule.id))[0]!.state === 'succeeded', 'the run on the other host');
    const moved = (await env.api('GET', `/api/v1/executions/${run!.id}`)).json();
    expect(moved.hostname).toBe('failover-real');
    expect(moved.stdout).toBe(`at ${new Date(now).toISOString()} in Europe/Berlin on failover-real\n`);
    const history = await env.store.db.selectFrom('execution_transitions').select(['from_state', 'to_state', 'reason']).where('execution_id', '=', run!.id).orderBy('id').execute();
    expect(history.map((t) => t.reason).filter((reason) => reason?.startsWith('moved'))).toEqual([
      'moved from failover-raw, whose agent went offline before the run started, to failover-real (the target runs on any one online host of the tags failover)',
    ]);
    expect(await executions(rule.id)).toHaveLength(1);
  });

  it('tells the channels once when a tick runs nothing for want of an online host', async () => {
    const receiver = await startReceiver();
    const channel = await env.api('POST', '/api/v1/channels', { name: `errors-${Math.random()}`, type: 'webhook', mode: 'errors', config: { url: receiver.url, secret: 'not-run-test-secret' } });
    expect(channel.statusCode, channel.body).toBe(201);
    const rule = await cronRule('0 * * * *', { target: { type: 'specific_tags', tags: ['gone'] } });
    now = (await nextAt(rule.id))!;
    await pass(now);
    const [event] = await events(rule.id);
    expect(event).toMatchObject({ outcome: 'no_target' });
    const told = async () => receiver.accepted().filter((r) => (r.body as { notification: { rule: { id: string } } }).notification.rule.id === rule.id);
    await waitFor(async () => (await told()).length === 1, 'the not-run message');
    const [message] = await told();
    expect(message!.body).toMatchObject({
      type: 'not_run', severity: 'error',
      title: `⚠️ ${(await env.api('GET', `/api/v1/rules/${rule.id}`)).json().name}: the scheduled run of ${new Date(now).toISOString()} did not run`,
      notification: { event: { id: event!.id }, outcome: 'no_target', reason: 'no host carries all of the tags gone', scheduledTime: new Date(now).toISOString() },
    });
    // Told once: the tick stored again (a node that died before moving on) tells nobody again.
    expect(await tellNotRun(env.store.db, { rule: () => null, event: () => null, execution: () => null } as never, env.tenant.tenantId, event!.id)).toBeNull();
    await env.api('DELETE', `/api/v1/channels/${channel.json().id}`);
  });

  it('previews a schedule: its next ticks in its zone across a spring-forward night, and the field at fault', async () => {
    const saved = now;
    now = Date.parse('2026-03-28T12:00:00Z');
    try {
      const preview = await env.api('POST', '/api/v1/schedules/preview', { schedule: '30 2 * * *', timezone: 'Europe/Berlin', count: 3 });
      expect(preview.statusCode, preview.body).toBe(200);
      expect(preview.json()).toEqual({
        timezone: 'Europe/Berlin',
        ticks: [
          // 02:30 does not exist that night: it runs at the first moment after the gap.
          { at: '2026-03-29T01:00:00.000Z', local: '2026-03-29 03:00:00 CEST' },
          { at: '2026-03-30T00:30:00.000Z', local: '2026-03-30 02:30:00 CEST' },
          { at: '2026-03-31T00:30:00.000Z', local: '2026-03-31 02:30:00 CEST' },
        ],
      });
      const bad = await env.api('POST', '/api/v1/schedules/preview', { schedule: '61 * * * *', timezone: 'Mars/Olympus' });
      expect(bad.statusCode).toBe(400);
      expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(bad.json().errors.map((e: { path: string }) => e.path)).toEqual(['/schedule', '/timezone']);
      expect(bad.json().errors[1].message).toBe('"Mars/Olympus" is not an IANA time zone such as UTC or Europe/Paris');
    } finally {
      now = saved;
    }
  });

  it('shows a cron rule its next ticks from the one it waits for, and none while paused', async () => {
    const rule = await cronRule('*/15 * * * *');
    const first = (await nextAt(rule.id))!;
    const view = (await env.api('GET', `/api/v1/rules/${rule.id}`)).json();
    expect(view.schedule).toEqual({ nextTicks: [0, 1, 2, 3, 4].map((i) => new Date(first + i * 15 * 60_000).toISOString()), waitingTick: null });
    const listed = (await env.api('GET', '/api/v1/rules?triggerType=cron&limit=1000')).json().items.find((r: { id: string }) => r.id === rule.id);
    expect(listed.schedule.nextTicks[0]).toBe(new Date(first).toISOString());
    await env.api('PATCH', `/api/v1/rules/${rule.id}`, { enabled: false });
    expect((await env.api('GET', `/api/v1/rules/${rule.id}`)).json().schedule).toEqual({ nextTicks: [], waitingTick: null });
    const webhook = (await env.api('POST', '/api/v1/rules', { name: 'no schedule', trigger: { type: 'webhook' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise' })).json();
    expect(webhook.schedule).toBeUndefined();
  });

  it('refuses pick outside a tag target', async () => {
    const refused = await env.api('POST', '/api/v1/rules', {
      name: 'bad pick', trigger: { type: 'cron', schedule: '* * * * *' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
      target: { type: 'specific_host', hostname: 'batch-1', pick: 'one' }, infrastructureType: 'On_Premise',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail).toMatch(/pick chooses among the hosts of the tags/);
  });
});
