import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Sweeper } from '../src/executions/sweeper.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

const HELLO_TIMEOUT_MS = 300;

/** Blocks the event loop, as thousands of TLS handshakes of a reconnecting fleet do. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

describe.each(testDialects())('the hello timeout on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { listen: true, agentHelloTimeoutMs: HELLO_TIMEOUT_MS });
  });
  afterAll(() => env.close());

  /** Connects as the host's agent over wss; `afterOpen` runs right after the hello is sent. */
  async function connect(hostname: string, afterOpen: (socket: WebSocket) => void, sendHello = true) {
    const { token } = await env.enrol(hostname);
    const url = `${env.listening!.httpsUrl.replace(/^https/, 'wss')}/api/v1/agents/connect`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false });
    const outcome = new Promise<{ welcomed: boolean; code?: number; reason?: string }>((resolve) => {
      socket.once('message', (data) => resolve({ welcomed: JSON.parse(String(data)).type === 'welcome' }));
      socket.once('close', (code, reason) => resolve({ welcomed: false, code, reason: String(reason) }));
    });
    socket.once('open', () => {
      if (sendHello) socket.send(JSON.stringify({ type: 'hello', v: 1, hostname, tags: [], os: 'Linux', arch: 'x64', version: 'test', running: [], interrupted: [] }));
      afterOpen(socket);
    });
    const result = await outcome;
    socket.close();
    return result;
  }

  it('welcomes a hello that came in time though the busy service read it only after the timeout', async () => {
    // The hello is in the server's socket before the timeout, but the loop is held past it: the
    // overdue timer and the unread hello are both waiting when the loop comes back.
    const result = await connect('late-read-1', () => busy(HELLO_TIMEOUT_MS * 3));
    expect(result).toEqual({ welcomed: true });
  });

  it('authenticates each of a burst of connections by its own credential, refusing a deleted host and an unknown token among them', async () => {
    // Credentials presented in one turn are looked up in one statement (hosts/repository.ts): each still answers for itself.
    const hosts = await Promise.all(['burst-1', 'burst-2', 'burst-3', 'burst-gone'].map((name) => env.enrol(name)));
    expect((await env.api('DELETE', `/api/v1/hosts/${hosts[3]!.hostId}`)).statusCode).toBe(204);
    const url = `${env.listening!.httpsUrl.replace(/^https/, 'wss')}/api/v1/agents/connect`;
    const tokens = [...hosts.map((h) => h.token), `pca_${'0'.repeat(64)}`];
    const outcomes = await Promise.all(tokens.map((token, i) => new Promise<string>((resolve) => {
      const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false });
      const hostname = `burst-${i + 1}`;
      socket.once('open', () => socket.send(JSON.stringify({ type: 'hello', v: 1, hostname, tags: [], os: 'Linux', arch: 'x64', version: 'test', running: [], interrupted: [] })));
      socket.once('message', (data) => {
        resolve(`welcome ${(JSON.parse(String(data)) as { hostId: string }).hostId}`);
        socket.close();
      });
      socket.once('unexpected-response', (_request, response) => resolve(`refused ${response.statusCode}`));
      socket.once('error', () => undefined);
    })));
    expect(outcomes).toEqual([...hosts.slice(0, 3).map((h) => `welcome ${h.hostId}`), 'refused 401', 'refused 401']);
  });

  it('checks for dead service nodes once for the hellos read in one turn, welcoming each', async () => {
    const hosts = await Promise.all(['turn-1', 'turn-2', 'turn-3'].map((name) => env.enrol(name)));
    const url = `${env.listening!.httpsUrl.replace(/^https/, 'wss')}/api/v1/agents/connect`;
    const sockets = await Promise.all(hosts.map((host) => new Promise<WebSocket>((resolve) => {
      const socket = new WebSocket(url, { headers: { authorization: `Bearer ${host.token}` }, rejectUnauthorized: false });
      socket.once('open', () => resolve(socket));
    })));
    const checks = vi.spyOn(Sweeper.prototype, 'recoverFromDeadNodes');
    try {
      const welcomes = sockets.map((socket) => new Promise<string>((resolve) => socket.once('message', (data) => resolve((JSON.parse(String(data)) as { hostId: string }).hostId))));
      sockets.forEach((socket, i) => socket.send(JSON.stringify({ type: 'hello', v: 1, hostname: `turn-${i + 1}`, tags: [], os: 'Linux', arch: 'x64', version: 'test', running: [], interrupted: [] })));
      // The three hellos are in the service's sockets when its loop comes back: read in one turn.
      busy(100);
      expect(await Promise.all(welcomes)).toEqual(hosts.map((host) => host.hostId));
      // A hello's check waits for a node in doubt (settle); the sweeper's own pass does not.
      expect(checks.mock.calls.filter(([, settle]) => settle === true)).toHaveLength(1);
    } finally {
      checks.mockRestore();
      for (const socket of sockets) socket.close();
    }
  });

  it('still closes a connection that sends no hello', async () => {
    const result = await connect('silent-1', () => undefined, false);
    expect(result).toEqual({ welcomed: false, code: 4002, reason: 'no hello within 0.3 s' });
  });
});
