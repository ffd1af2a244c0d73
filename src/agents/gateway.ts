import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { QueuedExecution } from '../ingest/writer.js';
import type { ExecutionSpec } from '../executions/repository.js';
import { agentAuthenticator, isDeleted, touchHosts } from '../hosts/repository.js';
import type { HostRow } from '../store/schema.js';
import { sharedWithinTurn } from '../store/turn-loader.js';
import { HelloReads } from './hello-reads.js';
import { Liveness } from './liveness.js';
import { AgentSession, type AgentServices, type SessionDeps } from './session.js';

export const AGENT_CONNECT_PATH = '/api/v1/agents/connect';

export type GatewayDeps = AgentServices;

/**
 * The agents' side door: WebSocket connections on the HTTPS port, one session per host.
 * Dispatch is a push on the host's socket (DESIGN.md §5), never a poll by the agent.
 */
export class AgentGateway {
  private readonly sessions = new Map<string, AgentSession>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  private readonly seenHosts = new Set<string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly liveness = new Liveness<WebSocket>();
  private readonly authenticate: (token: string) => Promise<HostRow | undefined>;
  /** What every session gets: made once, not per connection. */
  private readonly sessionDeps: SessionDeps;
  /** Every connection's ping and pong listener: one function, called with the connection as `this`. */
  private readonly heard: (this: WebSocket) => void;

  constructor(private readonly deps: GatewayDeps) {
    this.authenticate = agentAuthenticator(deps.db);
    const { ledger: _ledger, ...services } = deps;
    this.sessionDeps = {
      ...services,
      helloReads: new HelloReads(deps.db),
      // The hellos of one turn share one dead-node check: on PostgreSQL a query of the nodes each.
      recoverFromDeadNodes: sharedWithinTurn(deps.recoverFromDeadNodes),
      seen: (hostId) => this.seenHosts.add(hostId),
      closed: (closed) => {
        if (this.sessions.get(closed.hostId) === closed) this.sessions.delete(closed.hostId);
      },
    };
    const liveness = this.liveness;
    this.heard = function heard(this: WebSocket) {
      liveness.heard(this);
    };
    const beat = deps.heartbeatSeconds * 1000;
    this.timers.push(setInterval(() => this.liveness.check(this.wss.clients), beat).unref());
    // Last-seen times are for people: written in one statement every few heartbeats, not per message.
    this.timers.push(setInterval(() => void this.flushSeen(), beat * 3).unref());
  }

  /** Handles an HTTP upgrade if it is for the agent path; returns false to let others handle it. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, secure: boolean): boolean {
    if (!request.url?.startsWith(AGENT_CONNECT_PATH)) return false;
    void this.upgrade(request, socket, head, secure).catch((error: unknown) => {
      this.deps.logger.error({ err: error }, 'agent upgrade failed');
      refuse(socket, 500, 'the service could not accept the connection');
    });
    return true;
  }

  /** Connections whose hello was answered (pitcrew_agents_connected). */
  get welcomedCount(): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.isReady) count += 1;
    return count;
  }

  /** Whether this node holds any agent connection (Sweeper.redispatch). */
  holdsAny(): boolean {
    return this.sessions.size > 0;
  }

  /** Whether this node holds the host's agent connection. */
  holds(hostId: string): boolean {
    return this.sessions.has(hostId);
  }

  /** This node's session of the host, when it is ready for work: the writer dispatches to it at once. */
  readySession(hostId: string): { sessionId: string; nodeId: string } | undefined {
    const session = this.sessions.get(hostId);
    return session?.isReady ? { sessionId: session.sessionId, nodeId: this.deps.nodeId } : undefined;
  }

  /**
   * Pushes newly queued executions to the agents connected to this node. Those the ingest
   * transaction dispatched to a session are sent on it; if that session has ended meanwhile they
   * go back to the queue, as a claim whose connection ended does (AgentSession.deliver).
   */
  dispatch(executions: QueuedExecution[]): void {
    const byHost = new Map<string, string[]>();
    const orphaned: QueuedExecution[] = [];
    for (const { id, hostId, claim } of executions) {
      if (!claim) byHost.set(hostId, [...(byHost.get(hostId) ?? []), id]);
      else {
        const session = this.sessions.get(hostId);
        if (session?.sessionId === claim.sessionId && session.isReady) session.sendExecute(id, claim.spec);
        else orphaned.push({ id, hostId });
      }
    }
    if (orphaned.length > 0) void this.requeue(orphaned);
    for (const [hostId, ids] of byHost) {
      const session = this.sessions.get(hostId);
      if (session) void session.deliver(ids).catch((error: unknown) => this.deps.logger.error({ err: error, hostId }, 'dispatch failed; the sweeper retries'));
    }
  }

  private async requeue(executions: QueuedExecution[]): Promise<void> {
    try {
      const moved = new Set(await this.deps.ledger.move(executions.map((e) => e.id), 'queued', 'the agent connection ended before delivery', ['dispatched']));
      this.dispatch(executions.filter((e) => moved.has(e.id)));
    } catch (error) {
      this.deps.logger.error({ err: error }, 'could not re-queue executions whose session ended; the sweeper retries');
    }
  }

  /** Sends executions the database holds as dispatched to a session here, unless that session sent them already (Sweeper.redispatch). */
  sendUnsent(executions: Array<{ id: string; hostId: string; sessionId: string | null; spec: ExecutionSpec }>): void {
    for (const { id, hostId, sessionId, spec } of executions) {
      const session = this.sessions.get(hostId);
      if (session?.isReady && session.sessionId === sessionId && !session.wasSent(id)) session.sendExecute(id, spec);
    }
  }

  /** Sends a cancel to the host's agent if it is connected here; false otherwise. */
  cancel(hostId: string, executionId: string): boolean {
    const session = this.sessions.get(hostId);
    if (!session?.isReady) return false;
    session.send({ type: 'cancel', executionId });
    return true;
  }

  /** Closes every agent connection with a reason; the agents reconnect at once and say hello again. */
  reconnectAll(reason: string): void {
    for (const ws of this.wss.clients) ws.close(1012, reason);
  }

  /** Closes every agent connection (agents reconnect to another node or after the restart). */
  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    const sessions = [...this.sessions.values()];
    const closing = [...this.wss.clients].map((ws) => new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1001, 'the service is stopping');
      // A peer that does not answer the close handshake must not hold up the stop.
      setTimeout(() => ws.terminate(), 1000).unref();
    }));
    await Promise.all(closing);
    // Each session still records that its host went offline: let it finish before storage closes.
    await Promise.all(sessions.map((session) => session.ended));
    await this.flushSeen();
    this.wss.close();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, secure: boolean): Promise<void> {
    if (!secure && !isLoopback(request.socket.remoteAddress ?? '')) {
      return refuse(socket, 403, 'agents connect over TLS: use the service HTTPS port (PITCREW_TLS_PORT, 8443)');
    }
    const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const host = token ? await this.authenticate(token) : undefined;
    if (!host || isDeleted(host)) return refuse(socket, 401, 'the agent credential is unknown or was revoked; enrol again with the API key');
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, host));
  }

  private accept(ws: WebSocket, host: HostRow): void {
    this.sessions.get(host.id)?.close(4001, 'replaced by a newer connection of the same host');
    this.liveness.heard(ws);
    ws.on('ping', this.heard);
    ws.on('pong', this.heard);
    const session = new AgentSession(ws, host, this.sessionDeps, this.deps.ledger.forHost(host.id));
    this.sessions.set(host.id, session);
  }

  private async flushSeen(): Promise<void> {
    const ids = [...this.seenHosts];
    this.seenHosts.clear();
    await touchHosts(this.deps.db, ids).catch((error: unknown) => this.deps.logger.warn({ err: error }, 'could not record last-seen times'));
  }
}

function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ type: 'urn:pitcrew:problem:agent-refused', title: 'Agent connection refused', status, detail: message });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Error'}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export function isLoopback(address: string): boolean {
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}
