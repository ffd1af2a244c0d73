import type { Server } from 'node:http';

/** How long a stop lets requests in flight finish before cutting their connections. */
export const SHUTDOWN_GRACE_MS = 5000;

/**
 * Waits for `closing` (a server's close), cutting the connections still open after `graceMs`.
 * A close waits for every request in flight, and a client that stops reading a reply (or a live
 * output stream) would otherwise hold the stop until its keep-alive timeout, 72 s. What was
 * accepted is durable before it is answered, so cutting a reply loses nothing.
 */
export async function closeWithin(server: Server, graceMs: number, closing: Promise<void>, alsoCut: () => void = () => undefined): Promise<void> {
  const cut = setTimeout(() => {
    server.closeAllConnections();
    alsoCut();
  }, graceMs);
  try {
    await closing;
  } finally {
    clearTimeout(cut);
  }
}
