import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

describe.each(testDialects())('flapping protection on %s', (dialect) => {
  let env: TestEnv;
  let now = Date.now();

  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => now });
    await env.enrol('flap-1');
    await env.enrol('flap-2');
  });
  afterAll(() => env.close());

  const flapping = (settings: Record<string, unknown>) => env.createWebhookRule({ flapping: { enabled: true, ...settings } });
  const fire = async (triggerId: string, body: Record<string, unknown> = { HostName: 'flap-1' }) => {
    const reply = await env.webhook(triggerId, body);
    expect(reply.statusCode).toBe(202);
    return reply.json() as { eventId: string; outcome: string; reason: string | null; executionIds: string[] };
  };
  const advance = (seconds: number) => (now += seconds * 1000);

  it('suppresses a (rule, host) that fires more than maxEvents times in the window, holds it until quiet for the cool-down, then recovers', async () => {
    const rule = await flapping({ maxEvents: 3, windowSeconds: 60, cooldownSeconds: 120 });
    for (let i = 0; i < 3; i += 1) expect((await fire(rule.triggerId)).outcome).toBe('accepted');
    const suppressed = await fire(rule.triggerId);
    expect(suppressed).toMatchObject({ outcome: 'flapping', executionIds: [] });
    expect(suppressed.reason).toMatch(/more than 3 alarms for host flap-1 within 60 s \(maxEvents\); actions resume once host flap-1 has been quiet for 120 s/);
    const stored = (await env.api('GET', `/api/v1/events/${suppressed.eventId}`)).json();
    expect(stored).toMatchObject({ outcome: 'flapping', reason: suppressed.reason });

    // Another host of the same rule is judged on its own.
    expect((await fire(rule.triggerId, { HostName: 'flap-2' })).outcome).toBe('accepted');

    // Past the window but not quiet for the cool-down: still suppressed, and each alarm restarts the quiet time.
    advance(100);
    expect((await fire(rule.triggerId)).reason).toMatch(/still flapping: the previous alarm for host flap-1 came 100 s ago/);
    advance(119);
    expect((await fire(rule.triggerId)).outcome).toBe('flapping');
    // Quiet for the whole cool-down: actions resume.
    advance(120);
    const recovered = await fire(rule.triggerId);
    expect(recovered).toMatchObject({ outcome: 'accepted', executionIds: [expect.any(String)] });

    const events = (await env.api('GET', `/api/v1/rules/${rule.id}/events?outcome=flapping`)).json().items;
    expect(events).toHaveLength(3);
  });

  it('detects state flapping when the payload says firing and resolved', async () => {
    const rule = await flapping({ maxEvents: 100, windowSeconds: 600, cooldownSeconds: 60, maxStateChanges: 2 });
    const states = ['firing', 'resolved', 'firing'];
    for (const State of states) expect((await fire(rule.triggerId, { HostName: 'flap-1', State })).outcome).toBe('accepted');
    // Alertmanager's `status` counts too: the third change within the window is one too many.
    const flapped = await fire(rule.triggerId, { HostName: 'flap-1', status: 'resolved' });
    expect(flapped.outcome).toBe('flapping');
    expect(flapped.reason).toMatch(/host flap-1 changed between firing and resolved more than twice within 600 s \(maxStateChanges\)/);
    // Quiet for the cool-down is not enough while the window still holds too many changes.
    advance(61);
    expect((await fire(rule.triggerId, { HostName: 'flap-1' })).outcome).toBe('flapping');
  });

  it('records every alarm when flapping protection is off (the default)', async () => {
    const rule = await env.createWebhookRule();
    const replies = await Promise.all(Array.from({ length: 20 }, () => fire(rule.triggerId)));
    expect(replies.every((r) => r.outcome === 'accepted')).toBe(true);
  });

  it('is settable on an existing rule, and a storm in one batch is judged event by event', async () => {
    const rule = await env.createWebhookRule();
    const patched = await env.api('PATCH', `/api/v1/rules/${rule.id}`, { flapping: { enabled: true, maxEvents: 5, windowSeconds: 300 } });
    expect(patched.json().flapping).toEqual({ enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 });
    const replies = await Promise.all(Array.from({ length: 50 }, () => fire(rule.triggerId)));
    const counts = replies.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.outcome]: (acc[r.outcome] ?? 0) + 1 }), {});
    expect(counts).toEqual({ accepted: 5, flapping: 45 });
  });
});
