import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel, finish } from './support/notify.js';
import { slackShape } from './support/platforms.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

// The notifier's loop under a stream of wake-ups (every ledger batch that ends executions wakes it).
describe("the notifier's loop", () => {
  const SPACING_MS = 300;
  let env: TestEnv;
  const passes: Array<{ start: number; end: number }> = [];

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { notify: { pollMs: 60_000, passSpacingMs: SPACING_MS } });
    const notifier = env.app.context.notifier;
    const pass = notifier.pass.bind(notifier);
    vi.spyOn(notifier, 'pass').mockImplementation(async () => {
      const record = { start: performance.now(), end: Number.NaN };
      passes.push(record);
      await pass();
      record.end = performance.now();
    });
  });
  afterAll(() => env.close());

  it('spaces its passes: wake-ups in between share the next pass', async () => {
    const notifier = env.app.context.notifier;
    notifier.wake();
    await waitFor(() => passes.length > 0 && !Number.isNaN(passes.at(-1)!.end), 'a first pass');
    const before = passes.length;
    for (let i = 0; i < 20; i += 1) notifier.wake();
    await waitFor(() => passes.length > before && !Number.isNaN(passes.at(-1)!.end), 'the pass the wake-ups asked for');
    const [previous, next] = [passes[before - 1]!, passes[before]!];
    expect(next.start - previous.end).toBeGreaterThanOrEqual(SPACING_MS - 1);
  });
});

// Ended executions wake the loop only when they gave it something to do: a pending row, written
// for a tenant with a channel that could hear the result. Long poll: only a wake-up can run a pass.
describe.each(testDialects())('what wakes the notifier on %s', (dialect) => {
  let env: TestEnv;
  let receiver: Receiver;
  let wakes = 0;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { notify: { pollMs: 60_000, passSpacingMs: 0 } });
    receiver = await startReceiver(slackShape);
    const notifier = env.app.context.notifier;
    const wake = notifier.wake.bind(notifier);
    vi.spyOn(notifier, 'wake').mockImplementation(() => {
      wakes += 1;
      wake();
    });
  });
  afterAll(async () => {
    await env.close();
    await receiver.close();
  });

  async function endOne(name: string, withChannel: boolean): Promise<void> {
    const t = await env.addTenant(`${name}-${dialect}`);
    const { hostId } = await env.enrol('web-1', [], t.tenantId);
    if (withChannel) await createChannel(env, { name: 'ops', type: 'slack', mode: 'all', config: { webhookUrl: `${receiver.url}/hooks/T000/B000/${name}` } }, t.token);
    const rule = await env.createWebhookRule({}, t.token);
    const [id] = (await env.webhook(rule.triggerId, { HostName: 'web-1' }, { apiKey: t.apiKey })).json().executionIds as string[];
    await finish(env, id!, hostId, { exitCode: 0 });
  }

  it('not for a tenant without a channel: nobody could hear the result', async () => {
    const before = wakes;
    await endOne('unheard', false);
    expect(wakes).toBe(before);
  });

  it('at once for a tenant with a channel: the result is sent without waiting for the poll', async () => {
    const before = wakes;
    await endOne('heard', true);
    expect(wakes).toBeGreaterThan(before);
    await waitFor(() => receiver.accepted().length === 1, 'the result message');
  });
});
