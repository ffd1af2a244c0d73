import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptRule } from './support/app.js';
import { spawnAgent, type AgentProcess } from './support/agents.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * SQLite: one server process owns the data directory. A second one, started by mistake on the
 * same directory, must refuse before it touches anything: it would otherwise take the first for
 * a previous run and end its running executions lost. PostgreSQL has no such owner (a cluster).
 */
describe('one pitcrew server per SQLite data directory', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let agent: AgentProcess;
  let tenant: { apiKey: string; token: string };

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    tenant = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout);
    server = await startServer(database.env);
    agent = spawnAgent({ server: server.httpsUrl, apiKey: tenant.apiKey, hostname: 'owner-1', fingerprint: server.fingerprint });
  });
  afterAll(async () => {
    await agent.kill();
    await server.kill();
    await database.drop();
  });

  const api = async (url: string, body?: unknown) => {
    const response = await fetch(`${server.url}${url}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await response.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const until = (id: string, state: string) => waitFor(async () => {
    const execution = await api(`/api/v1/executions/${id}`);
    return execution.state === state ? execution : undefined;
  }, `execution ${state}`);

  it('refuses a second server, which leaves the first one’s running work alone', async () => {
    await waitFor(async () => (await api('/api/v1/hosts?hostname=owner-1')).items[0]?.status === 'online', 'the agent online');
    const marker = path.join(database.dataDir, 'owner-1.go');
    const rule = await api('/api/v1/rules', scriptRule({ target: { type: 'specific_host', hostname: 'owner-1' }, action: { type: 'script', flavour: 'autofix', runbook: { script: `while [ ! -e ${marker} ]; do sleep 0.1; done; echo done` } } }));
    const reply = await fetch(`${server.url}/api/v1/trigger/channel/webhook/${tenant.apiKey}/${rule.trigger.triggerId}`, { method: 'POST' });
    const [id] = ((await reply.json()) as { executionIds: string[] }).executionIds;
    await until(id!, 'running');

    const second = await runCli(['server'], { ...database.env, PORT: '0', PITCREW_TLS_PORT: '0' });
    expect(second.code).toBe(2);
    expect(second.stderr.trim()).toBe(`pitcrew: another pitcrew server is using ${database.dataDir} (it holds ${path.join(database.dataDir, 'server.lock')}); stop it first. Several server processes need PostgreSQL (DATABASE_URL)`);

    fs.writeFileSync(marker, '');
    expect((await until(id!, 'succeeded')).stdout).toBe('done\n');
  });

  it('frees the directory when its server dies, kill -9 included', async () => {
    const ports = { PORT: new URL(server.url).port, PITCREW_TLS_PORT: new URL(server.httpsUrl).port };
    await server.kill();
    server = await startServer({ ...database.env, ...ports });
    expect(server.output()).toContain('agents connect to');
  });
});
