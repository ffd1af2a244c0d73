// Preloaded into both servers of the fleet benchmark (`node --import bench/tls-counts.mjs`, set by
// bench/fleet.js): counts of what reached the agents' TLS port, the same probe in pitcrew and in
// the bare server, so the two can be compared by counts and bytes, which do not depend on how busy
// the machine is. Every 100 ms the counts so far go to
// $BENCH_TLS_COUNTS_DIR/<pid>.json, read by the bench at the end of a window: a server killed with
// SIGKILL writes nothing at its exit.
//
// - accepted: TCP connections taken from the kernel on the agent port (pitcrew: its front listener,
//   made with pauseOnConnect, src/server/listen.ts; bare: the HTTPS server itself);
// - connections: sockets handed to the TLS server (pitcrew: by its handshake gate; the others it closed);
// - handshakes: TLS handshakes completed ('secureConnection'), resumed among them, by protocol and
//   cipher; the wire bytes read and written by the server until each was done (a HelloRetryRequest
//   or another certificate would show there);
// - clientErrors: handshakes that failed ('tlsClientError'), by code;
// - perSecond: connections handed to TLS and handshakes done in each second (Unix time), to see
//   whether they flow or come in steps.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

const dir = process.env.BENCH_TLS_COUNTS_DIR;
if (dir) {
  const counts = {
    accepted: 0, connections: 0, handshakes: 0, resumed: 0, protocols: {}, ciphers: {}, clientErrors: {},
    handshakeBytes: { read: 0, written: 0 }, perSecond: {},
  };
  const second = () => {
    const at = Math.floor(Date.now() / 1000);
    return (counts.perSecond[at] ??= { connections: 0, handshakes: 0 });
  };
  const bump = (map, key) => (map[key] = (map[key] ?? 0) + 1);
  const emit = net.Server.prototype.emit;
  net.Server.prototype.emit = function countingEmit(event, ...args) {
    const isTls = this instanceof tls.Server;
    if (event === 'connection') {
      // A TLS server that listens itself accepted it; pitcrew's is fed by its front listener.
      if (isTls) {
        counts.connections += 1;
        second().connections += 1;
      }
      if ((isTls && this.listening) || (!isTls && this.pauseOnConnect)) counts.accepted += 1;
    } else if (isTls && event === 'secureConnection') {
      const socket = args[0];
      counts.handshakes += 1;
      second().handshakes += 1;
      if (socket.isSessionReused()) counts.resumed += 1;
      bump(counts.protocols, socket.getProtocol());
      bump(counts.ciphers, socket.getCipher()?.name);
      // The TCP socket under the TLS one holds the wire bytes.
      counts.handshakeBytes.read += socket._parent?.bytesRead ?? NaN;
      counts.handshakeBytes.written += socket._parent?.bytesWritten ?? NaN;
    } else if (isTls && event === 'tlsClientError') {
      bump(counts.clientErrors, args[0]?.code ?? args[0]?.message);
    }
    return emit.call(this, event, ...args);
  };
  const file = path.join(dir, `${process.pid}.json`);
  setInterval(() => {
    fs.writeFileSync(file, JSON.stringify({ ...counts, at: Date.now() }));
  }, 100).unref();
}
