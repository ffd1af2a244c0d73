import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import { ACTIVE_STATES } from '../executions/states.js';
import type { Metrics } from '../metrics/registry.js';
import type { Dialect } from '../store/database.js';
import { idFloor } from '../store/ids.js';
import type { Database } from '../store/schema.js';

const DAY_MS = 86_400_000;
/** How often a pass runs once the backlog is gone; while rows are left, every sweep takes a batch. */
const IDLE_INTERVAL_MS = 10 * 60_000;
/** Its own key of PostgreSQL's two-key advisory locks (executions/limit-window.ts has rules'). */
const RETENTION_LOCK_CLASS = 0x70637232;

export type PrunedTable = 'executions' | 'events' | 'alerts' | 'incidents' | 'imports' | 'escalations' | 'notify_messages' | 'notify_attempts' | 'audit_log';
export type Pruned = Record<PrunedTable, number>;

export interface RetentionDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  /** PITCREW_RETENTION_DAYS: history older than this many days is deleted. */
  days: number;
  logger: FastifyBaseLogger;
  metrics: Metrics;
  /** Rows of each table per transaction (200): small, so a batch holds SQLite's single writer only briefly. */
  batchSize?: number;
  /** The imports of each integration kept whatever their age (20): the newest, as its imports list shows them. */
  keepImports?: number;
}

/** An import under way is never deleted; `not in`, as for executions below, so SQLite reads the id index. */
const ACTIVE_IMPORT_STATES = ['queued', 'running'];

/**
 * Deletes history older than the retention period (docs/configuration.md, "History retention"):
 * ended executions with their transitions, artifacts, output and graph snapshots; events no execution still
 * needs; integrations' alert logs; incidents resolved before the period (an open one is kept
 * however old: it is still going on); ended imports of an integration's tool, but for its newest
 * `keepImports` (a tool imported every five minutes would otherwise add 288 rows a day, and an
 * integration imported rarely still shows its last imports); notified escalations; notifications whose deliveries ended, and delivery attempts;
 * audit log entries (identity/audit/: nothing else ever deletes one).
 * Never an execution still queued, dispatched or running, nor the event it came from. Rows are
 * selected by primary key: ids are UUIDv7, so `id < idFloor(cutoff)` means created before it.
 */
export class Retention {
  private readonly batchSize: number;
  private readonly keepImports: number;
  private lastRunAt = Number.NEGATIVE_INFINITY;
  private backlog = false;

  constructor(private readonly deps: RetentionDeps) {
    // Measured on SQLite (2-core VM, 20,000 ended executions with output, 157 MB): a batch of 200
    // executions and their events holds the writer 7.7 ms (p50; 500: 16 ms), and one a second
    // deletes ~17 million a day, far above any tenant's inflow.
    this.batchSize = deps.batchSize ?? 200;
    this.keepImports = deps.keepImports ?? 20;
  }

  /** Called by every sweep: one batch while old rows are left, else one look every 10 minutes. */
  async run(now: number): Promise<void> {
    if (!this.backlog && now - this.lastRunAt < IDLE_INTERVAL_MS) return;
    this.lastRunAt = now;
    const pruned = await this.pruneBatch(now);
    const total = Object.values(pruned).reduce((sum, n) => sum + n, 0);
    this.backlog = Object.values(pruned).some((n) => n >= this.batchSize);
    if (total === 0) return;
    for (const [table, count] of Object.entries(pruned)) if (count > 0) this.deps.metrics.retentionDeleted.inc({ table }, count);
    this.deps.logger.info({ deleted: pruned, olderThanDays: this.deps.days, more: this.backlog }, 'deleted history past its retention period');
  }

  /** One transaction: up to `batchSize` rows of each kind created before now − days. */
  async pruneBatch(now: number): Promise<Pruned> {
    const cutoffMs = now - this.deps.days * DAY_MS;
    const cutoff = idFloor(cutoffMs);
    return this.deps.db.transaction().execute(async (tx) => {
      // Several nodes sweep the same database: one prunes at a time, the others skip this round.
      if (this.deps.dialect === 'postgres' && !(await this.takeLock(tx))) return none();
      const executions = await this.pruneExecutions(tx, cutoff);
      const events = await this.pruneEvents(tx, cutoff);
      const alerts = await this.deleteIds(tx, 'alerts', tx.selectFrom('alerts').select('id').where('id', '<', cutoff));
      // An incident's id is the time it opened (incidents/book.ts): opened and resolved before the cutoff.
      const incidents = await this.deleteIds(tx, 'incidents', tx.selectFrom('incidents').select('id').where('id', '<', cutoff).where('state', '=', 'resolved').where('resolved_at', '<', cutoffMs));
      const imports = await this.deleteIds(tx, 'imports', this.endedImports(tx, cutoff));
      const escalations = await this.deleteIds(tx, 'escalations', tx.selectFrom('escalations').select('id').where('id', '<', cutoff).where('state', '=', 'notified').where('window_end', '<', cutoffMs));
      const notifyMessages = await this.pruneNotifyMessages(tx, cutoff);
      const notifyAttempts = await this.deleteIds(tx, 'notify_attempts', tx.selectFrom('notify_attempts').select('id').where('id', '<', cutoff));
      const auditLog = await this.deleteIds(tx, 'audit_log', tx.selectFrom('audit_log').select('id').where('id', '<', cutoff));
      return { executions, events, alerts, incidents, imports, escalations, notify_messages: notifyMessages, notify_attempts: notifyAttempts, audit_log: auditLog };
    });
  }

  /**
   * Ended imports started before the cutoff and older than their integration's newest
   * `keepImports` (the id of its keepImports-th newest import, through the (integration_id, id)
   * index; none when it has fewer, and then `<` is null: kept).
   */
  private endedImports(tx: Transaction<Database>, cutoff: string): IdQuery {
    return tx.selectFrom('imports as ended').select('ended.id').where('ended.id', '<', cutoff).where('ended.state', 'not in', ACTIVE_IMPORT_STATES)
      .where('ended.id', '<', (eb) => eb.selectFrom('imports as newer').select('newer.id').whereRef('newer.integration_id', '=', 'ended.integration_id').orderBy('newer.id', 'desc').limit(1).offset(this.keepImports - 1));
  }

  private async takeLock(tx: Transaction<Database>): Promise<boolean> {
    const { rows } = await sql<{ taken: boolean }>`select pg_try_advisory_xact_lock(${RETENTION_LOCK_CLASS}, 0) as taken`.execute(tx);
    return rows[0]?.taken === true;
  }

  private async pruneExecutions(tx: Transaction<Database>, cutoff: string): Promise<number> {
    // `not in` the active states, not `in` the terminal ones: SQLite would then pick the state
    // index and sort every ended execution for each batch (10,000 rows: 14 ms a batch of 100).
    const ids = await this.ids(tx.selectFrom('executions').select('id').where('id', '<', cutoff).where('state', 'not in', ACTIVE_STATES));
    if (ids.length === 0) return 0;
    await tx.deleteFrom('execution_transitions').where('execution_id', 'in', ids).execute();
    await tx.deleteFrom('execution_artifacts').where('execution_id', 'in', ids).execute();
    await tx.deleteFrom('graph_snapshots').where('execution_id', 'in', ids).execute();
    await tx.deleteFrom('notify_pending').where('execution_id', 'in', ids).execute();
    await tx.deleteFrom('executions').where('id', 'in', ids).execute();
    return ids.length;
  }

  /** Events without executions left. Their idempotency keys (kept 24 h) are long gone, but would block the delete (a foreign key). */
  private async pruneEvents(tx: Transaction<Database>, cutoff: string): Promise<number> {
    const ids = await this.ids(
      tx.selectFrom('events').select('id').where('id', '<', cutoff)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('executions').select('executions.id').whereRef('executions.event_id', '=', 'events.id')))),
    );
    if (ids.length === 0) return 0;
    await tx.deleteFrom('idempotency_keys').where('event_id', 'in', ids).execute();
    await tx.deleteFrom('events').where('id', 'in', ids).execute();
    return ids.length;
  }

  /** Messages none of whose deliveries is still to be sent, with those deliveries. */
  private async pruneNotifyMessages(tx: Transaction<Database>, cutoff: string): Promise<number> {
    const ids = await this.ids(
      tx.selectFrom('notify_messages').select('id').where('id', '<', cutoff)
        .where(({ not, exists, selectFrom }) => not(exists(
          selectFrom('notify_deliveries').select('notify_deliveries.id').whereRef('notify_deliveries.message_id', '=', 'notify_messages.id').where('notify_deliveries.state', 'in', ['pending', 'sending']),
        ))),
    );
    if (ids.length === 0) return 0;
    await tx.deleteFrom('notify_deliveries').where('message_id', 'in', ids).execute();
    await tx.deleteFrom('notify_messages').where('id', 'in', ids).execute();
    return ids.length;
  }

  private async deleteIds(tx: Transaction<Database>, table: 'alerts' | 'incidents' | 'imports' | 'escalations' | 'notify_attempts' | 'audit_log', select: IdQuery): Promise<number> {
    const ids = await this.ids(select);
    if (ids.length > 0) await tx.deleteFrom(table).where('id', 'in', ids).execute();
    return ids.length;
  }

  private async ids(select: IdQuery): Promise<string[]> {
    const rows = await select.orderBy('id').limit(this.batchSize).execute();
    return rows.map((row) => row.id);
  }
}

interface IdQuery {
  orderBy(column: 'id'): { limit(n: number): { execute(): Promise<Array<{ id: string }>> } };
}

function none(): Pruned {
  return { executions: 0, events: 0, alerts: 0, incidents: 0, imports: 0, escalations: 0, notify_messages: 0, notify_attempts: 0, audit_log: 0 };
}
