import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { App } from './app.js';
import { closeWithin, SHUTDOWN_GRACE_MS } from '../http/shutdown.js';
import type { TlsMaterial } from '../http/tls.js';

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
 * HTTP for the UI and API on `port`; HTTPS on `tlsPort` for agents (WebSocket) and the API.
 * Both serve the same Fastify routes. Metrics have a listener of their own (http/metrics.ts).
 */
export async function listen(app: App, options: ListenOptions): Promise<Listening> {
  const metricsUrl = options.metrics ? await app.metricsServer.listen(options.metrics) : undefined;
  await app.server.listen({ host: options.host, port: options.port });
  const secure = https.createServer({ cert: options.tls.cert, key: options.tls.key }, (request, response) => app.server.routing(request, response));
  // The HTTP layer tracks a TLS connection only once its handshake is done: one that never
  // finishes it (a port probe, a peer that died mid-handshake) would hold a stop for the TLS
  // handshake timeout, 120 s. Every socket is tracked here, to be cut with the rest.
  const sockets = new Set<Socket>();
  secure.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  secure.on('upgrade', (request, socket, head) => {
    if (!app.context.gateway.handleUpgrade(request, socket, head, true)) socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    secure.once('error', reject);
    secure.listen(options.tlsPort, options.host, () => resolve());
  });
  const httpPort = (app.server.server.address() as AddressInfo).port;
  const httpsPort = (secure.address() as AddressInfo).port;
  app.context.agentOffer.endpoint = { port: httpsPort, fingerprint: options.tls.fingerprint };
  const shown = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  return {
    httpUrl: `http://${shown}:${httpPort}`,
    httpsUrl: `https://${shown}:${httpsPort}`,
    metricsUrl,
    close: () => {
      const closing = new Promise<void>((resolve) => secure.close(() => resolve()));
      secure.closeIdleConnections();
      return closeWithin(secure, options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS, closing, () => sockets.forEach((socket) => socket.destroy()));
    },
  };
}
