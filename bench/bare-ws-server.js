// The baseline of the fleet benchmark: a bare HTTPS server with `ws` on the agents' path, using
// pitcrew's own certificate and key (the same TLS cost), that speaks just enough of the agent
// protocol for the same simulated agents to count it as "online": it answers a hello with a
// welcome, pings a connection silent for a heartbeat as pitcrew's gateway does
// (src/agents/liveness.ts), and on request sends every connected agent one `execute` and waits for
// all the `finished`. No auth, no storage, no validation, no logging: what N TLS WebSockets cost
// on this machine, measured in the same run.
//
// Started by bench/fleet.js as a child process: PORT (127.0.0.1 only), CERT_FILE, KEY_FILE, TICKET_KEYS and
// HEARTBEAT_SECONDS from the environment. Prints {"ready":true,"port":N,"at":MS} once it listens (`at`: when, by its own clock).
// POST /fan-out (on the same port) sends the executes and replies once every result is in.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import { WebSocketServer } from 'ws';

const env = process.env;
const heartbeatSeconds = Number(env.HEARTBEAT_SECONDS ?? 15);
// TICKET_KEYS (96 hex digits): the same session tickets as pitcrew's (src/server/session-tickets.ts), the
// same key across this server's restarts, so agents resume their TLS sessions here as they do there.
const tickets = env.TICKET_KEYS ? { ticketKeys: Buffer.from(env.TICKET_KEYS, 'hex'), sessionTimeout: 7 * 24 * 3600 } : {};
const server = https.createServer({ cert: fs.readFileSync(env.CERT_FILE), key: fs.readFileSync(env.KEY_FILE), ...tickets }, (request, response) => {
  const url = new URL(request.url, 'https://localhost');
  if (request.method === 'POST' && url.pathname === '/fan-out') return fanOut(response, Number(url.searchParams.get('hosts') ?? Infinity));
  response.writeHead(404).end();
});
const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
/** host id → socket, for the hosts that said hello */
const welcomed = new Map();
/** execution id → the fan-out waiting for its result */
const pending = new Map();

server.on('upgrade', (request, socket, head) => {
  if (!request.url?.startsWith('/api/v1/agents/connect')) return socket.destroy();
  wss.handleUpgrade(request, socket, head, (ws) => {
    const hostId = randomUUID();
    const heard = () => heardSinceCheck.add(ws);
    heard();
    ws.on('ping', heard);
    ws.on('pong', heard);
    ws.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type === 'hello') {
        welcomed.set(hostId, ws);
        ws.send(JSON.stringify({ type: 'welcome', v: message.v, hostId, tenantId: 'bare', heartbeatSeconds }));
      } else if (message.type === 'finished') {
        ws.send(JSON.stringify({ type: 'recorded', executionId: message.result.executionId }));
        const fan = pending.get(message.result.executionId);
        if (fan && pending.delete(message.result.executionId) && --fan.left === 0) fan.done();
      }
    });
    ws.on('close', () => welcomed.delete(hostId));
  });
});

/** One execute to each of the first `hosts` welcomed agents; replies once all their results are in. */
function fanOut(response, hosts) {
  const fan = { left: 0, sent: 0, done: () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sent: fan.sent })) };
  for (const [hostId, ws] of welcomed) {
    if (fan.sent >= hosts) break;
    const executionId = randomUUID();
    pending.set(executionId, fan);
    fan.sent += 1;
    fan.left += 1;
    ws.send(JSON.stringify({ type: 'execute', executionId, hostId, tenantId: 'bare', flavour: 'autofix', interpreter: 'sh', script: 'true', env: {}, context: {}, timeoutSeconds: 300 }));
  }
  if (fan.sent === 0) fan.done();
}

// The agents ping every heartbeat: only a connection not heard from for an interval is pinged, and
// dropped if still silent at the next check.
const heardSinceCheck = new WeakSet();
const pinged = new WeakSet();
setInterval(() => {
  for (const ws of wss.clients) {
    if (heardSinceCheck.delete(ws)) pinged.delete(ws);
    else if (pinged.has(ws)) ws.terminate();
    else {
      pinged.add(ws);
      ws.ping();
    }
  }
}, heartbeatSeconds * 1000).unref();

const stop = () => process.exit(0);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

server.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ ready: true, port: server.address().port, at: Date.now() })}\n`);
});
