import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, type AgentProcess } from './support/agents.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { startBalancer, type Balancer } from './support/balancer.js';
import { createTestDatabase, testDialects, type TestDatabase } from './support/databases.js';
import { runCli, startServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';

/*
 * An agent keeps the TLS session the service issued and offers it when it reconnects; the
 * service's ticket key comes from its secret key (src/server/session-tickets.ts), so a restarted
 * service and another node of the cluster resume the session instead of a full handshake. The
 * agent's own socket says whether it was resumed (tlsSocket.isSessionReused()), in its
 * "connected to the service" line.
 */

/** `tlsResumed` of each of the agent's welcomes, in order. */
function resumptions(agent: AgentProcess): Array<boolean | undefined> {
  return agent.output().split('\n').filter((line) => line.includes('"connected to the service"'))
    .map((line) => (JSON.parse(line) as { tlsResumed?: boolean }).tlsResumed);
}

async function welcomedTimes(agent: AgentProcess, count: number, server: () => string): Promise<void> {
  await waitFor(() => resumptions(agent).length >= count, `the agent welcomed ${count} time(s)`, 30_000)
    .catch((error: Error) => {
      throw new Error(`${error.message}; agent:\n${agent.output().slice(-3000)}\nserver:\n${server().slice(-3000)}`);
    });
}

const SECRET_KEY = Buffer.alloc(32, 7).toString('base64');
const OTHER_SECRET_KEY = Buffer.alloc(32, 8).toString('base64');

describe.skipIf(!testDialects().includes('sqlite'))('an agent resuming its TLS session with a restarted service', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let agent: AgentProcess;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await agent?.kill();
    await server?.kill();
    await database.drop();
  });

  it('resumes after a restart with the same secret key, and makes a full handshake with another', async () => {
    const env = { ...database.env, PITCREW_SECRET_KEY: SECRET_KEY };
    const tenant = JSON.parse((await runCli(['bootstrap', '--json'], env)).stdout) as { apiKey: string };
    server = await startServer(env);
    const ports = { PORT: new URL(server.url).port, PITCREW_TLS_PORT: new URL(server.httpsUrl).port };
    agent = spawnAgent({ server: server.httpsUrl, apiKey: tenant.apiKey, hostname: 'resuming', fingerprint: server.fingerprint });
    await welcomedTimes(agent, 1, () => server.output());

    await server.kill();
    server = await startServer({ ...env, ...ports });
    await welcomedTimes(agent, 2, () => server.output());

    // Another secret key, so another ticket key: the agent's ticket is refused and it connects
    // with a full handshake, as an agent does the first time.
    await server.kill();
    server = await startServer({ ...env, ...ports, PITCREW_SECRET_KEY: OTHER_SECRET_KEY });
    await welcomedTimes(agent, 3, () => server.output());
    expect(resumptions(agent)).toEqual([false, true, false]);
  }, 120_000);
});

// Two nodes on one PostgreSQL behind a TCP load balancer; they share the data directory's
// certificate and secret key, as the nodes of a cluster share PITCREW_SECRET_KEY.
describe.skipIf(!testDialects().includes('postgres'))('an agent resuming its TLS session with another node of the cluster', () => {
  let a: TestEnv;
  let b: TestEnv;
  let balancer: Balancer;
  let agent: AgentProcess;

  beforeAll(async () => {
    a = await startTestEnv('postgres', { listen: true });
    b = await startTestEnv('postgres', { listen: true, database: a.database });
    balancer = await startBalancer([a.listening!.httpsUrl]);
  });
  afterAll(async () => {
    await agent?.stop();
    await balancer.close();
    await b.close();
    await a.close();
  });

  it('a ticket node A issued is resumed by node B', async () => {
    agent = spawnAgent({ server: balancer.url, apiKey: a.tenant.apiKey, hostname: 'moving', fingerprint: a.listening!.fingerprint });
    await welcomedTimes(agent, 1, () => '');
    expect(a.app.context.gateway.welcomedCount).toBe(1);

    balancer.route([b.listening!.httpsUrl]);
    a.app.context.gateway.reconnectAll('moving the agent to node B');
    await welcomedTimes(agent, 2, () => '');
    expect(b.app.context.gateway.welcomedCount).toBe(1);
    expect(resumptions(agent)).toEqual([false, true]);
  }, 60_000);
});
