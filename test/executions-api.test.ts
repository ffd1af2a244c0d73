import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAuthenticator } from '../src/hosts/repository.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

// Executions and hosts through the API, without agent processes: the hosts are enrolled but
// offline, which is exactly when work must wait, expire, or be cancelled before it ran.
describe.each(testDialects())('executions and hosts API on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { executionExpirySeconds: 1 });
    await env.enrol('web-1', ['web', 'eu']);
    await env.enrol('web-2', ['web']);
  });
  afterAll(() => env.close());

  async function fire(overrides: Record<string, unknown> = {}, body: Record<string, unknown> = { HostName: 'web-1' }) {
    const rule = await env.createWebhookRule(overrides);
    const reply = (await env.webhook(rule.triggerId, body)).json();
    return { rule, ids: reply.executionIds as string[] };
  }
  const get = async (id: string) => (await env.api('GET', `/api/v1/executions/${id}`)).json();

  it('queues work for an offline host, then expires it with the reason when no agent comes', async () => {
    const { rule, ids: [id] } = await fire();
    const queued = await get(id!);
    expect(queued).toMatchObject({ ruleId: rule.id, hostname: 'web-1', state: 'queued', interpreter: 'sh', timeoutSeconds: 300, startedAt: null });
    const expired = await waitFor(async () => {
      const e = await get(id!);
      return e.state === 'expired' ? e : undefined;
    }, 'the execution to expire');
    expect(expired.reason).toMatch(/no agent of its host connected .* it never ran/);
    expect(expired.transitions.map((t: { to: string }) => t.to)).toEqual(['queued', 'expired']);
    expect(expired.finishedAt).not.toBeNull();
  });

  it('cancels queued work at once, and refuses to cancel what already ended', async () => {
    const { ids: [id] } = await fire();
    const cancelled = await env.api('POST', `/api/v1/executions/${id}/cancel`);
    expect(cancelled.statusCode).toBe(202);
    expect(cancelled.json()).toMatchObject({ state: 'cancelled', reason: 'cancelled before it reached the host' });
    const again = await env.api('POST', `/api/v1/executions/${id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toMatch(/already ended \(cancelled\)/);
  });

  it('lists executions newest first with filters, and the event names its executions', async () => {
    const { rule, ids } = await fire({ target: { type: 'specific_tags', tags: ['web'] } }, {});
    expect(ids).toHaveLength(2);
    const byRule = (await env.api('GET', `/api/v1/executions?ruleId=${rule.id}`)).json().items;
    expect(byRule.map((e: { id: string }) => e.id)).toEqual([...ids].sort().reverse());
    const byHost = (await env.api('GET', `/api/v1/executions?ruleId=${rule.id}&hostname=web-2`)).json().items;
    expect(byHost.map((e: { hostname: string }) => e.hostname)).toEqual(['web-2']);
    const eventId = byRule[0].eventId;
    expect((await env.api('GET', `/api/v1/events/${eventId}`)).json().executionIds.sort()).toEqual([...ids].sort());
    const queued = (await env.api('GET', `/api/v1/executions?ruleId=${rule.id}&state=queued`)).json().items;
    expect(queued).toHaveLength(2);
    expect((await env.api('GET', '/api/v1/executions?state=finished')).statusCode).toBe(400);
  });

  it('keeps executions and hosts to their tenant', async () => {
    const { ids: [id] } = await fire();
    const other = await env.addTenant(`exec-other-${dialect}`);
    expect((await env.api('GET', `/api/v1/executions/${id}`, undefined, other.token)).statusCode).toBe(404);
    expect((await env.api('POST', `/api/v1/executions/${id}/cancel`, undefined, other.token)).statusCode).toBe(404);
    expect((await env.api('GET', '/api/v1/executions', undefined, other.token)).json().items).toEqual([]);
    expect((await env.api('GET', '/api/v1/hosts', undefined, other.token)).json().items).toEqual([]);
    // A host of the same name in another tenant is another host: no cross-tenant targeting.
    const otherRule = await env.createWebhookRule({}, other.token);
    expect((await env.webhook(otherRule.triggerId, { HostName: 'web-1' }, { apiKey: other.apiKey })).json().outcome).toBe('no_target');
  });

  it('shows hosts with their tags, adds tags managed in pitcrew, and forgets a host', async () => {
    const hosts = (await env.api('GET', '/api/v1/hosts')).json().items;
    const web1 = hosts.find((h: { hostname: string }) => h.hostname === 'web-1');
    expect(web1).toMatchObject({ status: 'offline', tags: ['eu', 'web'], agentTags: ['eu', 'web'], managedTags: [], agentVersion: 'test' });

    const patched = await env.api('PATCH', `/api/v1/hosts/${web1.id}`, { tags: ['payments', 'eu'] });
    expect(patched.json()).toMatchObject({ tags: ['eu', 'payments', 'web'], managedTags: ['eu', 'payments'] });
    expect((await env.api('GET', '/api/v1/hosts?tag=payments')).json().items.map((h: { hostname: string }) => h.hostname)).toEqual(['web-1']);
    const tagged = await fire({ target: { type: 'specific_tags', tags: ['payments'] } }, {});
    expect(tagged.ids).toHaveLength(1);
    expect((await env.api('PATCH', `/api/v1/hosts/${web1.id}`, { tags: ['bad tag!'] })).statusCode).toBe(400);

    const doomed = await env.enrol('doomed-1');
    expect(await agentAuthenticator(env.store.db)(doomed.token)).toBeDefined();
    expect((await env.api('DELETE', `/api/v1/hosts/${doomed.hostId}`)).statusCode).toBe(204);
    expect((await env.api('GET', `/api/v1/hosts/${doomed.hostId}`)).statusCode).toBe(404);
    expect(await agentAuthenticator(env.store.db)(doomed.token)).toBeUndefined();
    const rule = await env.createWebhookRule();
    expect((await env.webhook(rule.triggerId, { HostName: 'doomed-1' })).json().outcome).toBe('no_target');
  });

  it('finds the hosts carrying every tag of a set, counts them, and lists the tags in use', async () => {
    const t = await env.addTenant(`tags-${dialect}`);
    await env.enrol('tag-a', ['web', 'eu'], t.tenantId);
    await env.enrol('tag-b', ['web', 'us'], t.tenantId);
    await env.enrol('tag-c', ['db', 'eu'], t.tenantId);
    const as = (url: string) => env.api('GET', url, undefined, t.token);
    const hostnames = async (query: string) => (await as(`/api/v1/hosts?${query}`)).json().items.map((h: { hostname: string }) => h.hostname);

    expect(await hostnames('tag=web')).toEqual(['tag-a', 'tag-b']);
    expect(await hostnames('tag=web&tag=eu')).toEqual(['tag-a']);
    expect(await hostnames('tag=web&tag=db')).toEqual([]);
    expect((await as('/api/v1/hosts/count?tag=eu')).json()).toEqual({ count: 2, online: 0 });
    expect((await as('/api/v1/hosts/count?tag=web&tag=eu')).json()).toEqual({ count: 1, online: 0 });
    expect((await as('/api/v1/hosts/count')).json()).toEqual({ count: 3, online: 0 });
    expect((await as('/api/v1/hosts/count?tag=bad%20tag')).statusCode).toBe(400);
    // The count is the number of executions a specific_tags rule would queue.
    const rule = await env.createWebhookRule({ target: { type: 'specific_tags', tags: ['web', 'eu'] } }, t.token);
    expect((await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey })).json().executionIds).toHaveLength(1);

    expect((await as('/api/v1/hosts/tags')).json().items).toEqual([
      { tag: 'db', hosts: 1 }, { tag: 'eu', hosts: 2 }, { tag: 'us', hosts: 1 }, { tag: 'web', hosts: 2 },
    ]);
    expect((await env.api('GET', '/api/v1/hosts/tags', undefined, (await env.addTenant(`tags-none-${dialect}`)).token)).json().items).toEqual([]);
  });
});

// A running execution whose host went away for good (a terminated VM): nothing will ever report
// it, so once its timeout and a grace have passed the sweeper ends it lost.
describe.each(testDialects())('an execution whose agent never reports on %s', (dialect) => {
  let env: TestEnv;
  let skewMs = 0;
  beforeAll(async () => {
    env = await startTestEnv(dialect, { clock: () => Date.now() + skewMs, sweepIntervalMs: 50 });
  });
  afterAll(() => env.close());

  it('ends lost, with the reason, once its timeout and the grace after it have passed', async () => {
    const { hostId } = await env.enrol('gone-1');
    const rule = await env.createWebhookRule({ target: { type: 'specific_host', hostname: 'gone-1' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'sleep 30' }, timeoutSeconds: 30 } });
    const [id] = (await env.webhook(rule.triggerId, {})).json().executionIds as string[];
    // As an agent would: it takes the execution and starts it, then its host disappears.
    const { ledger } = env.app.context;
    expect(await ledger.claim(hostId, [id!], { sessionId: 'session-1', nodeId: 'node-1' })).toHaveLength(1);
    expect(await ledger.started(hostId, id!, Date.now())).toBe(true);

    skewMs = 30_000 + 5 * 60_000 + 61_000;
    const lost = await waitFor(async () => {
      const e = (await env.api('GET', `/api/v1/executions/${id}`)).json();
      return e.state === 'lost' ? e : undefined;
    }, 'the execution to be ended lost');
    expect(lost.reason).toBe("no result from the agent 5 min after the script's 30 s timeout ran out: the host or its agent is probably down. It was not re-run; a result the agent sends later is kept as lateResult");
    expect(lost.transitions.map((t: { to: string }) => t.to)).toEqual(['queued', 'dispatched', 'running', 'lost']);
  });

  it('ends lost too when its agent, still connected, never started it', async () => {
    const { hostId } = await env.enrol('stuck-1');
    const rule = await env.createWebhookRule({ target: { type: 'specific_host', hostname: 'stuck-1' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' }, timeoutSeconds: 30 } });
    const [id] = (await env.webhook(rule.triggerId, {})).json().executionIds as string[];
    // Taken by the agent's connection, which stays up; the agent never starts it (its disk hangs).
    expect(await env.app.context.ledger.claim(hostId, [id!], { sessionId: 'session-2', nodeId: 'node-1' })).toHaveLength(1);

    skewMs += 30_000 + 5 * 60_000 + 61_000;
    const lost = await waitFor(async () => {
      const e = (await env.api('GET', `/api/v1/executions/${id}`)).json();
      return e.state === 'lost' ? e : undefined;
    }, 'the execution to be ended lost');
    expect(lost.reason).toMatch(/^the agent was sent it and never said it started, 5 min after the script's 30 s timeout ran out/);
    expect(lost.transitions.map((t: { to: string }) => t.to)).toEqual(['queued', 'dispatched', 'lost']);
  });
});

