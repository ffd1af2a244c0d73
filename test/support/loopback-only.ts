import net from 'node:net';

/**
 * Refuses every TCP connection this process opens to anywhere but loopback, and records where
 * each went: an SDK driven against an emulator must not reach the real cloud (its default
 * endpoints, instance metadata) behind the test's back. `restore` puts Node's own connect back.
 */
export function loopbackOnly(): { connections: string[]; restore: () => void } {
  const connections: string[] = [];
  const realConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const target = typeof first === 'object' && first !== null ? String((first as { host?: string; path?: string }).host ?? (first as { path?: string }).path) : `${String(args[1] ?? 'localhost')}:${String(first)}`;
    connections.push(target);
    if (!/^(127\.0\.0\.1|localhost|::1)$/.test(target)) {
      this.destroy(new Error(`blocked a connection to ${target}`));
      return this;
    }
    return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof realConnect;
  return { connections, restore: () => { net.Socket.prototype.connect = realConnect; } };
}
