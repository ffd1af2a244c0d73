import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { attemptsOf, createChannel, finish, waitDelivered } from './support/notify.js';
import { googleChatShape, mattermostShape, signedWebhook, slackShape, teamsShape } from './support/platforms.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

const SECRET = 'whsec-0123456789abcdef';

describe.each(testDialects())('notification delivery on %s', (dialect) => {
  let env: TestEnv;
  let hosts: Record<string, string>;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { publicUrl: 'https://pitcrew.example.com' });
    hosts = {};
    for (const name of ['web-1', 'web-2', 'web-3']) hosts[name] = (await env.enrol(name, ['web'])).hostId;
  });
  afterAll(() => env.close());

  /** A tenant of its own per test: its channels hear only its own rules. */
  async function tenant(name: string) {
    const t = await env.addTenant(`${name}-${dialect}`);
    const hostIds: Record<string, string> = {};
    for (const host of ['web-1', 'web-2', 'web-3']) hostIds[host] = (await env.enrol(host, ['web'], t.tenantId)).hostId;
    const fire = async (overrides: Record<string, unknown> = {}, body: Record<string, unknown> = { HostName: 'web-1', AlarmName: 'disk_full', Severity: 'critical' }) => {
      const rule = await env.createWebhookRule(overrides, t.token);
      const reply = (await env.webhook(rule.triggerId, body, { apiKey: t.apiKey })).json();
      return { rule, eventId: reply.eventId as string, ids: reply.executionIds as string[] };
    };
    return {
      ...t, hostIds, fire,
      channel: (body: Record<string, unknown>) => createChannel(env, body, t.token),
      delivered: (channelId: string, count = 1) => waitDelivered(env, channelId, count, t.token),
      attempts: (channelId: string) => attemptsOf(env, channelId, t.token),
    };
  }

  it('posts each platform its documented payload, and signs the generic webhook', async () => {
    const t = await tenant('shapes');
    const receivers: Record<string, Receiver> = {
      slack: await startReceiver(slackShape),
      teams: await startReceiver(teamsShape),
      mattermost: await startReceiver(mattermostShape),
      google_chat: await startReceiver(googleChatShape),
      webhook: await startReceiver(signedWebhook(SECRET)),
    };
    const channels: Record<string, string> = {};
    for (const type of ['slack', 'teams', 'mattermost', 'google_chat']) {
      channels[type] = (await t.channel({ name: type, type, config: { webhookUrl: `${receivers[type]!.url}/hooks/T000/B000/tok-${type}` } })).id;
    }
    channels.webhook = (await t.channel({ name: 'webhook', type: 'webhook', config: { url: `${receivers.webhook!.url}/pitcrew`, secret: SECRET } })).id;

    const { ids: [id], eventId, rule } = await t.fire();
    await finish(env, id!, t.hostIds['web-1']!, { exitCode: 1, stdout: 'checking disk\n/dev/sda1 100%\n', stderr: 'rm: cannot remove: busy' });
    for (const [type, receiver] of Object.entries(receivers)) {
      await waitFor(() => receiver.accepted().length === 1, `${type} to accept one message (got ${JSON.stringify(receiver.requests.map((r) => r.status))})`);
      await t.delivered(channels[type]!);
      const text = receiver.accepted()[0]!.raw;
      // What fired, where, what ran, the outcome, exit code, output and links, on every platform.
      for (const fact of ['disk_full', 'web-1', 'systemctl restart nginx', 'failed', 'exit code 1', '/dev/sda1 100%', 'cannot remove', `https://pitcrew.example.com/executions/${id}`, `https://pitcrew.example.com/rules/${rule.id}`]) {
        expect(text, `${type} message mentions ${fact}`).toContain(fact);
      }
      expect(receiver.requests, type).toHaveLength(1);
    }
    const signed = receivers.webhook!.accepted()[0]!;
    expect(signed.body).toMatchObject({ type: 'run', severity: 'error', notification: { kind: 'run', event: { id: eventId }, executions: [{ id, state: 'failed', exitCode: 1 }] } });
    expect(signed.headers['x-pitcrew-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    for (const channelId of Object.values(channels)) expect((await t.attempts(channelId))[0]).toMatchObject({ ok: true, attempt: 1, status: 'HTTP 200', kind: 'run' });
  });

  it('filters by mode and by rule: all hears results, errors only failures, disabled nothing', async () => {
    const t = await tenant('modes');
    const [all, errors, disabled, filtered] = [await startReceiver(), await startReceiver(), await startReceiver(), await startReceiver()];
    const first = await t.fire();
    const second = await t.fire();
    const ids = {
      all: (await t.channel({ name: 'all', type: 'slack', mode: 'all', config: { webhookUrl: all.url } })).id,
      errors: (await t.channel({ name: 'errors', type: 'slack', mode: 'errors', config: { webhookUrl: errors.url } })).id,
      disabled: (await t.channel({ name: 'off', type: 'slack', mode: 'disabled', config: { webhookUrl: disabled.url } })).id,
      filtered: (await t.channel({ name: 'second only', type: 'slack', mode: 'all', ruleIds: [second.rule.id], config: { webhookUrl: filtered.url } })).id,
    };
    await finish(env, first.ids[0]!, t.hostIds['web-1']!, { exitCode: 0, stdout: 'ok' });
    await t.delivered(ids.all, 1);
    await finish(env, second.ids[0]!, t.hostIds['web-1']!, { exitCode: 2 });
    await t.delivered(ids.all, 2);
    await t.delivered(ids.errors, 1);
    await t.delivered(ids.filtered, 1);
    // Everything owed is delivered: one more pass adds nothing.
    await env.app.context.notifier.pass();
    expect(all.accepted().map((r) => (r.body as { text: string }).text)).toEqual([expect.stringMatching(/^✅ .* succeeded on web-1$/), expect.stringMatching(/^❌ .* failed on web-1$/)]);
    expect(errors.accepted().map((r) => (r.body as { text: string }).text)).toEqual([expect.stringMatching(/failed on web-1/)]);
    expect(filtered.accepted().map((r) => (r.body as { text: string }).text)).toEqual([expect.stringContaining(second.rule.body.name as string)]);
    expect(disabled.requests).toEqual([]);
  });

  it('owes nothing for the results of a tenant no channel could tell: no pending rows are written', async () => {
    const pending = async (executionId: string) => (await env.store.db.selectFrom('notify_pending').select('execution_id').where('execution_id', '=', executionId).execute()).length;
    const silent = await tenant('silent');
    await silent.channel({ name: 'off', type: 'slack', mode: 'disabled', config: { webhookUrl: 'https://hooks.slack.com/services/T0/B0/x' } });
    const quiet = await silent.fire();
    const heard = await tenant('heard');
    const receiver = await startReceiver();
    const channel = (await heard.channel({ name: 'all', type: 'slack', mode: 'all', config: { webhookUrl: receiver.url } })).id;
    const loud = await heard.fire();
    // Nothing collects pending rows while both results are stored and counted.
    await env.app.context.notifier.stop();
    try {
      await finish(env, quiet.ids[0]!, silent.hostIds['web-1']!, { exitCode: 1 });
      await finish(env, loud.ids[0]!, heard.hostIds['web-1']!, { exitCode: 1 });
      expect(await pending(quiet.ids[0]!)).toBe(0);
      expect(await pending(loud.ids[0]!)).toBe(1);
    } finally {
      env.app.context.notifier.start();
    }
    await heard.delivered(channel, 1);
  });

  it('sends one message per fan-out run, once every host has finished, summarising the hosts', async () => {
    const t = await tenant('fanout');
    const receiver = await startReceiver(slackShape);
    const channel = await t.channel({ name: 'ops', type: 'slack', config: { webhookUrl: receiver.url } });
    const { ids, eventId } = await t.fire({ target: { type: 'specific_tags', tags: ['web'] } }, {});
    expect(ids).toHaveLength(3);
    const hostOf = async (id: string) => ((await env.api('GET', `/api/v1/executions/${id}`, undefined, t.token)).json() as { hostname: string }).hostname;
    await finish(env, ids[0]!, t.hostIds[await hostOf(ids[0]!)]!, { exitCode: 0 });
    await finish(env, ids[1]!, t.hostIds[await hostOf(ids[1]!)]!, { exitCode: 0 });
    await env.app.context.notifier.pass();
    expect(receiver.requests).toEqual([]);
    expect(await env.store.db.selectFrom('notify_messages').select('id').where('dedupe_key', 'like', `run:${eventId}:%`).execute()).toEqual([]);

    const failing = await hostOf(ids[2]!);
    await finish(env, ids[2]!, t.hostIds[failing]!, { exitCode: 3, stderr: 'nginx: [emerg] bind() failed' });
    await t.delivered(channel.id);
    expect(receiver.requests).toHaveLength(1);
    const message = receiver.requests[0]!.body as { text: string; blocks: Array<{ text?: { text: string } }> };
    expect(message.text).toMatch(/failed on 1 of 3 hosts/);
    const sections = message.blocks.map((b) => b.text?.text ?? '').join('\n');
    expect(sections).toContain(`${failing}: failed, exit code 3`);
    expect(sections).toContain('bind() failed');
    // Failures come first; the hosts that succeeded are listed after.
    expect(sections.indexOf(failing)).toBeLessThan(sections.indexOf('succeeded'));
  });

  it('gets a message through a receiver that fails twice, exactly once, with every attempt recorded', async () => {
    const t = await tenant('retries');
    const receiver = await startReceiver(slackShape);
    receiver.failNext(2, 503, 'upstream busy');
    const channel = await t.channel({ name: 'flaky', type: 'slack', config: { webhookUrl: receiver.url } });
    const { ids: [id] } = await t.fire();
    await finish(env, id!, t.hostIds['web-1']!, { exitCode: 0 });
    const attempts = await t.delivered(channel.id);
    await env.app.context.notifier.pass();
    expect(receiver.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(receiver.accepted()).toHaveLength(1);
    expect(attempts.map((a) => [a.attempt, a.ok, a.status])).toEqual([[3, true, 'HTTP 200'], [2, false, 'HTTP 503'], [1, false, 'HTTP 503']]);
    expect(attempts[1]!.error).toMatch(/answered 503 Service Unavailable: "upstream busy"/);
    const view = (await env.api('GET', `/api/v1/channels/${channel.id}`, undefined, t.token)).json();
    expect(view).toMatchObject({ status: 'ok', lastDeliveredAt: expect.any(String), lastError: expect.stringMatching(/503/) });
  });

  it('does not retry what waiting will not heal (a 404 from a removed webhook), and says so', async () => {
    const t = await tenant('gone');
    const receiver = await startReceiver();
    receiver.answer(404, 'no_service');
    const channel = await t.channel({ name: 'gone', type: 'slack', config: { webhookUrl: `${receiver.url}/services/T1/B1/sekrit-token` } });
    const { ids: [id] } = await t.fire();
    await finish(env, id!, t.hostIds['web-1']!, { exitCode: 0 });
    const [attempt] = await waitFor(async () => {
      const attempts = await t.attempts(channel.id);
      return attempts.length > 0 ? attempts : undefined;
    }, 'the failed attempt');
    const delivery = await waitFor(() => env.store.db.selectFrom('notify_deliveries').selectAll().where('channel_id', '=', channel.id).where('state', '=', 'failed').executeTakeFirst(), 'the delivery to be given up');
    expect(delivery.attempts).toBe(1);
    expect(attempt).toMatchObject({ ok: false, status: 'HTTP 404', error: expect.stringContaining('"no_service"') });
    // The token in the URL reaches neither the attempts, nor the channel's last error, nor a log line.
    expect(JSON.stringify(await t.attempts(channel.id))).not.toContain('sekrit-token');
    await waitFor(() => env.logs.some((line) => line.includes('notification not delivered')), 'the warning');
    expect(env.logs.join('')).not.toContain('sekrit-token');
    expect((await env.api('GET', `/api/v1/channels/${channel.id}`, undefined, t.token)).json()).toMatchObject({ status: 'failing' });
  });

  it('times out a receiver that never answers (PITCREW_NOTIFY_SEND_TIMEOUT_MS), retries it, and keeps the other channels going', async () => {
    const TIMEOUT_MS = 1000;
    const other = await startTestEnv(dialect, { notify: { sendTimeoutMs: TIMEOUT_MS } });
    try {
      const hanging = await startReceiver();
      hanging.hangNext(1);
      const healthy = await startReceiver();
      const host = await other.enrol('web-1');
      const stuck = await createChannel(other, { name: 'hangs', type: 'webhook', config: { url: `${hanging.url}/pitcrew`, secret: SECRET } });
      const fine = await createChannel(other, { name: 'fine', type: 'slack', config: { webhookUrl: healthy.url } });
      const rule = await other.createWebhookRule();
      const { executionIds: [id] } = (await other.webhook(rule.triggerId, { HostName: 'web-1' })).json();
      await finish(other, id, host.hostId, { exitCode: 0 });

      // The hung request does not hold up the other channel: it is delivered within the timeout.
      await waitFor(() => hanging.requests.length === 1, 'the hanging receiver to hold the first request');
      await waitDelivered(other, fine.id);
      expect(await attemptsOf(other, stuck.id)).toEqual([]);

      const attempts = await waitDelivered(other, stuck.id);
      expect(attempts.map((a) => [a.attempt, a.ok, a.status])).toEqual([[2, true, 'HTTP 200'], [1, false, null]]);
      expect(attempts[1]!.error).toBe(`could not deliver to ${new URL(hanging.url).host}: no answer within ${TIMEOUT_MS} ms`);
      expect((attempts[1] as unknown as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
      // The retry carries the same delivery id, so a receiver that stored the first can drop it.
      expect(hanging.requests.map((r) => r.status)).toEqual([0, 200]);
      expect(hanging.requests[1]!.headers['x-pitcrew-delivery']).toBe(hanging.requests[0]!.headers['x-pitcrew-delivery']);
      expect(healthy.requests).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('gives up after maxAttempts tries of a receiver that keeps failing', async () => {
    const other = await startTestEnv(dialect, { notify: { maxAttempts: 3 } });
    try {
      const receiver = await startReceiver();
      receiver.answer(500, 'down');
      const host = await other.enrol('web-1');
      const channel = await createChannel(other, { name: 'down', type: 'slack', config: { webhookUrl: receiver.url } });
      const rule = await other.createWebhookRule();
      const { executionIds: [id] } = (await other.webhook(rule.triggerId, { HostName: 'web-1' })).json();
      await finish(other, id, host.hostId, { exitCode: 0 });
      const delivery = await waitFor(() => other.store.db.selectFrom('notify_deliveries').selectAll().where('channel_id', '=', channel.id).where('state', '=', 'failed').executeTakeFirst(), 'the delivery to be given up');
      expect(delivery.attempts).toBe(3);
      expect(delivery.last_error).toMatch(/gave up after 3 attempts/);
      expect(receiver.requests).toHaveLength(3);
    } finally {
      await other.close();
    }
  });
});

describe.runIf(testDialects().includes('postgres'))('two nodes on one PostgreSQL', () => {
  it('send each message once, whichever node groups and delivers it', async () => {
    const first = await startTestEnv('postgres');
    const second = await startTestEnv('postgres', { database: first.database });
    try {
      const receiver = await startReceiver(slackShape);
      const hostId = (await first.enrol('web-1')).hostId;
      const channel = await createChannel(first, { name: 'ops', type: 'slack', config: { webhookUrl: receiver.url } });
      const rule = await first.createWebhookRule();
      const ids: string[] = [];
      for (let i = 0; i < 20; i += 1) ids.push(...(await first.webhook(rule.triggerId, { HostName: 'web-1', AlarmName: `alarm-${i}` })).json().executionIds);
      await Promise.all(ids.map((id, i) => finish(i % 2 === 0 ? first : second, id, hostId, { exitCode: 0 })));
      await Promise.all([first.app.context.notifier.pass(), second.app.context.notifier.pass()]);
      await waitDelivered(first, channel.id, 20);
      await Promise.all([first.app.context.notifier.pass(), second.app.context.notifier.pass()]);
      const alarms = receiver.requests.map((r) => /alarm-\d+/.exec(r.raw)?.[0]);
      expect(alarms.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `alarm-${i}`).sort());
    } finally {
      await second.close();
      await first.close();
    }
  });
});
