import type { ConnectionOptions, TLSSocket } from 'node:tls';
import WebSocket, { type ClientOptions } from 'ws';
import { PROTOCOL_VERSION, parseServiceMessage, type AgentMessage, type Hello } from '../src/agents/protocol.js';
import { turnBatched } from '../src/agents/turn-batch.js';
import { Backoff } from './backoff.js';
import type { CredentialStore, Credentials } from './credentials.js';
import { endpoint, enrol, EnrolmentRefused, problemDetail, readBody, type HostDescription } from './enrol.js';
import type { Executor } from './executor.js';
import type { Logger } from './log.js';
import { ServiceSilence } from './service-silence.js';
import { ServerTrust, trustAdvice, type Trust } from './tls.js';

export interface ConnectionDeps {
  server: URL;
  trust: Trust;
  apiKey: string | undefined;
  host: HostDescription;
  /** Replace an existing host of this name, at this process's first enrolment only. */
  replace?: boolean;
  credentials: CredentialStore;
  executor: Executor;
  log: Logger;
  /** Overrides the service's heartbeat interval. */
  heartbeatSeconds?: number;
  backoff?: Backoff;
  /** A connection that stayed up this long was stable: the next reconnection starts from the base delay. */
  stableMs?: number;
  /** false: every connection makes a full TLS handshake (bench/fleet.js measures both ways). */
  resumeTls?: boolean;
}

/** Nothing to retry: the agent stops with this message. */
class Fatal extends Error {}

/** `failure`: the connection never opened (the error says why). */
type SessionEnd = { kind: 'closed'; stable: boolean; failure?: Error } | { kind: 'unauthorized'; detail: string };

const HANDSHAKE_TIMEOUT_MS = 30_000;
const WELCOME_TIMEOUT_MS = 30_000;
const MAX_FRAME = 64 * 1024 * 1024;
/** Close codes after which this credential will not be accepted again (src/agents/session.ts). */
const CREDENTIAL_REFUSED = new Set([4004]);
/** While the service stays unreachable, one log line per this long (with the attempts between). */
const UNREACHABLE_LOG_EVERY_MS = 60_000;

/**
 * The agent's side of the link: enrol once, then hold a WebSocket to the service, reconnecting
 * with backoff for as long as the agent runs. Scripts keep running while it is down.
 */
export class Connection {
  private stopping = false;
  private socket: WebSocket | undefined;
  /**
   * --replace is spent by the first enrolment: should another machine replace this one later,
   * this agent then finds its credential refused and enrols again without it, and is told the
   * name is taken, instead of taking the host back (two agents would take turns for ever).
   */
  private replace: boolean;
  private wake: (() => void) | undefined;
  private readonly serverTrust: ServerTrust;

  constructor(private readonly deps: ConnectionDeps) {
    this.replace = deps.replace ?? false;
    this.serverTrust = new ServerTrust(deps.server, deps.trust);
  }

  /** Runs until stop() (0) or until nothing can be retried (1). */
  async run(): Promise<number> {
    const { log } = this.deps;
    const backoff = this.deps.backoff ?? new Backoff();
    const unreachable = { loggedAt: -Infinity, attempts: 0 };
    while (!this.stopping) {
      let stable = false;
      let failure: Error | undefined;
      try {
        const end = await this.session(await this.ensureCredentials());
        if (end.kind === 'unauthorized') {
          await this.deps.credentials.clear();
          if (!this.deps.apiKey) {
            log.error(`the service no longer accepts this agent's credential (${end.detail}); the host was probably deleted. Start the agent with --api-key KEY (or PITCREW_API_KEY) to enrol again`);
            return 1;
          }
          log.warn('the service no longer accepts this agent\'s credential; enrolling again with the API key', { detail: end.detail });
        }
        stable = end.kind === 'closed' && end.stable;
        if (end.kind === 'closed') failure = end.failure;
      } catch (error) {
        if (error instanceof Fatal || error instanceof EnrolmentRefused) {
          log.error((error as Error).message);
          return 1;
        }
        failure = error as Error;
      }
      if (failure) this.serverTrust.failed(failure);
      if (stable) backoff.reset();
      const delay = backoff.next(isRefused(failure) ? 'refused' : 'other');
      if (failure === undefined) unreachable.loggedAt = -Infinity;
      else this.noteUnreachable(unreachable, failure, delay);
      if (!this.stopping) await this.pause(delay);
    }
    return 0;
  }

  /** The first failed attempt of an outage is logged, then one line a minute: a restart makes no flood. */
  private noteUnreachable(state: { loggedAt: number; attempts: number }, failure: Error, retryInMs: number): void {
    state.attempts++;
    if (Date.now() - state.loggedAt < UNREACHABLE_LOG_EVERY_MS) return;
    this.deps.log.warn('could not reach the service; retrying', { error: failure.message, hint: trustAdvice(failure, this.deps.trust), retryInMs, failedAttempts: state.attempts });
    state.loggedAt = Date.now();
    state.attempts = 0;
  }

  stop(): void {
    this.stopping = true;
    this.socket?.close(1001, 'the agent is stopping');
    this.wake?.();
  }

  private async ensureCredentials(): Promise<Credentials> {
    const { server, credentials, apiKey, log } = this.deps;
    const saved = await credentials.load(server.href);
    if (saved) {
      if (this.replace) log.info('--replace is not needed: this agent is enrolled already (its credentials are saved)', { credentials: credentials.path });
      this.replace = false;
      return saved;
    }
    if (!apiKey) throw new Fatal(`this agent is not enrolled with ${server.origin} (no ${credentials.path}); start it with --api-key KEY (or PITCREW_API_KEY) to enrol`);
    const enrolment = await enrol(server, apiKey, this.deps.host, await this.serverTrust.options(), this.replace);
    this.replace = false;
    const issued: Credentials = { ...enrolment, server: server.href, ...(this.deps.trust.kind === 'pin' ? { fingerprint: this.deps.trust.fingerprint } : {}) };
    await credentials.save(issued);
    log.info('enrolled with the service', { hostId: issued.hostId, tenantId: issued.tenantId, credentials: credentials.path });
    return issued;
  }

  /** One connection, from the upgrade to its close. */
  private async session(credentials: Credentials): Promise<SessionEnd> {
    const { server, executor, log } = this.deps;
    const url = endpoint(server, 'api/v1/agents/connect');
    url.protocol = server.protocol === 'https:' ? 'wss:' : 'ws:';
    const tls = (await this.serverTrust.options()) as ClientOptions;
    if (this.stopping) return { kind: 'closed', stable: false };
    let tlsSocket: TLSSocket | undefined;
    const resume: ClientOptions = url.protocol === 'wss:' && this.deps.resumeTls !== false
      ? { createConnection: ((options: ConnectionOptions) => (tlsSocket = this.serverTrust.connect(options))) as unknown as ClientOptions['createConnection'] }
      : {};
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${credentials.token}` }, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, maxPayload: MAX_FRAME, perMessageDeflate: false, ...tls, ...resume });
    this.socket = socket;
    const sendText = turnBatched(socket);
    const send = (message: AgentMessage) => {
      if (socket.readyState === WebSocket.OPEN) sendText(JSON.stringify(message));
    };

    return new Promise<SessionEnd>((resolve) => {
      let end: SessionEnd | undefined;
      let welcomedAt: number | undefined;
      const silence = new ServiceSilence();
      let hello: Hello | undefined;
      let opened = false;
      let failure: Error | undefined;
      const timers: NodeJS.Timeout[] = [];

      socket.on('unexpected-response', (_req, res) => {
        void readBody(res).then((text) => {
          const detail = problemDetail(text) ?? `HTTP ${res.statusCode}`;
          if (res.statusCode === 401) end = { kind: 'unauthorized', detail };
          else log.warn('the service refused the connection', { status: res.statusCode, detail });
          socket.terminate();
        });
      });
      socket.on('open', () => {
        opened = true;
        hello = {
          type: 'hello',
          v: PROTOCOL_VERSION,
          ...this.deps.host,
          ...executor.resumeState(),
        };
        send(hello);
        timers.push(setTimeout(() => {
          if (welcomedAt === undefined) {
            log.warn(`no welcome from the service within ${WELCOME_TIMEOUT_MS / 1000} s; reconnecting`);
            socket.terminate();
          }
        }, WELCOME_TIMEOUT_MS));
      });
      socket.on('ping', () => silence.heard());
      socket.on('pong', () => silence.heard());
      socket.on('message', (data) => {
        silence.heard();
        const text = String(data);
        const message = parseServiceMessage(text);
        if (!message) return log.warn('ignored a frame that is not a known service message', { size: text.length });
        if (message.type === 'welcome') {
          if (welcomedAt !== undefined) return;
          if (message.v !== PROTOCOL_VERSION) log.warn('the service speaks another protocol version', { service: message.v, agent: PROTOCOL_VERSION });
          welcomedAt = Date.now();
          const beat = (this.deps.heartbeatSeconds ?? message.heartbeatSeconds) * 1000;
          // Whether the TLS session of an earlier connection was resumed (tests and operators read it here).
          const resumed = tlsSocket ? { tlsResumed: tlsSocket.isSessionReused() } : {};
          log.info('connected to the service', { hostId: message.hostId, tenantId: message.tenantId, heartbeatSeconds: beat / 1000, ...resumed });
          const reported = hello?.interrupted.map((i) => i.executionId) ?? [];
          void executor.connected({ send }, { hostId: message.hostId, tenantId: message.tenantId }, reported).catch((error: unknown) => log.error('could not resume after connecting', { error: (error as Error).message }));
          const heartbeat = setInterval(() => {
            // The service answers this ping (and pings a connection it has not heard from).
            if (silence.check()) {
              log.warn('the service has been silent for three heartbeats; reconnecting');
              return socket.terminate();
            }
            send({ type: 'heartbeat', at: Date.now() });
            if (socket.readyState === WebSocket.OPEN) socket.ping();
          }, Math.max(beat, 1000));
          timers.push(heartbeat);
          return;
        }
        if (welcomedAt === undefined) return log.warn('ignored a message that came before the welcome', { type: message.type });
        void executor.handle(message).catch((error: unknown) => log.error('could not handle a service message', { type: message.type, error: (error as Error).message }));
      });
      socket.on('error', (error) => {
        // Before the upgrade the caller logs it, once per outage; after it, it is news.
        if (opened) log.warn('connection error', { error: error.message, hint: trustAdvice(error, this.deps.trust) });
        else failure ??= error;
      });
      socket.on('close', (code, reason) => {
        for (const timer of timers) clearInterval(timer);
        executor.disconnected();
        this.socket = undefined;
        const stable = welcomedAt !== undefined && Date.now() - welcomedAt >= (this.deps.stableMs ?? 30_000);
        if (welcomedAt !== undefined) log.info('disconnected from the service', { code, reason: reason.toString() });
        // A refusal after the upgrade (another host's credential, an old protocol version) says why only here.
        else if (code >= 4000) log.warn('the service refused this agent', { code, reason: reason.toString() });
        if (!end && CREDENTIAL_REFUSED.has(code)) end = { kind: 'unauthorized', detail: reason.toString() };
        resolve(end ?? { kind: 'closed', stable, ...(failure ? { failure } : {}) });
      });
    });
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** Nothing listens on the service's port (it is restarting): trying again costs the service nothing. */
function isRefused(error: Error | undefined): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED';
}
