import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Escalation } from '../src/notify/escalate.js';
import { EscalationRelay } from '../src/notify/escalation-relay.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel, waitDelivered } from './support/notify.js';
import { slackShape } from './support/platforms.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';
import { waitFor } from './support/wait.js';

describe.each(testDialects())('escalations on %s', (dialect) => {
  let env: TestEnv;
  let smtp: SmtpTestServer;
  let ruleId: string;
  let otherRuleId: string;
  const receivers: Record<string, Receiver> = {};
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    env = await startTestEnv(dialect, { publicUrl: 'https://pitcrew.example.com' });
    smtp = await startSmtpServer();
    ruleId = (await env.createWebhookRule({ name: 'restart nginx', actionLimit: { max: 3, windowSeconds: 600 } })).id;
    otherRuleId = (await env.createWebhookRule()).id;
    const smtpChannel = await createChannel(env, {
      name: 'smtp', type: 'email', mode: 'disabled',
      config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
    });
    const chat = async (name: string, mode: string, ruleIds: string[] | null) => {
      receivers[name] = await startReceiver(slackShape);
      channels[name] = (await createChannel(env, { name, type: 'slack', mode, ruleIds, config: { webhookUrl: receivers[name]!.url } })).id;
    };
    await chat('errors', 'errors', null); // hears escalations: they are errors
    await chat('other-rule', 'all', [otherRuleId]); // filtered to another rule
    await chat('oncall', 'all', [otherRuleId]); // a contact: hears every escalation whatever its filter
    await chat('off', 'disabled', null); // a contact, but disabled
    const put = await env.api('PUT', '/api/v1/escalation-contacts', { emails: ['oncall@example.com', 'lead@example.com'], channelIds: [channels.oncall, channels.off], emailChannelId: smtpChannel.id });
    expect(put.statusCode, put.body).toBe(200);
  });
  afterAll(() => env.close());

  const escalation = (overrides: Partial<Escalation> = {}): Escalation => ({
    tenantId: env.tenant.tenantId,
    ruleId,
    hostname: 'web-1',
    limit: { max: 3, windowSeconds: 600 },
    windowStart: Date.parse('2026-03-01T03:00:00Z'),
    count: 3,
    notDone: 'did not run the autofix script "systemctl restart nginx" for the alarm disk_full at 03:12',
    ...overrides,
  });

  it('is sent once per (rule, host, window) to contacts and error channels, stating the limit, the count and what was not done', async () => {
    const { notifier } = env.app.context;
    smtp.failNext(1); // a temporary SMTP refusal on the way: retried, still one mail
    const results = await Promise.all([notifier.escalate(escalation()), notifier.escalate(escalation())]);
    expect(results.filter((id) => id !== null)).toHaveLength(1);
    // Host names compare without case: the same host, the same window, nothing new.
    expect(await notifier.escalate(escalation({ hostname: 'WEB-1', count: 4 }))).toBeNull();
    await waitDelivered(env, channels.errors!);
    await waitDelivered(env, channels.oncall!);
    await waitFor(() => smtp.mails.length === 1, 'the escalation mail');
    expect(await notifier.escalate(escalation())).toBeNull();
    await notifier.pass();

    const mail = smtp.mails[0]!;
    expect(mail.to.sort()).toEqual(['lead@example.com', 'oncall@example.com']);
    expect(mail.subject).toBe('[pitcrew] Action limit reached: restart nginx on web-1');
    for (const words of ['ran "restart nginx" 3 times on web-1 within 10 min (limit 3)', 'Not done: did not run the autofix script', '2026-03-01T03:00:00.000Z to 2026-03-01T03:10:00.000Z', `https://pitcrew.example.com/rules/${ruleId}`]) {
      expect(mail.text).toContain(words);
    }
    for (const name of ['errors', 'oncall']) {
      expect(receivers[name]!.accepted(), name).toHaveLength(1);
      expect((receivers[name]!.accepted()[0]!.body as { text: string }).text).toBe('🚨 Action limit reached: restart nginx on web-1');
    }
    expect(receivers['other-rule']!.requests).toEqual([]);
    expect(receivers.off!.requests).toEqual([]);
  });

  it('is sent again for the next window, and for another host', async () => {
    const { notifier } = env.app.context;
    const before = receivers.errors!.accepted().length;
    expect(await notifier.escalate(escalation({ windowStart: Date.parse('2026-03-01T03:10:00Z') }))).not.toBeNull();
    expect(await notifier.escalate(escalation({ hostname: 'web-2' }))).not.toBeNull();
    await waitDelivered(env, channels.errors!, before + 2);
    expect(receivers.errors!.accepted().map((r) => (r.body as { text: string }).text).slice(before).sort()).toEqual([
      '🚨 Action limit reached: restart nginx on web-1',
      '🚨 Action limit reached: restart nginx on web-2',
    ]);
  });

  it('refuses a rule of another tenant', async () => {
    const other = await env.addTenant(`escalation-other-${dialect}`);
    await expect(env.app.context.notifier.escalate(escalation({ tenantId: other.tenantId }))).rejects.toThrow(/does not exist in this tenant/);
  });
});

describe.each(testDialects())('escalations from action limits on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv(dialect);
  });
  afterAll(() => env.close());

  it('tells people once when a rule reaches its limit on a host, and marks the record notified', async () => {
    const receiver = await startReceiver(slackShape);
    const channel = await createChannel(env, { name: 'errors', type: 'slack', mode: 'errors', config: { webhookUrl: receiver.url } });
    await env.enrol('limited-1');
    const rule = await env.createWebhookRule({ name: 'clear tmp', actionLimit: { max: 1, windowSeconds: 600 } });
    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push((await env.webhook(rule.triggerId, { HostName: 'limited-1', AlarmName: `tmp_full_${i}` })).json().outcome);
    expect(outcomes).toEqual(['accepted', 'limited', 'limited']);
    await waitDelivered(env, channel.id);
    const escalation = await waitFor(async () => {
      const items = (await env.api('GET', `/api/v1/rules/${rule.id}/escalations`)).json().items;
      return items[0]?.state === 'notified' ? items[0] : undefined;
    }, 'the escalation to be notified');
    expect(escalation).toMatchObject({ hostname: 'limited-1', limitedEvents: 2 });
    await env.app.context.notifier.pass();
    const escalations = receiver.accepted().filter((r) => (r.body as { text: string }).text.startsWith('🚨'));
    expect(escalations).toHaveLength(1);
    const text = JSON.stringify(escalations[0]!.body);
    expect(text).toContain('Action limit reached: clear tmp on limited-1');
    expect(text).toContain('ran \\"clear tmp\\" once on limited-1 within 10 min (limit 1)');
    expect(text).toContain('did not run the autofix script \\"systemctl restart nginx\\" on limited-1');
    expect(text).toContain('tmp_full_1');
  });
});

describe.each(testDialects())('an escalation reports the limit it was raised under, on %s', (dialect) => {
  let env: TestEnv;
  // The notifier is stopped: this test runs the relay itself, once the rule has changed.
  beforeAll(async () => {
    env = await startTestEnv(dialect);
    await env.app.context.notifier.stop();
    await env.enrol('changed-1');
  });
  afterAll(() => env.close());

  async function limitedThenChanged(change: Record<string, unknown>): Promise<Escalation[]> {
    const rule = await env.createWebhookRule({ actionLimit: { max: 1, windowSeconds: 600 } });
    const outcomes = [];
    for (let i = 0; i < 2; i += 1) outcomes.push((await env.webhook(rule.triggerId, { HostName: 'changed-1' })).json().outcome);
    expect(outcomes).toEqual(['accepted', 'limited']);
    expect((await env.api('PATCH', `/api/v1/rules/${rule.id}`, change)).statusCode).toBe(200);
    const sent: Escalation[] = [];
    await new EscalationRelay(env.app.context.store.db, async (escalation) => {
      if (escalation.ruleId === rule.id) sent.push(escalation);
      return null;
    }).run();
    return sent;
  }

  it('when the rule was given another limit and script before the notifier ran', async () => {
    const sent = await limitedThenChanged({
      actionLimit: { max: 5, windowSeconds: 60 },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo changed' } },
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ hostname: 'changed-1', limit: { max: 1, windowSeconds: 600 }, count: 1 });
    expect(sent[0]!.notDone).toContain('did not run the autofix script "systemctl restart nginx" on changed-1');
  });

  it('when the rule lost its limit before the notifier ran: people are still told', async () => {
    const sent = await limitedThenChanged({ actionLimit: null });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ limit: { max: 1, windowSeconds: 600 } });
  });
});

describe.each(testDialects())('an action limit reached on %s', (dialect) => {
  let env: TestEnv;
  let receiver: Receiver;

  // An hour between polls: only the ingest transaction's wake-up can send it in time.
  beforeAll(async () => {
    env = await startTestEnv(dialect, { notify: { pollMs: 3_600_000 } });
    await env.enrol('storm-1');
    receiver = await startReceiver(slackShape);
    await createChannel(env, { name: 'errors', type: 'slack', mode: 'errors', config: { webhookUrl: receiver.url } });
  });
  afterAll(async () => {
    await env.close();
    await receiver.close();
  });

  it('tells people at once, not at the next poll', async () => {
    const rule = await env.createWebhookRule({ name: 'storm', actionLimit: { max: 1, windowSeconds: 600 } });
    const outcomes = [];
    for (let i = 0; i < 2; i += 1) outcomes.push((await env.webhook(rule.triggerId, { HostName: 'storm-1' })).json().outcome);
    expect(outcomes).toEqual(['accepted', 'limited']);
    await waitFor(() => receiver.accepted().some((r) => (r.body as { text: string }).text.startsWith('🚨')), 'the escalation message');
  });
});
