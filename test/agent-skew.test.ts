import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../agent/version.js';
import { RELEASE_VERSION, isOutdated } from '../src/hosts/agent-version.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { buildPreviousRelease, type PreviousBuild } from './support/previous-release.js';
import { waitFor } from './support/wait.js';

// Issue 40: agents are updated after the service, so an agent one release behind keeps working
// against it, and the hosts API says which agents are behind and how to update them.
describe('an agent of the previous release against this service', () => {
  let env: TestEnv;
  let previous: PreviousBuild;
  let agent: AgentProcess;

  beforeAll(async () => {
    previous = await buildPreviousRelease();
    env = await startTestEnv('sqlite', { listen: true });
    agent = spawnAgent({ bundle: previous.agentBundle, server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'behind-1', fingerprint: env.listening!.fingerprint });
    await waitOnline(env.api, 'behind-1');
  }, 600_000);
  afterAll(async () => {
    await agent?.stop();
    await env?.close();
  });

  const host = async (hostname: string) => (await env.api('GET', `/api/v1/hosts?hostname=${hostname}`)).json().items[0];

  it('enrols, says its release, and is marked outdated: the previous release is older than the service', async () => {
    // A release bumps the version (docs/operations.md "Releasing"): the previous one is always behind.
    expect(isOutdated(previous.version, RELEASE_VERSION)).toBe(true);
    expect(await host('behind-1')).toMatchObject({ status: 'online', agentVersion: previous.version, outdated: true });
  });

  it('runs a job: the script gets the payload, its output and exit code come back', async () => {
    const rule = await env.createWebhookRule({ action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'echo "disk on $HostName: $Mount"; exit 3' } } });
    const reply = (await env.webhook(rule.triggerId, { HostName: 'behind-1', Mount: '/var' })).json();
    expect(reply.outcome).toBe('accepted');
    const done = await waitFor(async () => {
      const execution = (await env.api('GET', `/api/v1/executions/${reply.executionIds[0]}`)).json();
      return execution.state === 'failed' ? execution : undefined;
    }, 'the job to end on the previous release\'s agent');
    expect(done).toMatchObject({ hostname: 'behind-1', exitCode: 3, stdout: 'disk on behind-1: /var\n' });
  });

  it('marks an agent of an older release outdated, with the command that updates it; a current one is not', async () => {
    const enrol = (hostname: string, version: string) => env.app.server.inject({
      method: 'POST', url: '/api/v1/agents/enrol',
      headers: { authorization: `Bearer ${env.tenant.apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ hostname, tags: [], os: 'Linux test', arch: 'x64', version }),
    });
    expect((await enrol('old-release-1', '0.0.9')).statusCode).toBe(201);
    expect((await enrol('this-release-1', AGENT_VERSION)).statusCode).toBe(201);
    expect(await host('old-release-1')).toMatchObject({ agentVersion: '0.0.9', outdated: true });
    expect(await host('this-release-1')).toMatchObject({ agentVersion: AGENT_VERSION, outdated: false });

    const install = (await env.api('GET', '/api/v1/agents/install')).json();
    expect(install.version).toBe(RELEASE_VERSION);
    // The download checked against its digest, as a first install does (test/agent-install.test.ts
    // runs that part), then the file put where docs/agent.md installs it and the unit restarted.
    expect(install.update).toBe(`${install.install} && sudo install -m 0755 pitcrew-agent.mjs /opt/pitcrew-agent/ && sudo systemctl restart pitcrew-agent`);
  });
});
