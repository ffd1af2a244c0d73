import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/**
 * Sends on an agent connection, every message of one turn of the event loop in one write: the
 * first send of a turn corks the TLS socket under the WebSocket and the turn's end uncorks it.
 * Each ws.send() is otherwise a TLS record and a writev of its own, and a wake-up and a read on
 * the other side: the service answers a batch's results with one `recorded` each and delivers
 * a claim's executions in a loop, and an agent ends several runs per turn in a burst
 * (bench/e2e.js, issue 41). Nothing waits longer than the turn; a close flushes what is corked.
 *
 * An object of two fields with shared methods, not a pair of closures and their context: one is
 * kept for every agent connection's life (bench/README.md, session 36: heap41).
 */
export class TurnBatch {
  private corked: Duplex | undefined;

  constructor(private readonly socket: WebSocket) {}

  send(text: string): void {
    // ws keeps the underlying socket here; none yet (still connecting): the message goes as before.
    const raw = (this.socket as unknown as { _socket?: Duplex | null })._socket;
    if (raw && !this.corked && !raw.destroyed) {
      this.corked = raw;
      raw.cork();
      setImmediate(uncork, this);
    }
    this.socket.send(text);
  }

  /** Sends the turn's messages corked so far (the turn's end does it anyway). */
  flush(): void {
    this.corked?.uncork();
    this.corked = undefined;
  }
}

function uncork(batch: TurnBatch): void {
  batch.flush();
}

/** The same as a function (the agent's one connection, agent/connection.ts). */
export function turnBatched(socket: WebSocket): (text: string) => void {
  const batch = new TurnBatch(socket);
  return (text) => batch.send(text);
}
