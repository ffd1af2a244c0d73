import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

/*
 * Issue 19: a host's cloud instance id, which cloud actions act on when an alert names the host,
 * is reported by its agent (--cloud-instance-id, or read from the firmware on EC2 and OpenStack:
 * agent/cloud-instance.ts) in its hello. An agent that reports none leaves the one set through the
 * API alone.
 */
describe.each(testDialects())('the cloud instance id an agent reports, on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
  });
  afterAll(() => env.close());

  const hostOf = async (hostname: string) => (await env.api('GET', '/api/v1/hosts')).json().items.find((h: { hostname: string }) => h.hostname === hostname) as { id: string; cloudInstanceId: string | null };

  it('takes the id a real agent reports, and keeps the API one when a later agent reports none', async () => {
    const options = { server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'ec2-web-1', fingerprint: env.listening!.fingerprint };
    const agent = spawnAgent({ ...options, args: ['--cloud-instance-id', 'i-0123456789abcdef0'] });
    try {
      await waitOnline(env.api, 'ec2-web-1');
      await waitFor(async () => (await hostOf('ec2-web-1')).cloudInstanceId === 'i-0123456789abcdef0', 'the reported instance id', 10_000);
    } finally {
      await agent.stop();
    }
    const host = await hostOf('ec2-web-1');
    expect((await env.api('PATCH', `/api/v1/hosts/${host.id}`, { cloudInstanceId: 'i-0fedcba9876543210' })).statusCode).toBe(200);
    // The same host's agent again, told nothing (this machine's firmware names no cloud instance).
    const again = spawnAgent({ ...options, stateDir: agent.stateDir });
    try {
      await waitFor(async () => (await env.api('GET', '/api/v1/hosts')).json().items.some((h: { hostname: string; status: string; lastSeenAt: string }) => h.hostname === 'ec2-web-1' && h.status === 'online'), 'the agent back online', 20_000);
      await waitFor(() => again.output().includes('connected to the service'), 'the welcome', 10_000);
      expect((await hostOf('ec2-web-1')).cloudInstanceId).toBe('i-0fedcba9876543210');
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('refuses a malformed id on the command line before connecting', async () => {
    const agent = spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'bad-1', fingerprint: env.listening!.fingerprint, args: ['--cloud-instance-id', 'i-0 ; rm -rf /'] });
    expect(await agent.exited).not.toBe(0);
    expect(agent.output()).toContain('--cloud-instance-id "i-0 ; rm -rf /" is not an instance id');
  });
});
