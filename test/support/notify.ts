import type { TestEnv } from './app.js';
import { waitFor } from './wait.js';

/** Ends an execution the way its agent would report it, through the real ledger (no agent process). */
export async function finish(env: TestEnv, executionId: string, hostId: string, result: { exitCode: number; stdout?: string; stderr?: string }): Promise<void> {
  const { ledger } = env.app.context;
  await ledger.claim(hostId, [executionId], { sessionId: 'test-session', nodeId: 'test-node' });
  const now = Date.now();
  await ledger.result(hostId, {
    executionId, ending: 'exited', exitCode: result.exitCode, signal: null, reason: null, startedAt: now - 1500, finishedAt: now,
    stdout: result.stdout ?? '', stderr: result.stderr ?? '', stdoutTruncated: false, stderrTruncated: false, artifacts: [], artifactsTruncated: false,
  });
}

export async function createChannel(env: TestEnv, body: Record<string, unknown>, token?: string): Promise<{ id: string; body: Record<string, unknown> }> {
  const response = await env.api('POST', '/api/v1/channels', body, token);
  if (response.statusCode !== 201) throw new Error(`channel not created: ${response.body}`);
  return { id: response.json().id, body: response.json() };
}

export interface AttemptView {
  ok: boolean;
  attempt: number;
  status: string | null;
  error: string | null;
  kind: string;
  deliveryId: string | null;
}

export async function attemptsOf(env: TestEnv, channelId: string, token?: string): Promise<AttemptView[]> {
  const response = await env.api('GET', `/api/v1/channels/${channelId}/attempts?limit=1000`, undefined, token);
  if (response.statusCode !== 200) throw new Error(`attempts of ${channelId}: ${response.body}`);
  return response.json().items;
}

/** Waits until the channel has `count` successful attempts (deliveries made). */
export function waitDelivered(env: TestEnv, channelId: string, count = 1, token?: string): Promise<AttemptView[]> {
  return waitFor(async () => {
    const attempts = await attemptsOf(env, channelId, token);
    return attempts.filter((a) => a.ok).length >= count ? attempts : undefined;
  }, `${count} delivery(ies) on channel ${channelId}`);
}

/** Waits until the execution reaches `state`. */
export function waitState(env: TestEnv, executionId: string, state: string, timeoutMs?: number): Promise<Record<string, unknown>> {
  return waitFor(async () => {
    const execution = (await env.api('GET', `/api/v1/executions/${executionId}`)).json();
    return execution.state === state ? execution : undefined;
  }, `execution ${executionId} ${state}`, timeoutMs);
}
