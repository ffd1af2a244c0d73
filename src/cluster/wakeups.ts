import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Store } from '../store/database.js';
import type { LiveNotice } from './live-relay.js';

const CHANNEL = 'pitcrew_wakeup';
// NOTIFY payloads must stay under 8000 bytes; an (execution, host) pair takes about 80.
const PAIRS_PER_NOTICE = 80;

export interface Addressed {
  id: string;
  hostId: string;
}

export interface WakeupHandlers {
  queued(executions: Addressed[]): void;
  cancel(executions: Addressed[]): void;
  live(notice: LiveNotice): void;
  tenantChanged(tenantId: string): void;
}

type Notice = { kind: 'queued' | 'cancel'; pairs: Array<[string, string]> } | { kind: 'tenant'; tenantId: string } | LiveNotice;

/**
 * Cross-node wake-ups (DESIGN.md §4): work queued, or a cancel asked, on one node for a host whose
 * agent is connected to another is announced with PostgreSQL NOTIFY; every node LISTENs on a
 * connection of its own. With SQLite there is one node and nothing to announce.
 */
export class Wakeups {
  private listener: pg.Client | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly handlers: WakeupHandlers,
    private readonly logger: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    if (!this.store.dedicatedConnection) return;
    const listener = await this.store.dedicatedConnection();
    listener.on('notification', (message) => this.receive(message.payload));
    // A database restart ends the connection: listen again on a new one, or this node hears
    // nothing from the others (the sweeper's pass still dispatches, live output stops relaying).
    listener.once('end', () => {
      if (this.listener !== listener) return;
      this.listener = undefined;
      if (!this.stopped) this.listenAgain();
    });
    try {
      await listener.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await listener.end().catch(() => undefined);
      throw error;
    }
    this.listener = listener;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end();
  }

  private listenAgain(): void {
    this.retry = setTimeout(() => {
      this.start().then(
        () => this.logger.info('listening to the other nodes again'),
        (error: unknown) => {
          this.logger.warn({ err: error }, 'could not listen to the other nodes; retrying in a second');
          if (!this.stopped) this.listenAgain();
        },
      );
    }, 1000);
  }

  /** Announces to the other nodes; a failure is logged, the sweeper's pass is the safety net. */
  publish(kind: 'queued' | 'cancel', executions: Addressed[]): void {
    if (!this.store.dedicatedConnection) return;
    for (let i = 0; i < executions.length; i += PAIRS_PER_NOTICE) {
      this.notify({ kind, pairs: executions.slice(i, i + PAIRS_PER_NOTICE).map((e) => [e.id, e.hostId]) }, 'could not announce to other nodes; their next sweep picks it up');
    }
  }

  /** A tenant's keys, allowlist or throttle changed: other nodes drop what they cached of it. */
  publishTenantChanged(tenantId: string): void {
    if (!this.store.dedicatedConnection) return;
    this.notify({ kind: 'tenant', tenantId }, 'could not tell other nodes of a tenant change; they reload it within 30 s');
  }

  /** NOTIFY on any pooled connection; a failure is only logged, each caller has a safety net. */
  private notify(notice: Notice, onFailure: string): void {
    sql`select pg_notify(${CHANNEL}, ${JSON.stringify(notice)})`.execute(this.store.db).catch((error: unknown) => {
      this.logger.warn({ err: error }, onFailure);
    });
  }

  /**
   * Live output notices (cluster/live-relay.ts) go out on this node's listening connection: one
   * connection runs them one after the other, so they arrive in the order they were sent.
   */
  announceLive(notice: LiveNotice): void {
    if (!this.listener) return;
    this.listener.query('select pg_notify($1, $2)', [CHANNEL, JSON.stringify(notice)]).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'could not relay live output to other nodes; streams there show it when the run ends');
    });
  }

  private receive(payload: string | undefined): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload ?? '') as Notice;
    } catch {
      return;
    }
    if (notice.kind === 'watch' || notice.kind === 'output') return this.handlers.live(notice);
    if (notice.kind === 'tenant') return this.handlers.tenantChanged(notice.tenantId);
    const executions = notice.pairs.map(([id, hostId]) => ({ id, hostId }));
    if (notice.kind === 'queued') this.handlers.queued(executions);
    else if (notice.kind === 'cancel') this.handlers.cancel(executions);
  }
}
