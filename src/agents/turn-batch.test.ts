import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { turnBatched } from './turn-batch.js';

// A real ws server and client on loopback; the client's socket counts the writes it makes.
const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function pair(): Promise<{ client: WebSocket; received: string[]; writes: () => number }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(server);
  await once(server, 'listening');
  const received: string[] = [];
  server.on('connection', (socket) => socket.on('message', (data) => received.push(String(data))));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await once(client, 'open');
  // What reaches the kernel: net.Socket writes through _write (one chunk) or _writev (several).
  const raw = (client as unknown as { _socket: Record<'_write' | '_writev', (...args: unknown[]) => void> })._socket;
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = raw[method].bind(raw);
    raw[method] = (...args: unknown[]) => {
      writes += 1;
      original(...args);
    };
  }
  return { client, received, writes: () => writes };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('turnBatched (the messages of one turn of the event loop in one write)', () => {
  it('delivers every message of a turn, in order, in one write', async () => {
    const { client, received, writes } = await pair();
    const send = turnBatched(client);
    for (let i = 0; i < 50; i++) send(`message ${i}`);
    await until(() => received.length === 50);
    expect(received).toEqual(Array.from({ length: 50 }, (_, i) => `message ${i}`));
    // Each ws.send() alone is a write of its own: 50.
    expect(writes()).toBe(1);
  });

  it('sends the next turn\'s messages too, and a close after a send flushes it', async () => {
    const { client, received } = await pair();
    const send = turnBatched(client);
    send('first turn');
    await new Promise((resolve) => setImmediate(resolve));
    send('second turn');
    client.close(1000, 'done');
    await until(() => received.length === 2);
    expect(received).toEqual(['first turn', 'second turn']);
  });
});
