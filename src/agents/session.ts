import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Histogram } from 'prom-client';
import type { WebSocket } from 'ws';
import type { ExecutionLedger, HostLedger } from '../executions/ledger.js';
import type { ExecutionSpec } from '../executions/repository.js';
import type { LiveExecutions } from '../executions/live.js';
import { hostKey } from '../engine/decide.js';
import type { HostSessions } from '../hosts/sessions.js';
import { lazyChildLogger } from '../http/logging.js';
import { preparedQuery } from '../store/prepared.js';
import type { Database, HostRow } from '../store/schema.js';
import type { HelloReads, OwedWork } from './hello-reads.js';
import { PROTOCOL_VERSION, assertNever, parseAgentMessage, type Hello, type ServiceMessage } from './protocol.js';
import { TurnBatch } from './turn-batch.js';

/** What the gateway and each agent session work with. */
export interface AgentServices {
  db: Kysely<Database>;
  ledger: ExecutionLedger;
  live: LiveExecutions;
  nodeId: string;
  heartbeatSeconds: number;
  /** Which session holds each host, written in group commits. */
  hostSessions: HostSessions;
  /** Times each hello until its welcome (pitcrew_agent_hello_duration_seconds). */
  helloSeconds: Pick<Histogram, 'observe'>;
  /** How long a connection may stay without a hello (10 s; tests shorten it). */
  helloTimeoutMs?: number;
  logger: FastifyBaseLogger;
  /** Settles what ran through service nodes that died, before an agent's report is judged. */
  recoverFromDeadNodes(): Promise<void>;
}

export interface SessionDeps extends Omit<AgentServices, 'ledger'> {
  /** The hello's reads, shared by the hellos of one turn. */
  helloReads: HelloReads;
  /** Notes that the host was heard from, for its last-seen time. */
  seen(hostId: string): void;
  closed(session: AgentSession): void;
}

const HELLO_TIMEOUT_MS = 10_000;
const NO_OPTIONS = {};

// Built once: each runs for every agent that goes (a fleet's reconnection after a restart), or claims work.
const owedCancelsOfHost = preparedQuery((db, hostId: string) => db.selectFrom('executions').select('id')
  .where('host_id', '=', hostId).where('state', 'in', ['dispatched', 'running']).where('cancel_requested_at', 'is not', null));
// By host first: (host_id, state) is indexed, session_id is not (a scan of every execution, per disconnect).
const undeliveredOfSession = preparedQuery((db, hostId: string, sessionId: string) => db.selectFrom('executions').select('id')
  .where('host_id', '=', hostId).where('state', '=', 'dispatched').where('session_id', '=', sessionId));
/**
 * How long an agent's `started` may wait to share the ledger's next commit. Nobody waits for it
 * (the agent goes on, people see `running` that much later), and a short script's result usually
 * comes within it: one transaction and one fdatasync for both instead of one each.
 */
const STARTED_MAY_WAIT_MS = 20;

/**
 * One agent connection. It speaks for one host only: every message it sends can touch only
 * that host's executions, and everything it is sent is addressed to that host and tenant.
 *
 * A session lives as long as its connection, thousands at once, so it keeps only what it uses
 * after the hello: three of the host row's fields (not the row), no spent hello timer, a logger and
 * a set of assigned executions made when first needed (bench/README.md, session 36: heap41).
 */
export class AgentSession {
  readonly sessionId = randomUUID();
  readonly hostId: string;
  private readonly tenantId: string;
  private readonly hostname: string;
  private readonly hostnameKey: string;
  private ready = false;
  private closed = false;
  /** Executions this connection was sent or took over: the only ones whose live output it may add to. */
  private assigned: Set<string> | undefined;
  private readonly batch: TurnBatch;
  private childLog: FastifyBaseLogger | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  private helloHeard = false;
  /** Work was queued for the host while the hello was answered: the claim after the welcome takes it. */
  private queuedMeanwhile = false;
  /** Settles once the session's own clean-up after the connection ended is done. */
  readonly ended: Promise<void>;

  constructor(
    private readonly socket: WebSocket,
    host: HostRow,
    private readonly deps: SessionDeps,
    /** The ledger narrowed to this session's host (ExecutionLedger.forHost): all an agent may change. */
    private readonly ledger: HostLedger,
  ) {
    this.hostId = host.id;
    this.tenantId = host.tenant_id;
    this.hostname = host.hostname;
    this.hostnameKey = host.hostname_key;
    this.batch = new TurnBatch(socket);
    const helloTimeoutMs = deps.helloTimeoutMs ?? HELLO_TIMEOUT_MS;
    // The timeout counts the agent's time, not ours: when it fires, a hello already in the socket
    // is read first. With the event loop saturated (thousands of agents reconnecting at once) the
    // timer can be due before the loop got round to reading a hello that came in time; closing
    // then made the agent back off and come again, one more handshake for a busy service.
    this.helloTimer = setTimeout(() => setImmediate(() => {
      if (!this.helloHeard) this.close(4002, `no hello within ${helloTimeoutMs / 1000} s`);
    }), helloTimeoutMs);
    socket.on('message', (data) => void this.receive(String(data)).catch((error: unknown) => {
      // The agent offers what the service has not confirmed (results, runs under way) each time it
      // connects: closing is how a message that could not be recorded (the database down for a
      // moment) gets sent again, instead of waiting for the next reconnect, maybe days away.
      this.log.error({ err: error }, 'could not record an agent message; closing the connection so the agent offers it again');
      this.close(1011, 'the service could not record a message; reconnect and offer it again');
    }));
    this.ended = new Promise((resolve) => {
      socket.on('close', () => {
        this.onClose()
          .catch((error: unknown) => this.log.error({ err: error }, 'clean-up after the agent disconnected failed; the sweeper retries'))
          .finally(resolve);
      });
    });
    socket.on('error', (error) => this.log.warn({ err: error }, 'agent connection error'));
  }

  /**
   * Made only if a line is logged: a pino child serialises its bindings, and most connections
   * log just "agent connected" and "agent disconnected", written with the same fields (bindings).
   */
  private get log(): FastifyBaseLogger {
    return (this.childLog ??= lazyChildLogger(this.deps.logger, this.bindings(), NO_OPTIONS));
  }

  get isReady(): boolean {
    return this.ready && !this.closed;
  }

  send(message: ServiceMessage): void {
    if (!this.closed) this.batch.send(JSON.stringify(message));
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  /** Claims the given queued executions (or all of this host's) and sends them to the agent. */
  async deliver(ids: string[] | 'all_queued'): Promise<void> {
    if (!this.isReady) {
      this.queuedMeanwhile ||= !this.closed;
      return;
    }
    const claimed = await this.ledger.claim(ids, { sessionId: this.sessionId, nodeId: this.deps.nodeId });
    if (this.closed) {
      // The connection ended while the claim committed: give them back for the next connection.
      await this.ledger.move(claimed.map((c) => c.id), 'queued', 'the agent connection ended before delivery', ['dispatched']);
      return;
    }
    for (const { id, spec } of claimed) this.sendExecute(id, spec);
  }

  /** Whether this connection was sent the execution (or took it over running) and has not seen it finish. */
  wasSent(executionId: string): boolean {
    return this.assigned?.has(executionId) ?? false;
  }

  /** Sends an execution this session already holds as dispatched. */
  sendExecute(executionId: string, spec: ExecutionSpec): void {
    (this.assigned ??= new Set()).add(executionId);
    this.send({
      type: 'execute',
      executionId,
      hostId: this.hostId,
      tenantId: this.tenantId,
      flavour: spec.flavour,
      interpreter: spec.interpreter,
      script: spec.script,
      ...(spec.runbook?.sha256 === undefined ? {} : { sha256: spec.runbook.sha256 }),
      env: spec.env,
      context: spec.context,
      timeoutSeconds: spec.timeoutSeconds,
    });
  }

  private async receive(text: string): Promise<void> {
    const message = parseAgentMessage(text);
    if (!message) {
      this.log.warn({ size: text.length }, 'ignored a frame that is not a protocol message');
      return;
    }
    if (message.type !== 'hello' && !this.ready) return;
    this.deps.seen(this.hostId);
    switch (message.type) {
      case 'hello':
        return this.hello(message);
      case 'heartbeat':
        return;
      case 'started':
        // Another host's execution is refused, and reported, by the ledger.
        await this.ledger.started(message.executionId, message.startedAt, STARTED_MAY_WAIT_MS);
        return;
      case 'output':
        if (this.assigned?.has(message.executionId)) this.deps.live.output(message.executionId, message.stream, message.chunk);
        else this.log.warn({ executionId: message.executionId }, 'live output for an execution this connection was not given; dropped');
        return;
      case 'finished': {
        this.assigned?.delete(message.result.executionId);
        // Another host's execution is refused, and reported, by the ledger; acknowledged either
        // way, so the agent stops offering it.
        await this.ledger.result(message.result);
        this.send({ type: 'recorded', executionId: message.result.executionId });
        return;
      }
      default:
        assertNever(message);
    }
  }

  private async hello(hello: Hello): Promise<void> {
    if (this.ready) return;
    const heardAt = performance.now();
    this.helloHeard = true;
    clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
    if (hello.v !== PROTOCOL_VERSION) return this.close(4003, `protocol version ${hello.v} is not ${PROTOCOL_VERSION}; upgrade the agent`);
    if (hostKey(hello.hostname) !== this.hostnameKey) {
      return this.close(4004, `this credential belongs to host ${this.hostname}, not ${hello.hostname}; enrol again`);
    }
    await this.deps.hostSessions.attach(this.hostId, hello, { sessionId: this.sessionId, nodeId: this.deps.nodeId });
    // A run that went through a node that died is lost, even if its agent reconnects here first.
    await this.deps.recoverFromDeadNodes();
    await this.reconcile(hello);
    const owed = await this.deps.helloReads.owedTo(this.hostId);
    this.send({ type: 'welcome', v: PROTOCOL_VERSION, hostId: this.hostId, tenantId: this.tenantId, heartbeatSeconds: this.deps.heartbeatSeconds });
    this.deps.helloSeconds.observe((performance.now() - heardAt) / 1000);
    this.ready = true;
    this.deps.logger.info({ ...this.bindings(), version: hello.version, running: hello.running.length }, 'agent connected');
    await this.sendOwed(owed);
  }

  /**
   * The host's queued work and owed cancels, read with the other hellos of the turn once the hello
   * is reconciled. Most hosts have none: the claim, a ledger transaction, runs only for those that
   * do, or got work while the hello was answered. It is submitted before the agent's next message
   * is read, as the welcome goes: a result the agent then offers finds the execution claimed.
   */
  private async sendOwed(owed: OwedWork): Promise<void> {
    if (!owed.queued && !this.queuedMeanwhile) {
      for (const id of owed.cancels) this.send({ type: 'cancel', executionId: id });
      return;
    }
    await this.deliver('all_queued');
    // After the claim: what it sent may have a cancel requested already.
    await this.resendCancels();
  }

  private bindings(): { hostId: string; hostname: string; session: string } {
    return { hostId: this.hostId, hostname: this.hostname, session: this.sessionId };
  }

  /**
   * What the service believes this host is doing, checked against what the agent says. Nothing
   * that may have started is ever run again: it continues, or it is reported lost. Only this
   * host's executions count: any other id the agent names is reported and ignored.
   */
  private async reconcile(hello: Hello): Promise<void> {
    const { db } = this.deps;
    const { ledger } = this;
    const active = await this.deps.helloReads.activeOf(this.hostId);
    const owned = await this.ownedOf([...hello.running, ...hello.interrupted.map((i) => i.executionId), ...(hello.finished ?? [])]);
    const running = new Set(hello.running.filter((id) => owned.has(id)));
    const interrupted = new Map(hello.interrupted.filter((i) => owned.has(i.executionId)).map((i) => [i.executionId, i.reason]));
    // Ended while the connection was down: the result comes right after the welcome.
    const finished = new Set(hello.finished ?? []);
    for (const [id, reason] of interrupted) await ledger.move([id], 'lost', `${reason} (reported by the agent)`, ['dispatched', 'running']);
    const continuing = active.filter((e) => running.has(e.id)).map((e) => e.id);
    if (continuing.length > 0) {
      const assigned = (this.assigned ??= new Set());
      for (const id of continuing) assigned.add(id);
      // Still running on the host: this session (on this node) holds it now.
      await db.updateTable('executions').set({ session_id: this.sessionId, node_id: this.deps.nodeId })
        .where('id', 'in', continuing).where('host_id', '=', this.hostId).where('state', 'in', ['dispatched', 'running']).execute();
    }
    for (const { id, state } of active) {
      if (running.has(id)) await ledger.started(id, Date.now());
      else if (interrupted.has(id) || finished.has(id)) continue;
      else if (state === 'running') await ledger.move([id], 'lost', 'the agent no longer knows this run (it restarted without its journal); it was not re-run', ['running']);
      else await ledger.move([id], 'queued', 'the agent never started it; delivering again', ['dispatched']);
    }
  }

  /** Which of the ids a hello names are this host's; the others are reported. */
  private async ownedOf(named: string[]): Promise<Set<string>> {
    const ids = [...new Set(named)];
    const owned = new Set<string>();
    for (let at = 0; at < ids.length; at += 500) {
      const rows = await this.deps.db.selectFrom('executions').select('id').where('host_id', '=', this.hostId).where('id', 'in', ids.slice(at, at + 500)).execute();
      for (const row of rows) owned.add(row.id);
    }
    const foreign = ids.filter((id) => !owned.has(id));
    if (foreign.length > 0) {
      this.log.warn({ executionIds: foreign.slice(0, 20), count: foreign.length }, 'the agent’s hello named executions that are not this host’s (another host’s, another tenant’s or unknown); ignored');
    }
    return owned;
  }

  private async resendCancels(): Promise<void> {
    const rows = await owedCancelsOfHost(this.deps.db, this.hostId);
    for (const row of rows) this.send({ type: 'cancel', executionId: row.id });
  }

  private async onClose(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
    this.deps.closed(this);
    await this.deps.hostSessions.detach(this.hostId, this.sessionId);
    const undelivered = await undeliveredOfSession(this.deps.db, this.hostId, this.sessionId);
    await this.ledger.move(undelivered.map((r) => r.id), 'queued', 'the agent connection ended before the agent started it', ['dispatched']);
    this.deps.logger.info(this.bindings(), 'agent disconnected');
  }
}
