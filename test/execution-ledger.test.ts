import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../src/agents/protocol.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

// The ledger's commits as an agent's reports reach it, without agent processes (the host is
// enrolled, offline; the test reports for it).
describe.each(testDialects())('the execution ledger on %s', (dialect) => {
  let env: TestEnv;
  let hostId: string;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    hostId = (await env.enrol('web-1')).hostId;
  });
  afterAll(() => env.close());

  /** A queued execution for web-1, claimed as an agent session would. */
  async function dispatched(): Promise<string> {
    const rule = await env.createWebhookRule();
    const [id] = (await env.webhook(rule.triggerId, { HostName: 'web-1' })).json().executionIds as string[];
    await env.app.context.ledger.claim(hostId, [id!], { sessionId: 'test-session', nodeId: 'test-node' });
    return id!;
  }

  const transitions = (id: string) => env.store.db.selectFrom('execution_transitions').select(['from_state', 'to_state', 'at']).where('execution_id', '=', id).orderBy('id').execute();

  const result = (executionId: string, at: number): ExecutionResult => ({
    executionId, ending: 'exited', exitCode: 0, signal: null, reason: null, startedAt: at, finishedAt: at + 2,
    stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, artifacts: [], artifactsTruncated: false,
  });

  it('commits a start that may wait together with the result that follows it: one transaction', async () => {
    const { ledger } = env.app.context;
    const id = await dispatched();
    const now = Date.now();
    const started = ledger.started(hostId, id, now, 60_000);
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect((await transitions(id)).map((t) => t.to_state)).toEqual(['queued', 'dispatched']);
    expect(await ledger.result(hostId, result(id, now))).toBeDefined();
    expect(await started).toBe(true);
    const [, , running, succeeded] = await transitions(id);
    expect([running!.to_state, succeeded!.to_state]).toEqual(['running', 'succeeded']);
    expect(succeeded!.at).toBe(running!.at);
  });

  it('commits a start alone once its wait is over', async () => {
    const id = await dispatched();
    expect(await env.app.context.ledger.started(hostId, id, Date.now(), 20)).toBe(true);
    expect((await transitions(id)).map((t) => t.to_state)).toEqual(['queued', 'dispatched', 'running']);
  });
});
