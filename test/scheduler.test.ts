import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tickOccurrences } from '../src/scheduler/scheduler.js';
import { planTick } from '../src/rules/cron.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
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
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'echo "at $PITCREW_SCHEDULED_TIME in $PITCREW_SCHEDULE_TIMEZONE on $PITCREW_HOSTNAME"' } },
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

  it('stores a tick once when a node died between storing it and moving on', async () => {
    const rule = await cronRule('0 * * * *');
    const due = (await nextAt(rule.id))!;
    now = due;
    const tenant = { rule_id: rule.id, tenant_id: env.tenant.tenantId };
    const trigger = { type: 'cron' as const, schedule: '0 * * * *', timezone: 'Europe/Berlin' };
    // What a node stored before it died: the tick's event, with next_at left where it was.
    await env.app.context.writer.submitAll(tickOccurrences(tenant, trigger, planTick(trigger, due, now, 300_000), now, 300_000));
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
    expect((await events(offline.id)).map((e) => [e.outcome, e.reason])).toEqual([['no_target', 'none of the 1 hosts with the tags lonely is online (the target picks one online host)']]);
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
    const queue = await env.api('POST', '/api/v1/rules', {
      name: 'queued', trigger: { type: 'cron', schedule: '* * * * *', overlap: 'queue' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } },
      target, infrastructureType: 'On_Premise',
    });
    expect(queue.statusCode).toBe(400);
    expect(queue.json().detail).toMatch(/overlap "queue" is not built yet/);
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

// Three service nodes on one PostgreSQL, each with its own scheduler passing every 50 ms on the real
// clock: every tick of a per-second schedule is stored once, and none is skipped.
describe.skipIf(!testDialects().includes('postgres'))('a schedule on three service nodes of one PostgreSQL', () => {
  it('fires each tick once over many ticks', async () => {
    const a = await startTestEnv('postgres', { schedulerIntervalMs: 50 });
    const nodes = [a, await startTestEnv('postgres', { schedulerIntervalMs: 50, database: a.database }), await startTestEnv('postgres', { schedulerIntervalMs: 50, database: a.database })];
    try {
      const made = await a.api('POST', '/api/v1/rules', {
        name: 'every second', trigger: { type: 'cron', schedule: '* * * * * *' }, action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'true' } },
        target: { type: 'specific_host', hostname: 'nowhere-1' }, infrastructureType: 'On_Premise',
      });
      expect(made.statusCode, made.body).toBe(201);
      const ruleId = made.json().id as string;
      const ticks = async () => (await a.store.db.selectFrom('events').select('payload').where('rule_id', '=', ruleId).execute()).map((row) => (JSON.parse(row.payload) as { scheduledTime: string }).scheduledTime);
      await waitFor(async () => (await ticks()).length >= 6, 'six ticks', 20_000);
      await a.api('PATCH', `/api/v1/rules/${ruleId}`, { enabled: false });
      await Promise.all(nodes.map((node) => node.app.context.scheduler.stop()));
      const seen = (await ticks()).map(Date.parse).sort((x, y) => x - y);
      expect(new Set(seen).size).toBe(seen.length);
      // One second apart, none skipped (a slow pass still runs every tick within the grace).
      for (let i = 1; i < seen.length; i += 1) expect(seen[i]! - seen[i - 1]!).toBe(1000);
    } finally {
      for (const node of nodes.reverse()) await node.close();
    }
  });
});
