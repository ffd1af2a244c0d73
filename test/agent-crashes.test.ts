import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../agent/testing/helpers.js';
import { scriptRule } from './support/app.js';
import { spawnAgent, type AgentProcess } from './support/agents.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * Real processes killed with SIGKILL: the service, the agent. DESIGN.md §2: a queued execution
 * survives restarts and runs once; one that had started is never silently re-run: it ends lost.
 * And frozen with SIGSTOP: the TCP connection stays up but nothing answers on it, as behind a
 * firewall or NAT that dropped the flow without a reset (a half-open connection).
 */
describe.each(testDialects())('crashes on %s', (dialect) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let tenant: { apiKey: string; token: string };
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    tenant = JSON.parse((await runCli(['bootstrap', '--json'], database.env)).stdout);
    server = await startServer(database.env);
  });

  /** The service comes back on the same ports, as it would in production. */
  const restart = async () => {
    const ports = { PORT: new URL(server.url).port, PITCREW_TLS_PORT: new URL(server.httpsUrl).port };
    await server.kill();
    server = await startServer({ ...database.env, ...ports });
  };
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.kill()));
    await server.kill();
    await database.drop();
  });

  async function api(method: string, url: string, body?: unknown) {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${tenant.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  function agent(hostname: string, stateDir?: string): AgentProcess {
    const started = spawnAgent({ server: server.httpsUrl, apiKey: tenant.apiKey, hostname, fingerprint: server.fingerprint, stateDir });
    agents.push(started);
    return started;
  }

  async function online(hostname: string, status = 'online') {
    await waitFor(async () => (await api('GET', `/api/v1/hosts?hostname=${hostname}`)).body.items[0]?.status === status, `${hostname} ${status}`);
  }

  async function fire(hostname: string, script: string): Promise<string> {
    const rule = await api('POST', '/api/v1/rules', scriptRule({ target: { type: 'specific_host', hostname }, action: { type: 'script', flavour: 'autofix', runbook: { script } } }));
    const trigger = rule.body.trigger as { triggerId: string };
    const reply = await fetch(`${server.url}/api/v1/trigger/channel/webhook/${tenant.apiKey}/${trigger.triggerId}`, { method: 'POST' });
    expect(reply.status).toBe(202);
    return ((await reply.json()) as { executionIds: string[] }).executionIds[0]!;
  }

  const state = async (id: string) => (await api('GET', `/api/v1/executions/${id}`)).body;
  const until = (id: string, wanted: (e: Record<string, unknown>) => boolean, what: string, timeoutMs = 20_000) => {
    let last: unknown;
    return waitFor(async () => {
      const e = await state(id);
      last = e;
      return wanted(e) ? e : undefined;
    }, what, timeoutMs).catch((error: Error) => {
      throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
    });
  };
  const runs = (marker: string) => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean).length : 0);

  it('a queued execution survives a service crash and runs once when the agent comes', async () => {
    const first = agent('queue-1');
    await online('queue-1');
    await first.stop();
    await online('queue-1', 'offline');
    const marker = path.join(database.dataDir, 'queue-1.runs');
    const id = await fire('queue-1', `echo run >> ${marker}`);
    expect((await state(id)).state).toBe('queued');

    await restart();
    expect((await state(id)).state).toBe('queued');

    agent('queue-1', first.stateDir);
    const done = await until(id, (e) => e.state === 'succeeded', 'the queued execution to run');
    expect(done.transitions).toHaveLength(4);
    expect(runs(marker)).toBe(1);
  });

  it('an execution running when its agent dies ends lost and is not re-run', async () => {
    const running = agent('crash-1');
    await online('crash-1');
    const marker = path.join(database.dataDir, 'crash-1.runs');
    const id = await fire('crash-1', `echo run >> ${marker}; sleep 60`);
    await until(id, (e) => e.state === 'running', 'the script to start');

    await running.kill();
    agent('crash-1', running.stateDir);
    const lost = await until(id, (e) => e.state === 'lost', 'the execution to be reported lost');
    expect(lost.reason).toMatch(/agent/);
    await online('crash-1');
    const after = await fire('crash-1', 'echo fresh');
    await until(after, (e) => e.state === 'succeeded', 'new work to run on the restarted agent');
    expect(runs(marker)).toBe(1);
  });

  it('an execution running when the service dies ends lost; the agent reconnects and its late result is kept', async () => {
    const survivor = agent('svc-1');
    await online('svc-1');
    const marker = path.join(database.dataDir, 'svc-1.runs');
    const id = await fire('svc-1', `echo run >> ${marker}; sleep 2; echo finished`);
    await until(id, (e) => e.state === 'running', 'the script to start');

    await restart();
    // PostgreSQL is a cluster: the old node is dead once the database has freed its lock.
    const lost = await until(id, (e) => e.state === 'lost' && e.lateResult !== null, 'lost with the late result', 40_000);
    expect(lost.reason).toMatch(/service stopped.*not re-run/);
    expect(lost.lateResult).toMatchObject({ ending: 'exited', exitCode: 0, stdout: 'finished\n' });
    expect(runs(marker)).toBe(1);

    // The agent kept running through the restart and takes new work.
    expect(survivor.child.exitCode).toBeNull();
    const next = await fire('svc-1', 'echo again');
    await until(next, (e) => e.state === 'succeeded', 'new work after the restart');
  }, 60_000);

  it('enrols again, as the new host, when restarted with another --hostname on the same state', async () => {
    const first = agent('rename-old');
    await online('rename-old');
    await first.stop();
    const renamed = agent('rename-new', first.stateDir);
    await online('rename-new');
    expect(renamed.output()).toMatch(/"the service refused this agent","code":4004,"reason":"this credential belongs to host rename-old, not rename-new; enrol again"/);
    expect(renamed.output()).toMatch(/no longer accepts this agent's credential; enrolling again/);
    const id = await fire('rename-new', 'echo renamed');
    expect((await until(id, (e) => e.state === 'succeeded', 'work on the renamed host')).stdout).toBe('renamed\n');
    expect((await api('GET', '/api/v1/hosts?hostname=rename-old')).body.items[0]).toMatchObject({ status: 'offline' });
  });

  it.each([
    ['still runs when the agent reconnects', false],
    ['ended while the agent was cut off', true],
  ])('drops a frozen agent after a silent heartbeat; thawed, it reconnects and reports the run, which %s', async (_, endsWhileFrozen) => {
    const hostname = endsWhileFrozen ? 'frozen-1b' : 'frozen-1a';
    const frozen = agent(hostname);
    await online(hostname);
    const marker = path.join(database.dataDir, `${hostname}.runs`);
    const id = await fire(hostname, `echo $$ > ${marker}.pid; echo run >> ${marker}; while [ ! -e ${marker}.go ]; do sleep 0.05; done; echo finished`);
    await until(id, (e) => e.state === 'running', 'the script to start');

    frozen.child.kill('SIGSTOP');
    try {
      await online(hostname, 'offline');
      // The script is not lost: the agent is alive and its process group goes on without it.
      expect((await state(id)).state).toBe('running');
      const waiting = await fire(hostname, `echo run >> ${marker}.2`);
      expect((await state(waiting)).state).toBe('queued');
      if (endsWhileFrozen) {
        fs.writeFileSync(`${marker}.go`, '');
        const pid = Number(fs.readFileSync(`${marker}.pid`, 'utf8'));
        // Gone, or a zombie its frozen parent has not reaped.
        await waitFor(() => !isAlive(pid), 'the script to end while its agent is frozen');
      }
      frozen.child.kill('SIGCONT');
      if (!endsWhileFrozen) {
        await online(hostname);
        fs.writeFileSync(`${marker}.go`, '');
      }
      const done = await until(id, (e) => e.state === 'succeeded', 'the result of the run that went on');
      expect(done).toMatchObject({ stdout: 'finished\n', lateResult: null });
      await until(waiting, (e) => e.state === 'succeeded', 'work queued while it was frozen');
    } finally {
      frozen.child.kill('SIGCONT');
    }
    await online(hostname);
    expect(runs(marker)).toBe(1);
    expect(runs(`${marker}.2`)).toBe(1);
  });

  it('stops a script whose cancel was asked while its agent was cut off, once the agent is back', async () => {
    const frozen = agent('frozen-3');
    await online('frozen-3');
    const id = await fire('frozen-3', 'echo begun; sleep 60; echo never');
    await until(id, (e) => e.state === 'running', 'the script to start');
    frozen.child.kill('SIGSTOP');
    try {
      await online('frozen-3', 'offline');
      const asked = await api('POST', `/api/v1/executions/${id}/cancel`);
      expect(asked.status).toBe(202);
      expect((await state(id)).state).toBe('running');
    } finally {
      frozen.child.kill('SIGCONT');
    }
    const cancelled = await until(id, (e) => e.state === 'cancelled', 'the cancel, sent again at reconnect, to stop the script');
    expect(cancelled.stdout).toBe('begun\n');
  });

  it('runs once an execution sent into a half-open connection, which went back to the queue', async () => {
    const frozen = agent('frozen-2');
    await online('frozen-2');
    const marker = path.join(database.dataDir, 'frozen-2.runs');
    frozen.child.kill('SIGSTOP');
    let id: string;
    try {
      // The service still holds the connection: the execution is sent and waits in the agent's socket.
      id = await fire('frozen-2', `echo run >> ${marker}; echo once`);
      await until(id, (e) => e.state === 'queued' && (e.transitions as unknown[]).length > 1, 'the execution back in the queue when the connection is dropped');
      frozen.child.kill('SIGCONT');
      // The agent may read the frame still in its socket and run it before it reconnects; either way it runs once.
      expect(await until(id, (e) => e.state === 'succeeded', 'the execution to run')).toMatchObject({ stdout: 'once\n', lateResult: null });
    } finally {
      frozen.child.kill('SIGCONT');
    }
    const after = await fire('frozen-2', 'echo after');
    await until(after, (e) => e.state === 'succeeded', 'later work on the same connection');
    expect(runs(marker)).toBe(1);
  });

  it('keeps an idle agent connected on its own pings: the service pings only a connection it has not heard from', async () => {
    const idle = agent('idle-1');
    await online('idle-1');
    await waitFor(() => idle.output().includes('"connected to the service"'), 'the agent to be welcomed');
    const welcomed = Date.now();
    // Last-seen times come from the agent's heartbeat messages: six heartbeats, twice the agent's
    // silence limit and past the service's drop of a connection it stopped hearing from.
    await waitFor(async () => {
      const host = (await api('GET', '/api/v1/hosts?hostname=idle-1')).body.items[0] as { lastSeenAt: string | null };
      return host.lastSeenAt !== null && Date.parse(host.lastSeenAt) > welcomed + 6_000;
    }, 'six heartbeats heard from the idle agent');
    expect(idle.output()).not.toContain('silent for three heartbeats');
    expect(idle.output().match(/"connected to the service"/g)).toHaveLength(1);
    const id = await fire('idle-1', 'echo still');
    expect((await until(id, (e) => e.state === 'succeeded', 'work on the same connection')).stdout).toBe('still\n');
    expect(idle.output().match(/"connected to the service"/g)).toHaveLength(1);
  });

  it('reconnects when the service falls silent for three heartbeats, and takes work once it answers again', async () => {
    const waiting = agent('silent-1');
    await online('silent-1');
    // Welcomed, by its own log: the service records the session (online) before it sends the
    // welcome, and a stop in between leaves an agent with no heartbeat yet to miss (a CI failure).
    await waitFor(() => waiting.output().includes('"connected to the service"'), 'the agent to be welcomed');
    server.child.kill('SIGSTOP');
    try {
      await waitFor(() => waiting.output().includes('silent for three heartbeats'), 'the agent to notice the silence', 15_000);
    } finally {
      server.child.kill('SIGCONT');
    }
    await online('silent-1');
    const id = await fire('silent-1', 'echo awake');
    expect((await until(id, (e) => e.state === 'succeeded', 'work after the service answers again')).stdout).toBe('awake\n');
  }, 60_000);

  it('stops cleanly on SIGTERM with agents connected, and the agents reconnect to the restarted service', async () => {
    agent('graceful-1');
    await online('graceful-1');
    const ports = { PORT: new URL(server.url).port, PITCREW_TLS_PORT: new URL(server.httpsUrl).port };
    await server.stop();
    expect(server.child.exitCode, server.output().slice(-2000)).toBe(0);
    server = await startServer({ ...database.env, ...ports });
    await online('graceful-1');
    const id = await fire('graceful-1', 'echo back');
    expect((await until(id, (e) => e.state === 'succeeded', 'work after the restart')).stdout).toBe('back\n');
    // The agent's reconnect backoff doubles up to 16 s while the service restarts; a slow restart
    // on a busy machine can take most of the default 30 s timeout before work is even fired.
  }, 90_000);
});
