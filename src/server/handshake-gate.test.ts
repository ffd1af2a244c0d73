import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import selfsigned from 'selfsigned';
import { HandshakeGate, type HandshakeGateOptions } from './handshake-gate.js';

const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
const closers: Array<() => void> = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** An HTTPS server behind a gate, as listen.ts builds it; records how many handshakes were under way at most. */
async function gated(options: HandshakeGateOptions) {
  const secure = https.createServer({ key: pems.private, cert: pems.cert }, (_request, response) => response.end('ok'));
  const gate = new HandshakeGate(secure, options);
  let most = 0;
  secure.on('connection', () => (most = Math.max(most, gate.handshakingCount)));
  const front = net.createServer({ pauseOnConnect: true }, (socket) => gate.admit(socket));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const sockets = new Set<net.Socket>();
  secure.on('connection', (socket: net.Socket) => sockets.add(socket));
  closers.push(() => {
    gate.close();
    front.close();
    sockets.forEach((socket) => socket.destroy());
  });
  return { gate, port: (front.address() as AddressInfo).port, most: () => most };
}

/** A TLS client that completes its handshake; resolves when it did. */
function handshake(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ port, host: '127.0.0.1', ca: pems.cert, servername: 'localhost' }, () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });
}

/** A TCP connection that never says anything, as a port probe or a dead peer. */
function silent(port: number): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => undefined);
    closers.push(() => socket.destroy());
  });
}

describe('the handshake gate', () => {
  it('lets in only so many handshakes at once, and every connection has its turn', async () => {
    const { port, most, gate } = await gated({ inFlight: 2, maxWaiting: 100, slotMs: 10_000 });
    await Promise.all(Array.from({ length: 12 }, () => handshake(port)));
    expect(most()).toBe(2);
    await expect.poll(() => gate.handshakingCount).toBe(0);
    expect(gate.waitingCount).toBe(0);
  });

  it('keeps nothing of its own on a connection whose handshake is done (its slot timer, key and listener)', async () => {
    const { port, gate } = await gated({ inFlight: 4, maxWaiting: 100, slotMs: 60_000 });
    const raw: net.Socket[] = [];
    const secure = (gate as unknown as { server: https.Server }).server;
    secure.on('connection', (socket: net.Socket) => raw.push(socket));
    const done = new Promise<void>((resolve) => secure.once('secureConnection', () => setImmediate(resolve)));
    // Stays open: what the gate leaves on the socket would stay for the connection's whole life.
    const client = tls.connect({ port, host: '127.0.0.1', ca: pems.cert, servername: 'localhost' });
    client.on('error', () => undefined);
    closers.push(() => client.destroy());
    await done;
    expect(gate.handshakingCount).toBe(0);
    expect(raw).toHaveLength(1);
    expect(raw[0]!.destroyed).toBe(false);
    expect(raw[0]!.listeners('close').map((listener) => listener.name)).not.toContain('release');
  });

  it('gives a place back after slotMs when its peer never finishes the handshake', async () => {
    const { port, gate } = await gated({ inFlight: 1, maxWaiting: 100, slotMs: 200 });
    await silent(port);
    await expect.poll(() => gate.handshakingCount).toBe(1);
    // Waits behind the silent one for at most slotMs, then gets its turn.
    await handshake(port);
  });

  it('closes a connection at once when too many wait, and keeps those that fit', async () => {
    const { port, gate } = await gated({ inFlight: 1, maxWaiting: 1, slotMs: 60_000 });
    await silent(port);
    await expect.poll(() => gate.handshakingCount).toBe(1);
    const waiting = await silent(port);
    await expect.poll(() => gate.waitingCount).toBe(1);
    const refused = await silent(port);
    await new Promise((resolve) => refused.once('close', resolve));
    expect(waiting.destroyed).toBe(false);
    expect(gate.waitingCount).toBe(1);
  });

  it('closes the connections still waiting when it closes', async () => {
    const { port, gate } = await gated({ inFlight: 1, maxWaiting: 10, slotMs: 60_000 });
    await silent(port);
    const waiting = await silent(port);
    await expect.poll(() => gate.waitingCount).toBe(1);
    gate.close();
    await new Promise((resolve) => waiting.once('close', resolve));
    expect(gate.waitingCount).toBe(0);
  });
});
