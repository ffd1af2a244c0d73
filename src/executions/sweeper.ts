import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { IDEMPOTENCY_TTL_MS } from '../engine/decide.js';
import { idFloor } from '../store/ids.js';
import { preparedQuery } from '../store/prepared.js';
import type { Database } from '../store/schema.js';
import { UNDECIDED_ESCALATED, storedTerms } from './approvals.js';
import type { ExecutionLedger } from './ledger.js';
import type { ExecutionState } from './states.js';
import type { ExecutionSpec } from './repository.js';

/** This service node among the others sharing the database (cluster/nodes.ts). */
export interface NodeLiveness {
  register(): Promise<void>;
  unregister(): Promise<void>;
  /** False when this node had been taken for dead (its database link was down). */
  beat(now: number): Promise<boolean>;
  deadNodes(now: number, settle: boolean): Promise<string[]>;
}

/** The agents connected to this node (agents/gateway.ts). */
export interface ConnectedAgents {
  dispatch(executions: Array<{ id: string; hostId: string }>): void;
  sendUnsent(executions: Array<{ id: string; hostId: string; sessionId: string | null; spec: ExecutionSpec }>): void;
  cancel(hostId: string, executionId: string): boolean;
  reconnectAll(reason: string): void;
  /** Whether any agent connection is held here: without one, what redispatch finds has nowhere to go. */
  holdsAny(): boolean;
}

export interface SweeperDeps {
  db: Kysely<Database>;
  /** This node: its connected hosts are those whose row names it (hosts.node_id, written at each hello). */
  nodeId: string;
  nodes: NodeLiveness;
  ledger: ExecutionLedger;
  gateway: ConnectedAgents;
  logger: FastifyBaseLogger;
  intervalMs: number;
  clock: () => number;
  /** Moves queued runs of one-host targets off hosts that went offline (executions/placement.ts). */
  placement?: { run(now: number): Promise<unknown> } | undefined;
  /** Deletes history past PITCREW_RETENTION_DAYS (retention/retention.ts); absent, everything is kept. */
  retention?: { run(now: number): Promise<void> } | undefined;
  /** Tells the on-call contacts of a run that expired undecided under `onTimeout: "escalate"` (notify/approval-escalation.ts). */
  escalateUndecided?: ((tenantId: string, executionId: string) => Promise<unknown>) | undefined;
  /** Sends the escalations of such runs that a node stopping right after their expiry never sent. */
  escalateOwed?: ((now: number) => Promise<unknown>) | undefined;
  /** Decides the Slack clicks a node answered and stopped before deciding (notify/slack/interactions.ts). */
  decideLapsedClicks?: ((now: number) => Promise<unknown>) | undefined;
  /** Closes incidents of webhook alarms quiet for their tenant's period (incidents/closer.ts). */
  incidents?: { run(now: number): Promise<void> } | undefined;
}

/**
 * How long after a script's timeout the service still waits for its result. The agent kills the
 * script at its timeout and reports within seconds; past this, its host or agent is down (a
 * terminated VM never reconnects) and the execution would otherwise read `running` for ever.
 */
export const OVERDUE_GRACE_MS = 5 * 60_000;

/** How often a node looks for Slack clicks whose node stopped before deciding them. */
const LAPSED_CLICKS_EVERY_MS = 10_000;

/**
 * The reason a dispatched or running execution is lost for, or undefined while its result may
 * still come. Measured from `dispatched_at`, the service's own clock (an agent's clock may be
 * off), which is when the script started give or take a round trip: an agent starts what it
 * receives at once. One still `dispatched` then was received by a connection that stayed up (a
 * dropped one sends it back to the queue) and never started: an agent stuck before the spawn,
 * on a hung disk for instance, which may yet run it, so it is not sent again either.
 */
export function overdueReason(row: { state: string; dispatched_at: number | null; spec: string }, now: number): string | undefined {
  const timeoutSeconds = (JSON.parse(row.spec) as ExecutionSpec).timeoutSeconds;
  const deadline = (row.dispatched_at ?? now) + timeoutSeconds * 1000 + OVERDUE_GRACE_MS;
  if (now < deadline) return undefined;
  const after = `${OVERDUE_GRACE_MS / 60_000} min after the script's ${timeoutSeconds} s timeout ran out`;
  const what = row.state === 'dispatched'
    ? `the agent was sent it and never said it started, ${after}: the agent is probably stuck (a hung disk, a frozen process)`
    : `no result from the agent ${after}: the host or its agent is probably down`;
  return `${what}. It was not re-run; a result the agent sends later is kept as lateResult`;
}

/** How long a dispatched execution may wait for the claim that dispatched it to send it, before the sweeper does. */
export const UNSENT_AFTER_MS = 5_000;

/** An idempotency key outlives its 24 h by up to this before the purge takes it: more than any wait between an event's receipt and its commit. */
const PURGE_MARGIN_MS = 3_600_000;

/**
 * The periodic duties no request triggers: the node's heartbeat, recovery from nodes that died,
 * moving runs off hosts that went offline, expiry of executions whose agent never came, a dispatch safety net, cancels still owed,
 * forgetting idempotency keys past their 24 h, deleting history past its retention period, and
 * closing incidents of webhook alarms gone quiet.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private running: Promise<void> = Promise.resolve();
  private purgedAt = 0;
  private overdueCheckedAt = 0;
  private owedCheckedAt = 0;
  private clicksCheckedAt = 0;

  constructor(private readonly deps: SweeperDeps) {}

  async start(): Promise<void> {
    await this.deps.nodes.register();
    this.started = true;
    await this.sweep();
    this.timer = setInterval(() => {
      this.running = this.sweep().catch((error: unknown) => this.deps.logger.error({ err: error }, 'sweep failed; next one in a moment'));
    }, this.deps.intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    if (this.started) await this.deps.nodes.unregister();
  }

  async sweep(now = this.deps.clock()): Promise<void> {
    const { db, ledger } = this.deps;
    if (await this.deps.nodes.beat(now)) {
      // Taken for dead while its database link was down: what ran here was settled as lost or
      // re-queued by another node, so its agents start afresh (they reconnect and say hello).
      this.deps.logger.warn('another node took this one for dead while its database link was down; reconnecting its agents');
      this.deps.gateway.reconnectAll('this service node was taken for dead while its database link was down; connect again');
    }
    await this.recoverFromDeadNodes(now);
    // Before expiry: a run that can go to another host goes there rather than expire.
    await this.deps.placement?.run(now);
    // A held fan-out execution waits for its turn, not for an agent: it expires only once released.
    const expired = await expiredQueued(db, now);
    for (const row of expired) {
      const minutes = Math.round((now - row.queued_at) / 60_000);
      await ledger.move([row.id], 'expired', `no agent of its host connected to take it within ${minutes} min (PITCREW_EXECUTION_EXPIRY_SECONDS); it never ran`, ['queued']);
    }
    await this.expireUndecided(now);
    await this.decideLapsedClicks(now);
    await this.redispatch(now);
    await this.loseOverdue(now);
    await this.purgeIdempotencyKeys(now);
    await this.deps.retention?.run(now);
    await this.deps.incidents?.run(now);
  }

  /** Executions nobody approved or rejected by their deadline: they never run (docs/approvals.md). */
  private async expireUndecided(now: number): Promise<void> {
    const overdue = await expiredUndecided(this.deps.db, now);
    for (const row of overdue) {
      const minutes = Math.round((now - row.queued_at) / 60_000);
      const escalates = storedTerms(row)?.onTimeout === 'escalate';
      const moved = await this.deps.ledger.move([row.id], 'expired', `nobody approved or rejected it within ${minutes} min (the rule's approval.timeoutSeconds); it never ran${escalates ? UNDECIDED_ESCALATED : ''}`, ['awaiting_approval']);
      // Only the node whose move ended it tells, after the commit: an approval that won the race tells nobody.
      if (escalates && moved.length > 0) await this.deps.escalateUndecided?.(row.tenant_id, row.id);
    }
    // Once a minute, and at a node's first sweep: the node that crashed may be this one.
    if (now - this.owedCheckedAt < 60_000) return;
    this.owedCheckedAt = now;
    await this.deps.escalateOwed?.(now);
  }

  /** Every 10 s, and at a node's first sweep: a click answered 200 is a decision somebody waits for. */
  private async decideLapsedClicks(now: number): Promise<void> {
    if (now - this.clicksCheckedAt < LAPSED_CLICKS_EVERY_MS) return;
    this.clicksCheckedAt = now;
    await this.deps.decideLapsedClicks?.(now);
  }

  /** Sent executions whose agent went silent past their timeout; once a minute is enough. */
  private async loseOverdue(now: number): Promise<void> {
    if (now - this.overdueCheckedAt < 60_000) return;
    this.overdueCheckedAt = now;
    const sent = await this.deps.db.selectFrom('executions').select(['id', 'state', 'dispatched_at', 'spec']).where('state', 'in', ['dispatched', 'running']).where('host_id', 'is not', null)
      .where('dispatched_at', '<=', now - OVERDUE_GRACE_MS).limit(1000).execute();
    for (const row of sent) {
      const reason = overdueReason(row, now);
      if (reason) await this.deps.ledger.move([row.id], 'lost', reason, [row.state as ExecutionState]);
    }
  }

  /**
   * Keys older than 24 h answer nothing any more (the writer ignores them); once a minute is enough.
   * Found by their event's id (UUIDv7 of its receipt) in `idempotency_keys_event` (migration 0046):
   * a key is written with its event a moment after the receipt, so those of events received over
   * PURGE_MARGIN_MS before the 24 h are past them.
   */
  private async purgeIdempotencyKeys(now: number): Promise<void> {
    if (now - this.purgedAt < 60_000) return;
    this.purgedAt = now;
    await this.deps.db.deleteFrom('idempotency_keys').where('event_id', '<', idFloor(now - IDEMPOTENCY_TTL_MS - PURGE_MARGIN_MS)).execute();
  }

  /**
   * Also called when an agent says hello (`settle`: a node in doubt is waited for), so what it
   * reports is judged against live nodes only.
   */
  async recoverFromDeadNodes(now = Date.now(), settle = false): Promise<void> {
    const { db, ledger } = this.deps;
    const dead = await this.deps.nodes.deadNodes(now, settle);
    if (dead.length === 0) return;
    const held = await db.selectFrom('executions').select(['id', 'state']).where('node_id', 'in', dead).where('state', 'in', ['dispatched', 'running']).execute();
    const running = held.filter((e) => e.state === 'running').map((e) => e.id);
    const dispatched = held.filter((e) => e.state === 'dispatched').map((e) => e.id);
    await ledger.move(running, 'lost', 'the service stopped while the script ran; it was not re-run. Check the host', ['running']);
    await ledger.move(dispatched, 'queued', 'the service stopped before the agent started it; delivering again', ['dispatched']);
    await db.updateTable('hosts').set({ session_id: null, node_id: null }).where('node_id', 'in', dead).execute();
    await db.deleteFrom('nodes').where('id', 'in', dead).execute();
    this.deps.logger.warn({ nodes: dead, lost: running.length, requeued: dispatched.length }, 'recovered from service nodes that stopped');
  }

  /**
   * Queued work for agents connected here that a missed wake-up left behind, work dispatched to a
   * session here but never sent on it, and owed cancels. The second is left by a commit that went
   * through while its connection broke (a PostgreSQL failover): the claim, or the ingest that
   * dispatched at once, answered an error, so nobody sent the work; it would have read
   * `dispatched` until taken for lost. An agent ignores an execution it already has.
   */
  private async redispatch(now: number): Promise<void> {
    const { db, gateway, nodeId } = this.deps;
    // All three only send on this node's connections: an idle node without agents reads nothing.
    if (!gateway.holdsAny()) return;
    const queued = await queuedHere(db, nodeId);
    gateway.dispatch(queued.map((row) => ({ id: row.id, hostId: row.host_id! })));
    const unsent = await unsentHere(db, nodeId, now - UNSENT_AFTER_MS);
    gateway.sendUnsent(unsent.map((row) => ({ id: row.id, hostId: row.host_id!, sessionId: row.session_id, spec: JSON.parse(row.spec) as ExecutionSpec })));
    const cancels = await cancelsOwedHere(db, nodeId);
    for (const row of cancels) gateway.cancel(row.host_id!, row.id);
  }
}

// The sweep's every-second reads, built and compiled once (store/prepared.ts): an idle server
// spent most of its CPU building the same queries again (bench/idle.js).
const expiredQueued = preparedQuery((db, now: number) => db.selectFrom('executions').select(['id', 'queued_at']).where('state', '=', 'queued').where('held', '=', 0).where('expires_at', '<=', now).limit(1000));

const expiredUndecided = preparedQuery((db, now: number) => db.selectFrom('executions').select(['id', 'tenant_id', 'queued_at', 'approval']).where('state', '=', 'awaiting_approval').where('expires_at', '<=', now).limit(1000));

/**
 * Executions of the hosts connected to this node, found from the executions' state (few rows:
 * work waiting or under way) and joined to their host. Naming the connected hosts instead put
 * one bound parameter per host into each of these queries, every second: 10,000 of them at
 * 10,000 agents, built and bound each time (idle server CPU 10-15 % with them, 7-11 % without,
 * bench/fleet.js), and past SQLite's 32,766 or PostgreSQL's 65,535 the sweep would fail every time.
 */
const onHostsHere = (db: Kysely<Database>, nodeId: string) => db.selectFrom('executions').innerJoin('hosts', 'hosts.id', 'executions.host_id').where('hosts.node_id', '=', nodeId);

const queuedHere = preparedQuery((db, nodeId: string) => onHostsHere(db, nodeId).select(['executions.id', 'executions.host_id']).where('executions.state', '=', 'queued').where('executions.held', '=', 0).limit(1000));

const unsentHere = preparedQuery((db, nodeId: string, sentBefore: number) => onHostsHere(db, nodeId).select(['executions.id', 'executions.host_id', 'executions.session_id', 'executions.spec'])
  .where('executions.state', '=', 'dispatched').where('executions.dispatched_at', '<=', sentBefore).limit(1000));

const cancelsOwedHere = preparedQuery((db, nodeId: string) => onHostsHere(db, nodeId).select(['executions.id', 'executions.host_id'])
  .where('executions.state', 'in', ['dispatched', 'running']).where('executions.cancel_requested_at', 'is not', null));
