import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Store } from '../store/database.js';
import { preparedQuery, preparedStatement } from '../store/prepared.js';

/** Without a lock to test (a node cut off from the database), a heartbeat this old means dead. */
export const NODE_DEAD_AFTER_MS = 15_000;

export function newNodeId(): string {
  return randomUUID();
}

/**
 * How long after its own database link came back (or its lock connection broke) a node waits
 * before it believes a free lock. A PostgreSQL restart or failover cuts every connection at once,
 * the lock connections too; each live node takes its lock again at its next beat (every second).
 * Believed at once, the first node back would take all the others for dead and end their running
 * executions lost.
 */
export const LOCK_TRUST_AFTER_MS = 3_000;

/**
 * Which service nodes are alive. A node that dies takes its agent sessions with it: what ran
 * through them must be reported lost. With SQLite only one process serves the data, so every
 * other node is a previous run. With PostgreSQL each node holds an advisory lock on a connection
 * of its own for its whole life; the server frees it the moment the process dies, so a node
 * whose lock is free is dead, and so is one silent for 15 s whatever its lock says.
 */
export class NodeRegistry {
  private lockHolder: pg.Client | undefined;
  /**
   * Since when this node has reached the database without a break (-Infinity: since it started);
   * undefined while it cannot. Other nodes' locks and heartbeats are judged only once they have
   * had as long as this node has had since the break to take and beat them again.
   */
  private healthySince: number | undefined = -Infinity;
  /**
   * On SQLite, once no other node is registered none can ever be: this process holds the data
   * directory's lock (store/sqlite-owner.ts). Every agent's hello asks for dead nodes; a
   * reconnecting fleet of 10,000 asked 10,000 times for rows that cannot exist (bench/fleet.js).
   */
  private aloneOnSqlite = false;

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
    // On SQLite no other node reads it (deadNodes), and each beat was a synced commit of its own:
    // ~7.5 ms of the event loop a second under ingest load (bench/run.js with a SQL timer).
    if (this.store.dialect === 'sqlite') return false;
    try {
      if (this.store.dedicatedConnection && !this.lockHolder) await this.holdLock();
      const updated = await this.store.db.executeQuery(heartbeat(this.store.db, this.nodeId, now));
      this.healthySince ??= now;
      if (Number(updated.numAffectedRows) > 0) return false;
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
   * free while that cannot be believed yet is waited for, so that what an agent reports is judged
   * against nodes known to be alive or dead.
   */
  async deadNodes(now = Date.now(), settle = false): Promise<string[]> {
    if (this.aloneOnSqlite) return [];
    for (;;) {
      const trustedFor = this.healthySince === undefined ? 0 : now - this.healthySince;
      const dead: string[] = [];
      let doubtful = false;
      const others = await this.others();
      if (others.length === 0 && this.store.dialect === 'sqlite') this.aloneOnSqlite = true;
      for (const node of others) {
        if (this.store.dialect === 'sqlite' || Math.min(now - node.heartbeat_at, trustedFor) > NODE_DEAD_AFTER_MS) dead.push(node.id);
        else if (await this.lockIsFree(node.id)) {
          if (trustedFor > LOCK_TRUST_AFTER_MS) dead.push(node.id);
          else doubtful = true;
        }
      }
      if (!settle || !doubtful) return dead;
      await new Promise((resolve) => setTimeout(resolve, LOCK_TRUST_AFTER_MS + 1 - trustedFor));
      now = Date.now();
    }
  }

  private others() {
    return otherNodes(this.store.db, this.nodeId);
  }

  /** Takes this node's lock on a connection of its own; when that connection breaks, the next beat takes it again. */
  private async holdLock(): Promise<void> {
    if (!this.store.dedicatedConnection) return;
    const holder = await this.store.dedicatedConnection();
    holder.once('end', () => {
      if (this.lockHolder !== holder) return;
      // Whatever broke this connection (a database restart) broke the other nodes' too.
      this.lockHolder = undefined;
      this.healthySince = undefined;
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

// Every sweep's statements (built once: store/prepared.ts).
const heartbeat = preparedStatement((db, nodeId: string, now: number) => db.updateTable('nodes').set({ heartbeat_at: now }).where('id', '=', nodeId));

const otherNodes = preparedQuery((db, nodeId: string) => db.selectFrom('nodes').select(['id', 'heartbeat_at']).where('id', '!=', nodeId));
