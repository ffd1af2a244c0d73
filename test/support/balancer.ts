import net from 'node:net';

/**
 * A TCP load balancer in front of a cluster's HTTPS ports, as agents meet one in production: each
 * new connection goes to the next of the current backends; a backend that stops takes its
 * connections with it, and their agents reconnect to whichever backend is listed then.
 */
export interface Balancer {
  url: string;
  route(urls: string[]): void;
  close(): Promise<void>;
}

export async function startBalancer(urls: string[]): Promise<Balancer> {
  let backends = urls.map((url) => new URL(url));
  let next = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    const target = backends[next++ % backends.length];
    if (!target) return client.destroy();
    const upstream = net.connect(Number(target.port), target.hostname);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('error', () => upstream.destroy()).once('close', () => upstream.destroy());
    upstream.once('error', () => client.destroy()).once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    route: (list) => {
      backends = list.map((url) => new URL(url));
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
