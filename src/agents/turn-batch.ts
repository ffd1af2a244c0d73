import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/**
 * Sends on an agent connection, every message of one turn of the event loop in one write: the
 * first send of a turn corks the TLS socket under the WebSocket and the turn's end uncorks it.
 * Each ws.send() is otherwise a TLS record and a writev of its own, and a wake-up and a read on
 * the other side: the service answers a batch's results with one `recorded` each and delivers
 * a claim's executions in a loop, and an agent ends several runs per turn in a burst
 * (bench/e2e.js, issue 41). Nothing waits longer than the turn; a close flushes what is corked.
 */
export function turnBatched(socket: WebSocket): (text: string) => void {
  let corked: Duplex | undefined;
  const uncork = () => {
    corked?.uncork();
    corked = undefined;
  };
  return (text) => {
    // ws keeps the underlying socket here; none yet (still connecting): the message goes as before.
    const raw = (socket as unknown as { _socket?: Duplex | null })._socket;
    if (raw && !corked && !raw.destroyed) {
      corked = raw;
      raw.cork();
      setImmediate(uncork);
    }
    socket.send(text);
  };
}
