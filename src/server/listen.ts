import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { App } from './app.js';
import { closeWithin, SHUTDOWN_GRACE_MS } from '../http/shutdown.js';
import type { TlsMaterial } from '../http/tls.js';
import { HandshakeGate, type HandshakeGateOptions } from './handshake-gate.js';
import { sessionTicketOptions } from './session-tickets.js';

export interface Listening {
  httpUrl: string;
  httpsUrl: string;
  /** The metrics listener's base URL, when there is one. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  tlsPort: number;
  tls: TlsMaterial;
  shutdownGraceMs?: number;
  /** Where /metrics is served on its own (PITCREW_METRICS_ADDR); undefined for nowhere but the API ports' token-guarded route. */
  metrics?: { host: string; port: number } | undefined;
}

/**
 * 256 handshakes at once keep one core busy even over a WAN (a handshake is ~1 ms of CPU here and
 * two round trips of the network: at 100 ms RTT, 256 in flight still give ~1,300 a second) while
 * each connection is served in well under the agents' 10 s hello limit. 50,000 waiting sockets
 * cost a few tens of MB; more than that are closed and come again after their agent's backoff.
 */
const HANDSHAKES: HandshakeGateOptions = { inFlight: 256, maxWaiting: 50_000, slotMs: 5_000 };

/**
 * HTTP for the UI and API on `port`; HTTPS on `tlsPort` for agents (WebSocket) and the API.
 * Both serve the same Fastify routes. Metrics have a listener of their own (http/metrics.ts).
 */
export async function listen(app: App, options: ListenOptions): Promise<Listening> {
  const metricsUrl = options.metrics ? await app.metricsServer.listen(options.metrics) : undefined;
  await app.server.listen({ host: options.host, port: options.port });
  const tls = { cert: options.tls.cert, key: options.tls.key, ...sessionTicketOptions(app.context.secretBox) };
  const secure = https.createServer(tls, (request, response) => app.server.routing(request, response));
  // The HTTP layer tracks a TLS connection only once its handshake is done: one that never
  // finishes it (a port probe, a peer that died mid-handshake) would hold a stop for the TLS
  // handshake timeout, 120 s. Every socket is tracked here, to be cut with the rest.
  const sockets = new Set<Socket>();
  // One listener for all (a socket closes once), not a closure and a once-wrapper kept by each connection.
  const forget = function forget(this: Socket) {
    sockets.delete(this);
  };
  secure.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', forget);
  });
  secure.on('upgrade', (request, socket, head) => {
    if (!app.context.gateway.handleUpgrade(request, socket, head, true)) socket.destroy();
  });
  // The port is held by a plain TCP listener that hands connections to `secure` a bounded
  // number at a time (handshake-gate.ts).
  const gate = new HandshakeGate(secure, HANDSHAKES);
  app.context.metrics.handshakeGate = gate;
  const front = net.createServer({ pauseOnConnect: true }, (socket) => gate.admit(socket));
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen({ port: options.tlsPort, host: options.host, backlog: 4096 }, () => resolve());
  });
  // The HTTP layer starts its request and header timeouts on 'listening', which `secure`, not
  // listening itself, would never see.
  secure.emit('listening');
  const httpPort = (app.server.server.address() as AddressInfo).port;
  const httpsPort = (front.address() as AddressInfo).port;
  app.context.agentOffer.endpoint = { port: httpsPort, fingerprint: options.tls.fingerprint };
  const shown = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  return {
    httpUrl: `http://${shown}:${httpPort}`,
    httpsUrl: `https://${shown}:${httpsPort}`,
    metricsUrl,
    close: () => {
      gate.close();
      // The front listener's close waits for every connection it took (secure's own would not: it never accepted them).
      const closing = new Promise<void>((resolve) => front.close(() => resolve()));
      secure.close();
      secure.closeIdleConnections();
      return closeWithin(secure, options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS, closing, () => sockets.forEach((socket) => socket.destroy()));
    },
  };
}
