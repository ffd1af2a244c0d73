// The simulated fleet of the fleet benchmark: N agents in this one process, each the real agent's
// connection code (dist/agent/connection.js: enrolment, pinned TLS, hello, welcome, heartbeats,
// reconnection with its backoff) with an executor that answers `execute` with `finished` (exit 0,
// its start in it, as the agent tells a short run's) at once instead of spawning a script, and
// keeps each result until the service says `recorded`, offering it again after a reconnect, as the
// real executor does.
import { Backoff } from '../dist/agent/backoff.js';
import { Connection } from '../dist/agent/connection.js';
import { enrol } from '../dist/agent/enrol.js';
import { tlsOptionsFor } from '../dist/agent/tls.js';
import { inParallel } from './common.js';

class SimExecutor {
  constructor(agent, fleet) {
    this.agent = agent;
    this.fleet = fleet;
    this.link = undefined;
    this.address = undefined;
    /** results the service has not confirmed, by execution id */
    this.unrecorded = new Map();
  }

  resumeState() {
    return { running: [], interrupted: [], finished: [...this.unrecorded.keys()] };
  }

  async connected(link, address) {
    this.link = link;
    this.address = address;
    for (const result of this.unrecorded.values()) link.send({ type: 'finished', result });
  }

  disconnected() {
    this.link = undefined;
  }

  async handle(message) {
    if (message.type === 'recorded') {
      if (this.unrecorded.delete(message.executionId)) this.fleet.recorded += 1;
      return;
    }
    if (message.type !== 'execute') return;
    const { executionId, hostId, tenantId } = message;
    if (hostId !== this.address?.hostId || tenantId !== this.address?.tenantId) {
      this.fleet.misaddressed += 1;
      return;
    }
    const runs = this.fleet.runs.get(executionId);
    if (runs) runs.push(this.agent.hostname);
    else this.fleet.runs.set(executionId, [this.agent.hostname]);
    // Ended at once: as the real agent does with a run shorter than its hold on `started`
    // (agent/executor.ts), the start goes in the result only.
    const startedAt = Date.now();
    const result = {
      executionId, ending: 'exited', exitCode: 0, signal: null, reason: null, startedAt, finishedAt: Date.now(),
      stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, artifacts: [], artifactsTruncated: false,
    };
    this.unrecorded.set(executionId, result);
    this.link?.send({ type: 'finished', result });
  }
}

/**
 * At most `limit` agents between the start of a connection attempt and its welcome or failure
 * (BENCH_FLEET_SIM_CONNECTING): the simulated agents share this process's one thread, and with
 * thousands of attempts under way each handshake advances a step at a time behind all the others,
 * none ending until nearly all have (bench/README.md). A real agent has its own CPU.
 */
class AttemptSlots {
  constructor(limit) {
    this.free = limit;
    this.waiting = [];
  }

  async take(agent) {
    if (agent.holdsSlot) return;
    if (this.free > 0) this.free -= 1;
    else await new Promise((resolve) => this.waiting.push(resolve));
    agent.holdsSlot = true;
  }

  give(agent) {
    if (!agent.holdsSlot) return;
    agent.holdsSlot = false;
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

/** The agent's backoff, telling the fleet each time an attempt failed (its next delay is asked for), and how ('refused' or 'other'). */
class NotingBackoff extends Backoff {
  constructor(onFailure) {
    super();
    this.onFailure = onFailure;
  }

  next(failure) {
    this.onFailure(failure);
    return super.next(failure);
  }
}

/** What the agents' own log lines say, counted; `online` is kept per agent. */
function agentLogger(agent, fleet) {
  const note = (level) => (message, fields = {}) => {
    if (message === 'connected to the service') {
      if (fields.tlsResumed) fleet.resumed += 1;
      fleet.slots?.give(agent);
      agent.online = true;
      agent.welcomedAt = Date.now();
      fleet.welcomes += 1;
    } else if (message === 'disconnected from the service') {
      agent.online = false;
    } else if (level !== 'info') {
      // e.g. "could not reach the service; retrying", "the service refused this agent" (code 4002)
      const key = fields.code ? `${message} (${fields.code})` : message;
      fleet.problems.set(key, (fleet.problems.get(key) ?? 0) + 1);
    }
  };
  return { info: note('info'), warn: note('warn'), error: note('error') };
}

export class Fleet {
  /** hosts: [{ hostname, tags }]; connecting: at most that many agents in a connection attempt at once (unset: no limit, as a real fleet). */
  constructor(hosts, { connecting } = {}) {
    this.agents = hosts.map((h) => ({ ...h, credentials: undefined, online: false, welcomedAt: 0, connection: undefined, done: undefined, holdsSlot: false }));
    this.slots = connecting ? new AttemptSlots(connecting) : undefined;
    this.welcomes = 0;
    /** welcomes on a resumed TLS session */
    this.resumed = 0;
    /** false: the agents make a full TLS handshake each time, offering no session (ConnectionDeps.resumeTls) */
    this.resumeTls = true;
    /** connection attempts (each reads the credentials first, agent/connection.ts), and the failed ones by kind: 'refused' (nothing listened), 'other' */
    this.attempts = 0;
    this.failures = { refused: 0, other: 0 };
    this.recorded = 0;
    this.misaddressed = 0;
    /** execution id → host names that ran it */
    this.runs = new Map();
    /** warning/error log lines of the agents, by message */
    this.problems = new Map();
  }

  /** Each agent enrols with the API key, as `pitcrew-agent --api-key` does on its first start. */
  async enrol(server, apiKey, fingerprint, concurrency = 16) {
    const tls = await tlsOptionsFor(server, { kind: 'pin', fingerprint });
    await inParallel(this.agents, concurrency, async (agent) => {
      const host = { hostname: agent.hostname, tags: agent.tags, os: 'Linux (simulated)', arch: 'x64', version: 'bench' };
      agent.credentials = { ...(await enrol(server, apiKey, host, tls)), server: server.href, fingerprint };
    });
  }

  /** Every agent connects to `server` at once (their first attempt has no delay, as at boot). */
  start(server, fingerprint) {
    for (const agent of this.agents) {
      agent.online = false;
      const store = {
        path: '(in memory)',
        load: async () => {
          // Read at the start of every attempt (agent/connection.ts).
          this.attempts += 1;
          await this.slots?.take(agent);
          return agent.credentials;
        },
        save: async (c) => void (agent.credentials = c),
        clear: async () => void (agent.credentials = undefined),
      };
      const host = { hostname: agent.hostname, tags: agent.tags, os: 'Linux (simulated)', arch: 'x64', version: 'bench' };
      const deps = {
        server, trust: { kind: 'pin', fingerprint }, apiKey: undefined, host, credentials: store,
        executor: new SimExecutor(agent, this), log: agentLogger(agent, this), backoff: new NotingBackoff((failure) => {
          this.failures[failure === 'refused' ? 'refused' : 'other'] += 1;
          this.slots?.give(agent);
        }),
      };
      // Read at each connection: the bench restarts the server with and without resumption.
      Object.defineProperty(deps, 'resumeTls', { get: () => this.resumeTls, enumerable: true });
      agent.connection = new Connection(deps);
      agent.done = agent.connection.run();
    }
  }

  onlineCount(since = 0) {
    let n = 0;
    for (const agent of this.agents) if (agent.online && agent.welcomedAt >= since) n += 1;
    return n;
  }

  /** The time the last agent was welcomed, once all of them have been since `since`; polls. */
  async allOnline(since, timeoutMs, alive = () => true) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.onlineCount(since) === this.agents.length) return Math.max(...this.agents.map((a) => a.welcomedAt));
      if (!alive()) throw new Error('the server exited while the agents connected');
      if (Date.now() > deadline) throw new Error(`${this.onlineCount(since)} of ${this.agents.length} agents online after ${timeoutMs / 1000} s; agent problems: ${this.problemText()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The first welcome since `since`. */
  firstWelcome(since) {
    return Math.min(...this.agents.filter((a) => a.welcomedAt >= since).map((a) => a.welcomedAt));
  }

  /** The newest welcome: once it is up long enough, every connection counts as stable for the agents' backoff. */
  newestWelcome() {
    return Math.max(...this.agents.map((a) => a.welcomedAt));
  }

  problemText() {
    return this.problems.size ? [...this.problems].map(([k, n]) => `${n} × ${k}`).join('; ') : 'none';
  }

  async stop() {
    for (const agent of this.agents) agent.connection?.stop();
    await Promise.all(this.agents.map((a) => a.done));
  }
}
