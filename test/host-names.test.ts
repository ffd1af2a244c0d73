import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostKey } from '../src/engine/decide.js';
import * as hostKeys from '../src/store/migrations/0009_host_keys.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { spawnAgent, waitOnline, type AgentProcess } from './support/agents.js';
import { testDialects } from './support/databases.js';
import { waitFor } from './support/wait.js';

interface Execution {
  id: string;
  hostname: string;
  state: string;
  stdout: string;
}

/** Host names ignore case everywhere (docs/executions.md), and a host shows the name its agent last reported. */
describe.each(testDialects())('host names ignore case on %s', (dialect) => {
  let env: TestEnv;
  const agents: AgentProcess[] = [];
  let caseAgent: AgentProcess;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true });
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await env.close();
  });

  function startAgent(hostname: string, stateDir?: string, args?: string[]): AgentProcess {
    const { httpsUrl, fingerprint } = env.listening!;
    const agent = spawnAgent({ server: httpsUrl, apiKey: env.tenant.apiKey, hostname, fingerprint, stateDir, args });
    agents.push(agent);
    return agent;
  }

  async function fire(triggerId: string, body: Record<string, unknown>): Promise<{ outcome: string; executionIds: string[] }> {
    const response = await env.webhook(triggerId, body);
    expect(response.statusCode, response.body).toBe(202);
    return response.json();
  }

  const hostnames = async (): Promise<string[]> => (await env.api('GET', '/api/v1/hosts?limit=1000')).json().items.map((h: { hostname: string }) => h.hostname);
  const ids = async (url: string): Promise<string[]> => (await env.api('GET', url)).json().items.map((item: { id: string }) => item.id).sort();
  const succeeded = (id: string): Promise<Execution> =>
    waitFor(async () => {
      const execution: Execution = (await env.api('GET', `/api/v1/executions/${id}`)).json();
      return execution.state === 'succeeded' ? execution : undefined;
    }, `execution ${id} to succeed`);

  it('an agent enrolling as case-1 renames the host enrolled as CASE-1 and runs the work sent to CASE-1; ?hostname= finds every run in any case', async () => {
    await env.enrol('CASE-1');
    const rule = await env.createWebhookRule({ target: { type: 'trigger_host' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "on=$PITCREW_HOSTNAME"' } } });
    // Queued while the host is still called CASE-1: it keeps that name.
    const [before] = (await fire(rule.triggerId, { HostName: 'CASE-1' })).executionIds;

    // The name is taken (any case), so this machine takes the host over explicitly.
    caseAgent = startAgent('case-1', undefined, ['--replace']);
    await waitOnline(env.api, 'case-1');
    expect(await hostnames()).toEqual(['case-1']);

    const [after] = (await fire(rule.triggerId, { HostName: 'CASE-1' })).executionIds;
    expect(await succeeded(after!)).toMatchObject({ hostname: 'case-1', stdout: 'on=case-1\n' });
    expect(await succeeded(before!)).toMatchObject({ hostname: 'CASE-1', stdout: 'on=CASE-1\n' });

    for (const name of ['case-1', 'CASE-1', 'Case-1']) {
      expect(await ids(`/api/v1/executions?ruleId=${rule.id}&hostname=${name}`), name).toEqual([before!, after!].sort());
      expect((await env.api('GET', `/api/v1/hosts?hostname=${name}`)).json().items.map((h: { hostname: string }) => h.hostname), name).toEqual(['case-1']);
    }
  });

  it('an agent saying hello as Case-1 with the credential of case-1 renames the host, and keeps it', async () => {
    await caseAgent.stop();
    const again = startAgent('Case-1', caseAgent.stateDir);
    await waitFor(async () => {
      const found = (await env.api('GET', '/api/v1/hosts?hostname=case-1')).json().items[0];
      return found?.hostname === 'Case-1' && found.status === 'online' ? found : undefined;
    }, 'the host online as Case-1');
    expect(again.output()).not.toMatch(/enrolling again/);
    expect(await hostnames()).toEqual(['Case-1']);

    const rule = await env.createWebhookRule({ target: { type: 'specific_host', hostname: 'CASE-1' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'echo "on=$PITCREW_HOSTNAME"' } } });
    const [id] = (await fire(rule.triggerId, {})).executionIds;
    expect(await succeeded(id!)).toMatchObject({ hostname: 'Case-1', stdout: 'on=Case-1\n' });
  });

  it('action limits count lim-case, LIM-CASE and Lim-Case as one host; its escalation and runs are found by any of them', async () => {
    await env.enrol('Lim-Case');
    const rule = await env.createWebhookRule({ target: { type: 'trigger_host' }, actionLimit: { max: 2, windowSeconds: 3600 } });
    expect((await fire(rule.triggerId, { HostName: 'lim-case' })).outcome).toBe('accepted');
    expect((await fire(rule.triggerId, { HostName: 'LIM-CASE' })).outcome).toBe('accepted');
    expect((await fire(rule.triggerId, { HostName: 'Lim-Case' })).outcome).toBe('limited');

    const usage = (await env.api('GET', `/api/v1/rules/${rule.id}/limits`)).json();
    expect(usage.hosts).toEqual([expect.objectContaining({ hostname: 'Lim-Case', used: 2, limited: true })]);
    const escalation = usage.hosts[0].escalation.id as string;
    for (const name of ['lim-case', 'LIM-CASE']) {
      expect(await ids(`/api/v1/escalations?hostname=${name}`), name).toEqual([escalation]);
      expect(await ids(`/api/v1/rules/${rule.id}/escalations?hostname=${name}`), name).toEqual([escalation]);
      expect(await ids(`/api/v1/executions?ruleId=${rule.id}&hostname=${name}`), name).toHaveLength(2);
    }
  });

  it('an email runbook counts mail-1 and MAIL-1 as one host, and its run is found by either name', async () => {
    const rule = await env.createWebhookRule({ action: { type: 'email_runbook', runbook: { notes: 'x' } }, target: { type: 'trigger_host' }, actionLimit: { max: 1, windowSeconds: 3600 } });
    const [id] = (await fire(rule.triggerId, { HostName: 'mail-1' })).executionIds;
    expect(await fire(rule.triggerId, { HostName: 'MAIL-1' })).toMatchObject({ outcome: 'limited', executionIds: [] });
    expect(await ids(`/api/v1/executions?ruleId=${rule.id}&hostname=MAIL-1`)).toEqual([id]);
  });

  it('migration 0009 gives the executions and escalations already stored the key hostKey() gives new ones', async () => {
    await env.enrol('MIG-1');
    const limited = await env.createWebhookRule({ target: { type: 'trigger_host' }, actionLimit: { max: 1, windowSeconds: 3600 } });
    for (let i = 0; i < 2; i += 1) await fire(limited.triggerId, { HostName: 'mig-1' });
    const mailed = await env.createWebhookRule({ action: { type: 'email_runbook', runbook: { notes: 'x' } }, target: { type: 'trigger_host' } });
    // A service run keeps the name as the payload sent it: spaces, and letters DNS does not fold
    // (PostgreSQL's own lower() folds É and the Kelvin sign).
    for (const HostName of [' Web-9 ', 'ÉCOLE-\u212A']) await fire(mailed.triggerId, { HostName });
    const keys = async (table: 'executions' | 'escalations') => (await env.store.db.selectFrom(table).select(['hostname', 'host_key']).execute()).map((row) => [row.hostname, row.host_key]).sort();
    const written = { executions: await keys('executions'), escalations: await keys('escalations') };
    expect(written.executions).toEqual(expect.arrayContaining([['MIG-1', 'mig-1'], [' Web-9 ', 'web-9'], ['ÉCOLE-\u212A', 'École-\u212A']]));
    expect(written.escalations).toEqual(expect.arrayContaining([['MIG-1', 'mig-1']]));
    for (const [hostname, key] of [...written.executions, ...written.escalations]) expect(key).toBe(hostKey(hostname!));

    await hostKeys.down(env.store.db);
    await hostKeys.up(env.store.db);
    expect({ executions: await keys('executions'), escalations: await keys('escalations') }).toEqual(written);
  });
});
