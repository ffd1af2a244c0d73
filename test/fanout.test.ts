import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

interface Execution {
  id: string;
  hostname: string;
  state: string;
  reason: string | null;
  held: boolean;
  startedAt: string | null;
  finishedAt: string | null;
}

const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired'];
const FLEET = ['fan-a', 'fan-b', 'fan-c'];

describe.each(testDialects())('fan-out safety over tag targets on %s', (dialect) => {
  let env: TestEnv;
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
    const { httpsUrl, fingerprint } = env.listening!;
    for (const hostname of FLEET) agents.push(spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname, tags: ['fan'], fingerprint }));
    for (const hostname of FLEET) await waitOnline(env.api, hostname);
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await env.close();
  });

  const executions = async (ids: string[]): Promise<Execution[]> => Promise.all(ids.map(async (id) => (await env.api('GET', `/api/v1/executions/${id}`)).json()));
  const allEnded = (ids: string[]) => waitFor(async () => {
    const found = await executions(ids);
    return found.every((e) => TERMINAL.includes(e.state)) ? found : undefined;
  }, 'every execution of the fan-out to end');

  async function fanOut(script: string, target: Record<string, unknown>): Promise<string[]> {
    const rule = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['fan'], ...target }, action: { type: 'script', flavour: 'autofix', runbook: { script } } });
    const reply = await env.webhook(rule.triggerId, {});
    expect(reply.json()).toMatchObject({ outcome: 'accepted' });
    return reply.json().executionIds;
  }

  it('runs at most maxConcurrency hosts at once; the others wait their turn, then run', async () => {
    const ids = await fanOut('sleep 0.3', { maxConcurrency: 1 });
    expect(ids).toHaveLength(3);
    const [first, ...waiting] = await executions(ids);
    expect(first).toMatchObject({ hostname: 'fan-a', held: false });
    for (const e of waiting) expect(e).toMatchObject({ state: 'queued', held: true, reason: expect.stringMatching(/this fan-out runs on at most 1 host at once \(maxConcurrency\)/) });

    const ended = await allEnded(ids);
    expect(ended.map((e) => [e.hostname, e.state, e.held])).toEqual([['fan-a', 'succeeded', false], ['fan-b', 'succeeded', false], ['fan-c', 'succeeded', false]]);
    // One after the other: each started once the one before had finished.
    for (let i = 1; i < ended.length; i += 1) expect(Date.parse(ended[i]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(ended[i - 1]!.finishedAt!));
  });

  it('never exceeds maxConcurrency 2 over three hosts', async () => {
    const ended = await allEnded(await fanOut('sleep 0.3', { maxConcurrency: 2 }));
    expect(ended.every((e) => e.state === 'succeeded')).toBe(true);
    const third = ended[2]!;
    expect(Date.parse(third.startedAt!)).toBeGreaterThanOrEqual(Math.min(...ended.slice(0, 2).map((e) => Date.parse(e.finishedAt!))));
  });

  it('after maxErrors failed hosts, cancels the hosts still waiting, with the reason', async () => {
    const ended = await allEnded(await fanOut('exit 3', { maxConcurrency: 1, maxErrors: 1 }));
    expect(ended.map((e) => [e.hostname, e.state])).toEqual([['fan-a', 'failed'], ['fan-b', 'cancelled'], ['fan-c', 'cancelled']]);
    expect(ended[1]!.reason).toMatch(/cancelled before it ran: 1 host of this fan-out failed \(maxErrors 1\)/);
  });

  it('maxErrors 2 lets the second failure happen before stopping', async () => {
    const ended = await allEnded(await fanOut('exit 1', { maxConcurrency: 1, maxErrors: 2 }));
    expect(ended.map((e) => e.state)).toEqual(['failed', 'failed', 'cancelled']);
  });
});

describe.each(testDialects())('fan-out holds survive a restart on %s', (dialect) => {
  it('a slot freed after the restart releases the next held execution', async () => {
    const first = await startTestEnv(dialect);
    for (const hostname of ['idle-1', 'idle-2', 'idle-3']) await first.enrol(hostname, ['idle']);
    const rule = await first.createWebhookRule({ target: { type: 'specific_tags', tags: ['idle'], maxConcurrency: 1 } });
    const ids: string[] = (await first.webhook(rule.triggerId, {})).json().executionIds;
    await first.app.close();
    await first.store.close();

    const second = await startTestEnv(dialect, { database: first.database });
    try {
      const held = async () => Promise.all(ids.map(async (id) => (await second.api('GET', `/api/v1/executions/${id}`)).json().held));
      expect(await held()).toEqual([false, true, true]);
      expect((await second.api('POST', `/api/v1/executions/${ids[0]}/cancel`)).statusCode).toBe(202);
      await waitFor(async () => JSON.stringify(await held()) === JSON.stringify([false, false, true]), 'the next execution to be released');
      const released = (await second.api('GET', `/api/v1/executions/${ids[1]}`)).json();
      expect(released).toMatchObject({ state: 'queued', held: false, reason: null });
    } finally {
      await second.close();
      await first.database.drop();
    }
  });
});

describe.each(testDialects())('held fan-out executions and expiry on %s', (dialect) => {
  const EXPIRY_SECONDS = 1;
  let env: TestEnv;

  beforeAll(async () => {
    // The hosts are enrolled but offline: nothing ever takes the work, so only expiry ends it.
    env = await startTestEnv(dialect, { executionExpirySeconds: EXPIRY_SECONDS, sweepIntervalMs: 50 });
    for (const hostname of ['away-1', 'away-2', 'away-3']) await env.enrol(hostname, ['away']);
  });
  afterAll(() => env.close());

  const get = async (id: string): Promise<Execution & { transitions: Array<{ to: string; at: string }> }> => (await env.api('GET', `/api/v1/executions/${id}`)).json();

  it('a held execution does not expire; once released, its expiry counts from the release', async () => {
    const rule = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['away'], maxConcurrency: 1 } });
    const ids: string[] = (await env.webhook(rule.triggerId, {})).json().executionIds;
    expect(ids).toHaveLength(3);
    const [first, second, third] = ids as [string, string, string];
    expect((await Promise.all(ids.map(get))).map((e) => [e.state, e.held])).toEqual([['queued', false], ['queued', true], ['queued', true]]);

    // All three were queued together past the expiry; only the one not held expires...
    const firstExpired = await waitFor(async () => {
      const e = await get(first);
      return e.state === 'expired' ? e : undefined;
    }, 'the unheld execution to expire');
    // ...and its end frees the slot: the next one is released, its wait for an agent starting now.
    expect(await get(second)).toMatchObject({ state: 'queued', held: false, reason: null });
    expect(await get(third)).toMatchObject({ state: 'queued', held: true });

    const secondExpired = await waitFor(async () => {
      const e = await get(second);
      return e.state === 'expired' ? e : undefined;
    }, 'the released execution to expire');
    expect(Date.parse(secondExpired.finishedAt!) - Date.parse(firstExpired.finishedAt!)).toBeGreaterThanOrEqual(EXPIRY_SECONDS * 1000);
    // Held for twice the expiry by now, the last one has only just been released.
    expect(await get(third)).toMatchObject({ state: 'queued', held: false, reason: null });

    const thirdExpired = await waitFor(async () => {
      const e = await get(third);
      return e.state === 'expired' ? e : undefined;
    }, 'the last execution to expire');
    expect(Date.parse(thirdExpired.finishedAt!) - Date.parse(secondExpired.finishedAt!)).toBeGreaterThanOrEqual(EXPIRY_SECONDS * 1000);
    for (const e of [firstExpired, secondExpired, thirdExpired]) {
      expect(e.reason).toMatch(/no agent of its host connected .* it never ran/);
      expect(e.transitions.map((t) => t.to)).toEqual(['queued', 'expired']);
    }
  });
});
