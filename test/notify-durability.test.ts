import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionKinds } from '../src/actions/kinds.js';
import { RunCollector } from '../src/notify/collector.js';
import { UiLinks } from '../src/notify/links.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel, finish, waitDelivered } from './support/notify.js';
import { slackShape } from './support/platforms.js';
import { startReceiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

type Text = { text: string };

describe.each(testDialects())('notifications survive and wait on %s', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    // No grouping wait: a fan-out with a host still running is reported at once, partially.
    env = await startTestEnv(dialect, { executionExpirySeconds: 1, notify: { groupWaitSeconds: 0 } });
  });
  afterAll(() => env.close());

  it('reports an expired execution (its host never came) as an error', async () => {
    const receiver = await startReceiver(slackShape);
    const channel = await createChannel(env, { name: 'errors', type: 'slack', mode: 'errors', config: { webhookUrl: receiver.url } });
    await env.enrol('offline-1');
    const rule = await env.createWebhookRule();
    await env.webhook(rule.triggerId, { HostName: 'offline-1' });
    await waitDelivered(env, channel.id);
    const body = receiver.accepted()[0]!.body as Text;
    expect(body.text).toMatch(/^❌ .* expired on offline-1$/);
    expect(JSON.stringify(body)).toContain('no agent of its host connected');
  });

  it('sends a partial summary after the grouping wait, and the late host in a message of its own', async () => {
    const receiver = await startReceiver(slackShape);
    await createChannel(env, { name: 'partial', type: 'slack', config: { webhookUrl: receiver.url } });
    const a = await env.enrol('pa-1', ['partial']);
    const b = await env.enrol('pa-2', ['partial']);
    const rule = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['partial'] } });
    const { executionIds } = (await env.webhook(rule.triggerId, {})).json();
    const hostOf = async (id: string) => (await env.api('GET', `/api/v1/executions/${id}`)).json().hostname as string;
    const [first, second] = executionIds as string[];
    await finish(env, first!, (await hostOf(first!)) === 'pa-1' ? a.hostId : b.hostId, { exitCode: 0 });
    await waitFor(() => receiver.accepted().some((r) => (r.body as Text).text.includes('still running')), 'the partial summary');
    await finish(env, second!, (await hostOf(second!)) === 'pa-1' ? a.hostId : b.hostId, { exitCode: 1 });
    await waitFor(() => receiver.accepted().some((r) => /failed on 1 of 2 hosts$/.test((r.body as Text).text)), 'the late host');
    const mine = receiver.accepted().map((r) => (r.body as Text).text).filter((t) => t.includes(rule.body.name as string));
    expect(mine).toEqual([expect.stringMatching(/1 of 2 hosts finished \(1 still running\)$/), expect.stringMatching(/failed on 1 of 2 hosts$/)]);
  });

  it('delivers what was recorded while no notifier ran, once one starts again', async () => {
    const receiver = await startReceiver(slackShape);
    const host = await env.enrol('restart-1');
    const channel = await createChannel(env, { name: 'restart', type: 'slack', config: { webhookUrl: receiver.url } });
    const rule = await env.createWebhookRule();
    const { executionIds: [id] } = (await env.webhook(rule.triggerId, { HostName: 'restart-1' })).json();
    await env.app.context.notifier.stop();
    try {
      await finish(env, id, host.hostId, { exitCode: 0 });
      // The result and the duty to report it were committed together.
      expect(await env.store.db.selectFrom('notify_pending').select('execution_id').where('execution_id', '=', id).execute()).toEqual([{ execution_id: id }]);
      expect(receiver.requests).toEqual([]);
      const next = await startTestEnv(dialect, { database: env.database });
      try {
        await waitDelivered(next, channel.id);
        expect(receiver.accepted()).toHaveLength(1);
      } finally {
        await next.close();
      }
    } finally {
      env.app.context.notifier.start();
    }
  });

  it('builds no message for a tenant without a channel that could hear it', async () => {
    const t = await env.addTenant(`quiet-${dialect}`);
    await createChannel(env, { name: 'off', type: 'slack', mode: 'disabled', config: { webhookUrl: 'https://h.example.com/x' } }, t.token);
    const host = await env.enrol('quiet-1', [], t.tenantId);
    const rule = await env.createWebhookRule({}, t.token);
    const { eventId, executionIds: [id] } = (await env.webhook(rule.triggerId, { HostName: 'quiet-1' }, { apiKey: t.apiKey })).json();
    await finish(env, id, host.hostId, { exitCode: 0 });
    await waitFor(async () => (await env.store.db.selectFrom('notify_pending').select('execution_id').where('execution_id', '=', id).execute()).length === 0, 'the pending row to go');
    expect(await env.store.db.selectFrom('notify_messages').select('id').where('dedupe_key', 'like', `run:${eventId}:%`).execute()).toEqual([]);
  });

  it('sends again a delivery whose node died mid-send (its lease ran out)', async () => {
    const receiver = await startReceiver(slackShape);
    const host = await env.enrol('lease-1');
    const channel = await createChannel(env, { name: 'lease', type: 'slack', config: { webhookUrl: receiver.url } });
    const rule = await env.createWebhookRule();
    const { executionIds: [id] } = (await env.webhook(rule.triggerId, { HostName: 'lease-1' })).json();
    await env.app.context.notifier.stop();
    try {
      await finish(env, id, host.hostId, { exitCode: 0 });
      // Another node claimed it, then died: its lease ended a moment ago.
      await new RunCollector(env.store.db, { links: new UiLinks(undefined), key: Buffer.alloc(32), seconds: 600 }, 0, (spec) => new ActionKinds().describe(spec)).collect();
      await env.store.db.updateTable('notify_deliveries').set({ state: 'sending', lease_owner: 'dead-node', lease_until: Date.now() - 1 }).where('channel_id', '=', channel.id).execute();
    } finally {
      env.app.context.notifier.start();
    }
    await waitDelivered(env, channel.id);
    expect(receiver.accepted()).toHaveLength(1);
  });
});
