import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';

export interface HandshakeGateOptions {
  /** TLS handshakes under way at once; the connections beyond wait, unread, in arrival order. */
  inFlight: number;
  /** Connections that may wait; one more is closed at once (its agent backs off and comes again). */
  maxWaiting: number;
  /** A handshake holds its place at most this long: a peer that never finishes one cannot hold the gate. */
  slotMs: number;
}

/**
 * Lets TLS handshakes into the HTTPS server a bounded number at a time. After a restart every
 * agent of the fleet reconnects within seconds; taken all at once, the event loop shares itself
 * among thousands of half-done handshakes, each connection advances a step per round, and an
 * agent whose hello waits more than 10 s behind them is closed (4002) and costs a second
 * handshake (600-1,600 of 10,000 per restart in bench/fleet.js). Let in a few hundred at a time, each
 * connection goes from TCP to welcome in a fraction of a second while the others wait in the
 * kernel's socket buffers, unread, which costs nothing.
 *
 * The front listener is made with `pauseOnConnect`; admitted sockets are handed to the TLS
 * server as its own connections. A place is given back once the handshake ends (either way),
 * the connection closes, or `slotMs` passes.
 */
export class HandshakeGate {
  private readonly waiting: Socket[] = [];
  /** The admitted connections still in their handshake, by remote address and port. */
  private readonly inHandshake = new Map<string, () => void>();
  private closed = false;

  constructor(
    private readonly server: TlsServer,
    private readonly options: HandshakeGateOptions,
  ) {
    const settle = (socket: TLSSocket) => this.inHandshake.get(keyOf(socket))?.();
    server.on('secureConnection', settle);
    server.on('tlsClientError', (_error, socket) => settle(socket));
  }

  /** A new TCP connection from the front listener (paused: nothing of it is read yet). */
  admit(socket: Socket): void {
    // A paused socket reports nothing until read; an error on one must not crash the server.
    socket.on('error', destroyOnError);
    if (this.closed || this.waiting.length >= this.options.maxWaiting) {
      socket.destroy();
      return;
    }
    this.waiting.push(socket);
    this.next();
  }

  /** Connections waiting for a place; for metrics and tests. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  get handshakingCount(): number {
    return this.inHandshake.size;
  }

  /** Closes the connections still waiting; the admitted ones close with the server. */
  close(): void {
    this.closed = true;
    for (const socket of this.waiting.splice(0)) socket.destroy();
  }

  private next(): void {
    while (!this.closed && this.inHandshake.size < this.options.inFlight && this.waiting.length > 0) {
      const socket = this.waiting.shift()!;
      if (socket.destroyed) continue;
      this.start(socket);
    }
  }

  private start(socket: Socket): void {
    const key = keyOf(socket);
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // Not kept by the socket for the rest of the connection's life, with its spent timer and key.
      socket.removeListener('close', release);
      if (this.inHandshake.get(key) === release) this.inHandshake.delete(key);
      this.next();
    };
    const timer = setTimeout(release, this.options.slotMs);
    this.inHandshake.set(key, release);
    socket.once('close', release);
    this.server.emit('connection', socket);
  }
}

/** One listener for every waiting socket, not a closure each: it is kept for the connection's life. */
function destroyOnError(this: Socket): void {
  this.destroy();
}

function keyOf(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
