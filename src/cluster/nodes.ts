import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Store } from '../store/database.js';

/** Without a lock to test (a node cut off from the database), a heartbeat this old means dead. */
export const NODE_DEAD_AFTER_MS = 15_000;

export function newNodeId(): string {
  return randomUUID();
}

/**
 * A node whose lock is free is dead only once it has also stopped beating for this long. A live
 * node loses its lock when its lock connection breaks (a PostgreSQL restart or failover cuts every
 * connection at once) and takes it again at its next beat, every second: without this wait the
 * first node back would take all the others for dead and end their running executions lost.
 */
export const LOCK_FREE_DEAD_AFTER_MS = 3_000;

/**
 * Which service nodes are alive. A node that dies takes its agent sessions with it: what ran
 * through them must be reported lost. With SQLite only one process serves the data, so every
 * other node is a previous run. With PostgreSQL each node holds an advisory lock on a connection
 * of its own for its whole life; the server frees it the moment the process dies, so a node
 * whose lock is free and whose heartbeat has stopped is dead, and one silent for 15 s is dead
 * whatever its lock says.
 */
export class NodeRegistry {
  private lockHolder: pg.Client | undefined;
  /**
   * Since when this node has reached the database without a break: undefined while it cannot.
   * Other nodes' heartbeats and locks mean nothing for a while after an outage, since nobody
   * could beat or lock during it: they are judged only once they had as long as we had.
   */
  private healthySince: number | undefined = -Infinity;

  constructor(
    private readonly store: Store,
    readonly nodeId: string,
  ) {}

  async register(now = Date.now()): Promise<void> {
    await this.holdLock();
    await this.store.db.insertInto('nodes').values({ id: this.nodeId, started_at: now, heartbeat_at: now }).execute();
  }

  /**
   * Records that this node is alive; takes its lock again if its lock connection broke. Answers
   * true when another node had taken this one for dead (its row was gone): what ran through it
   * has been settled as lost or re-queued, and its agents must connect afresh.
   */
  async beat(now = Date.now()): Promise<boolean> {
    try {
      if (this.store.dedicatedConnection && !this.lockHolder) await this.holdLock();
      const updated = await this.store.db.updateTable('nodes').set({ heartbeat_at: now }).where('id', '=', this.nodeId).executeTakeFirst();
      this.healthySince ??= now;
      if (Number(updated.numUpdatedRows) > 0) return false;
      await this.store.db.insertInto('nodes').values({ id: this.nodeId, started_at: now, heartbeat_at: now }).execute();
      return true;
    } catch (error) {
      this.healthySince = undefined;
      throw error;
    }
  }

  async unregister(): Promise<void> {
    await this.store.db.deleteFrom('nodes').where('id', '=', this.nodeId).execute();
    const holder = this.lockHolder;
    this.lockHolder = undefined;
    await holder?.end();
  }

  /**
   * The registered nodes, other than this one, that are gone. With `settle`, a node whose lock is
   * free but whose heartbeat is still recent is waited for until it beats again or is dead, so
   * that what an agent reports is judged against nodes known to be alive.
   */
  async deadNodes(now = Date.now(), settle = false): Promise<string[]> {
    const dead: string[] = [];
    let others = await this.others();
    for (;;) {
      const suspects: typeof others = [];
      const healthyFor = this.healthySince === undefined ? 0 : now - this.healthySince;
      for (const node of others) {
        const age = Math.min(now - node.heartbeat_at, healthyFor);
        if (this.store.dialect === 'sqlite' || age > NODE_DEAD_AFTER_MS) dead.push(node.id);
        else if (await this.lockIsFree(node.id)) {
          if (age > LOCK_FREE_DEAD_AFTER_MS) dead.push(node.id);
          else suspects.push(node);
        }
      }
      if (!settle || suspects.length === 0) return dead;
      const oldest = Math.max(Math.min(...suspects.map((node) => node.heartbeat_at)), this.healthySince ?? now);
      await new Promise((resolve) => setTimeout(resolve, oldest + LOCK_FREE_DEAD_AFTER_MS + 1 - now));
      now = Date.now();
      const ids = new Set(suspects.map((node) => node.id));
      others = (await this.others()).filter((node) => ids.has(node.id));
    }
  }

  private others() {
    return this.store.db.selectFrom('nodes').select(['id', 'heartbeat_at']).where('id', '!=', this.nodeId).execute();
  }

  /** Takes this node's lock on a connection of its own; when that connection breaks, the next beat takes it again. */
  private async holdLock(): Promise<void> {
    if (!this.store.dedicatedConnection) return;
    const holder = await this.store.dedicatedConnection();
    holder.once('end', () => {
      if (this.lockHolder === holder) this.lockHolder = undefined;
    });
    try {
      await holder.query('select pg_advisory_lock(hashtextextended($1, 0))', [this.nodeId]);
    } catch (error) {
      await holder.end().catch(() => undefined);
      throw error;
    }
    this.lockHolder = holder;
  }

  private async lockIsFree(nodeId: string): Promise<boolean> {
    return this.store.db.connection().execute(async (connection) => {
      const { rows } = await sql<{ free: boolean }>`select pg_try_advisory_lock(hashtextextended(${nodeId}, 0)) as free`.execute(connection);
      if (rows[0]?.free) await sql`select pg_advisory_unlock(hashtextextended(${nodeId}, 0))`.execute(connection);
      return rows[0]?.free === true;
    });
  }
}
