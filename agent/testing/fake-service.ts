import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseAgentMessage, PROTOCOL_VERSION, type AgentMessage, type ServiceMessage } from '../../src/agents/protocol.js';

/**
 * A stand-in for the pitcrew service, speaking the agent contract over plain HTTP on loopback:
 * enrolment, the WebSocket upgrade with the agent token, hello → welcome. Tests drive the rest.
 */
export class FakeService {
  readonly messages: AgentMessage[] = [];
  readonly enrolments: { authorization: string | undefined; body: Record<string, unknown> }[] = [];
  readonly tokens = new Set<string>();
  readonly upgrades: (string | undefined)[] = [];
  hostId = 'host-1';
  tenantId = 'tenant-1';
  heartbeatSeconds = 30;
  /** Answer every finished with recorded, as the service does. */
  autoRecord = true;
  private server: Server | undefined;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<Socket>();
  private current: WebSocket | undefined;
  port = 0;

  constructor(readonly apiKey = 'a'.repeat(64)) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      if (req.method !== 'POST' || req.url !== '/api/v1/agents/enrol') return void res.writeHead(404).end();
      void readJson(req).then((body) => {
        this.enrolments.push({ authorization: req.headers.authorization, body });
        if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
          return void res.writeHead(401, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ status: 401, detail: 'enrol with a current tenant API key' }));
        }
        const token = `pca_${randomBytes(32).toString('hex')}`;
        this.tokens.add(token);
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ hostId: this.hostId, tenantId: this.tenantId, token }));
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      this.upgrades.push(token);
      if (!token || !this.tokens.has(token)) {
        const body = JSON.stringify({ status: 401, detail: 'the agent credential is unknown or was revoked; enrol again with the API key' });
        return void socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/problem+json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Goes away like a restarting service: every connection dropped, nothing listening. */
  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = undefined;
  }

  send(message: ServiceMessage | string): void {
    this.current?.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  received<T extends AgentMessage['type']>(type: T): Extract<AgentMessage, { type: T }>[] {
    return this.messages.filter((m): m is Extract<AgentMessage, { type: T }> => m.type === type);
  }

  private accept(ws: WebSocket): void {
    this.current = ws;
    ws.on('message', (data) => {
      const message = parseAgentMessage(String(data));
      if (!message) throw new Error(`the agent sent an invalid frame: ${String(data)}`);
      this.messages.push(message);
      if (message.type === 'hello') {
        this.send({ type: 'welcome', v: PROTOCOL_VERSION, hostId: this.hostId, tenantId: this.tenantId, heartbeatSeconds: this.heartbeatSeconds });
      }
      if (message.type === 'finished' && this.autoRecord) this.send({ type: 'recorded', executionId: message.result.executionId });
    });
  }
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>));
  });
}
