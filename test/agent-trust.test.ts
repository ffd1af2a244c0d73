import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../src/agents/protocol.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { connectRawAgent, spawnAgent, waitOnline, type AgentProcess, type RawAgent } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { createChannel, waitDelivered } from './support/notify.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { waitFor } from './support/wait.js';

// A host's agent is trusted with its own host's executions and nothing else (docs/security.md).
// A hostile agent, enrolled for real and speaking the real protocol, names the executions of
// other hosts, of its own tenant and of another, in every message that carries an execution id.
// On PostgreSQL the service is two nodes: the hostile agent and the other tenant's hosts on
// node B, its own tenant's other hosts on node A, so the cross-node paths are crossed too.

type Kind = 'hello.running' | 'hello.interrupted' | 'hello.finished' | 'started' | 'output' | 'finished';
const KINDS: Kind[] = ['hello.running', 'hello.interrupted', 'hello.finished', 'started', 'output', 'finished'];
const FORGED = 'forged-by-the-rogue';

interface Victims {
  /** Run by a real agent, held running until the test opens the gate. */
  running: string;
  /** Sent to a hand-written agent that has not started it yet. */
  dispatched: string;
}

interface TenantSide {
  env: TestEnv;
  token: string;
  apiKey: string;
  tenantId: string;
  channelId: string;
  victims: Victims;
  held: RawAgent;
}

describe.each(testDialects())('an agent changes only its own host’s executions, on %s', (dialect) => {
  let home: TestEnv;
  let away: TestEnv;
  let receiver: Receiver;
  let rogue: { hostId: string; token: string };
  let gate: string;
  const agents: AgentProcess[] = [];
  const sides = {} as Record<'sameTenant' | 'otherTenant', TenantSide>;
  const streams: Array<Promise<string>> = [];

  beforeAll(async () => {
    home = await startTestEnv(dialect, { listen: true });
    away = dialect === 'postgres' ? await startTestEnv('postgres', { listen: true, database: home.database }) : home;
    receiver = await startReceiver();
    gate = path.join(home.database.dataDir, 'victims.go');
    const other = await home.addTenant('other');
    sides.sameTenant = await victimsOf(home, { ...home.tenant }, 'same');
    sides.otherTenant = await victimsOf(away, other, 'other');
    // The hostile host belongs to the first tenant; its agent connects to node B.
    rogue = await home.enrol('rogue-1');
    // Live output of every victim, watched on the hostile agent's node.
    for (const side of Object.values(sides)) {
      for (const id of Object.values(side.victims)) {
        const response = await fetch(`${away.listening!.httpUrl}/api/v1/executions/${id}/stream`, { headers: { authorization: `Bearer ${side.token}` } });
        streams.push(response.text());
      }
    }
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    for (const side of Object.values(sides)) await side.held.close();
    if (away !== home) await away.close();
    await home.close();
  });

  async function victimsOf(env: TestEnv, tenant: { token: string; apiKey: string; tenantId: string }, prefix: string): Promise<TenantSide> {
    const channel = await createChannel(env, { name: `all-${prefix}`, type: 'webhook', mode: 'all', config: { url: `${receiver.url}/${prefix}`, secret: 'a-secret-of-16-chars-or-more' } }, tenant.token);
    const fire = async (hostname: string, script: string) => {
      const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'autofix', runbook: { script } } }, tenant.token);
      const reply = await env.webhook(rule.triggerId, { HostName: hostname }, { apiKey: tenant.apiKey });
      expect(reply.json().outcome).toBe('accepted');
      return reply.json().executionIds[0] as string;
    };
    agents.push(spawnAgent({ server: env.listening!.httpsUrl, apiKey: tenant.apiKey, hostname: `${prefix}-runs`, fingerprint: env.listening!.fingerprint }));
    await waitOnline((method, url) => env.api(method, url, undefined, tenant.token), `${prefix}-runs`);
    const running = await fire(`${prefix}-runs`, `echo real output; while [ ! -e ${gate} ]; do sleep 0.05; done; echo real end`);
    await waitFor(async () => (await env.api('GET', `/api/v1/executions/${running}`, undefined, tenant.token)).json().state === 'running', 'the victim to run');
    const heldHost = await env.enrol(`${prefix}-holds`, [], tenant.tenantId);
    const held = await connectRawAgent(env.listening!.httpsUrl, heldHost.token, `${prefix}-holds`);
    await held.hello();
    const dispatched = await fire(`${prefix}-holds`, 'echo held');
    expect((await held.next('execute')).executionId).toBe(dispatched);
    return { env, ...tenant, channelId: channel.id, victims: { running, dispatched }, held };
  }

  const victimIds = () => Object.values(sides).flatMap((side) => Object.values(side.victims));

  /** Everything an agent's message could change about executions, hosts and notifications. */
  async function world() {
    const { db } = home.store;
    const hosts = await db.selectFrom('hosts').selectAll().where('id', '<>', rogue.hostId).orderBy('id').execute();
    return {
      executions: await db.selectFrom('executions').selectAll().orderBy('id').execute(),
      transitions: await db.selectFrom('execution_transitions').selectAll().orderBy('id').execute(),
      artifacts: await db.selectFrom('execution_artifacts').selectAll().orderBy('id').execute(),
      // Last-seen times move with every heartbeat of the real agents.
      hosts: hosts.map(({ last_seen_at: _, ...host }) => host),
      pending: await db.selectFrom('notify_pending').selectAll().orderBy('execution_id').execute(),
      messages: await db.selectFrom('notify_messages').selectAll().orderBy('id').execute(),
      deliveries: await db.selectFrom('notify_deliveries').selectAll().orderBy('id').execute(),
    };
  }

  /** The warning of the hostile agent's node that names its host and the execution. */
  function warned(executionId: string): boolean {
    return away.logs.some((line) => {
      const entry = JSON.parse(line) as { level: number; hostId?: string; executionId?: string; executionIds?: string[] };
      return entry.level === 40 && entry.hostId === rogue.hostId && (entry.executionId === executionId || (entry.executionIds ?? []).includes(executionId));
    });
  }

  const forgedResult = (executionId: string): ExecutionResult => ({
    executionId, ending: 'exited', exitCode: 1, signal: null, reason: FORGED, startedAt: Date.now() - 10, finishedAt: Date.now(),
    stdout: FORGED, stderr: FORGED, stdoutTruncated: false, stderrTruncated: false,
    artifacts: [{ name: `${FORGED}.txt`, base64: Buffer.from(FORGED).toString('base64') }], artifactsTruncated: false,
  });

  /** The hostile agent names `ids` in a message of `kind`; resolves once the service has dealt with it. */
  async function sendHostile(kind: Kind, ids: string[]): Promise<void> {
    const agent = await connectRawAgent(away.listening!.httpsUrl, rogue.token, 'rogue-1');
    try {
      if (kind === 'hello.running') await agent.hello({ running: ids });
      else if (kind === 'hello.interrupted') await agent.hello({ interrupted: ids.map((executionId) => ({ executionId, reason: FORGED })) });
      else if (kind === 'hello.finished') await agent.hello({ finished: ids });
      else {
        await agent.hello();
        for (const id of ids) {
          if (kind === 'started') agent.send({ type: 'started', executionId: id, startedAt: Date.now() });
          else if (kind === 'output') agent.send({ type: 'output', executionId: id, stream: 'stdout', chunk: FORGED });
          else agent.send({ type: 'finished', result: forgedResult(id) });
        }
        // A result is acknowledged once the ledger took it (or refused it), so the agent stops offering it.
        if (kind === 'finished') for (const _ of ids) await agent.next('recorded');
      }
      await waitFor(() => ids.every(warned), `a warning naming host ${rogue.hostId} and ${ids.join(', ')}`);
    } finally {
      await agent.close();
    }
  }

  describe.each(KINDS)('%s', (kind) => {
    it.each(['sameTenant', 'otherTenant'] as const)('naming the executions of another host (%s) changes nothing and is logged with the host', async (which) => {
      const before = await world();
      await sendHostile(kind, Object.values(sides[which].victims));
      expect(await world()).toEqual(before);
    });
  });

  it('no message from one agent changes any execution, host or notification of another', async () => {
    const before = await world();
    const ids = victimIds();
    const agent = await connectRawAgent(away.listening!.httpsUrl, rogue.token, 'rogue-1');
    // Before its hello nothing it says counts; then everything at once, and frames that are no message at all.
    agent.send({ type: 'finished', result: forgedResult(ids[0]!) });
    await agent.hello({ running: ids, finished: ids, interrupted: ids.map((executionId) => ({ executionId, reason: FORGED })) });
    for (const id of ids) {
      agent.send({ type: 'started', executionId: id, startedAt: Date.now() });
      agent.send({ type: 'output', executionId: id, stream: 'stderr', chunk: FORGED });
      agent.send({ type: 'finished', result: { ...forgedResult(id), ending: 'cancelled' } });
      agent.send({ type: 'execute', executionId: id });
      agent.send(`{"type":"finished","result":{"executionId":"${id}"`);
    }
    agent.send({ type: 'heartbeat', at: Date.now() });
    for (const _ of ids) await agent.next('recorded');
    await agent.close();
    expect(await world()).toEqual(before);
  });

  it('lets each victim end with its own result: not late, nothing forged in its output, stream or notification', async () => {
    fs.writeFileSync(gate, '');
    for (const side of Object.values(sides)) {
      const { held, victims } = side;
      held.send({ type: 'started', executionId: victims.dispatched, startedAt: Date.now() });
      held.send({ type: 'finished', result: { ...forgedResult(victims.dispatched), exitCode: 0, reason: null, stdout: 'held output\n', stderr: '', artifacts: [] } });
      await held.next('recorded');
    }
    for (const side of Object.values(sides)) {
      for (const id of Object.values(side.victims)) {
        const execution = await waitFor(async () => {
          const e = (await side.env.api('GET', `/api/v1/executions/${id}`, undefined, side.token)).json();
          return e.state === 'succeeded' ? e : undefined;
        }, `victim ${id} to succeed`);
        expect(execution.lateResult ?? null).toBeNull();
        expect(execution.transitions.map((t: { to: string }) => t.to)).toEqual(['queued', 'dispatched', 'running', 'succeeded']);
        expect(execution.artifacts).toEqual([]);
        expect(JSON.stringify(execution)).not.toContain(FORGED);
      }
      expect(await waitDelivered(home, side.channelId, 2, side.token)).toHaveLength(2);
    }
    const running = (await Promise.all(streams)).filter((text) => text.includes('real output'));
    expect(running).toHaveLength(2);
    for (const text of await Promise.all(streams)) expect(text).not.toContain(FORGED);
    expect(receiver.requests.map((r) => r.raw).join('\n')).not.toContain(FORGED);
  });
});
