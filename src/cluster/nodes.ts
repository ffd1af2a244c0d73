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
 * Which service nodes are alive. A node that dies takes its agent sessions with it: what ran
 * through them must be reported lost, at once. With SQLite only one process serves the data, so
 * every other node is a previous run. With PostgreSQL each node holds an advisory lock on a
 * connection of its own for its whole life; the server frees it the moment the process dies, so
 * "can I take that lock?" is an exact test, with the heartbeat as a fallback.
 */
export class NodeRegistry {
  private lockHolder: pg.Client | undefined;

  constructor(
    private readonly store: Store,
    readonly nodeId: string,
  ) {}

  async register(now = Date.now()): Promise<void> {
    if (this.store.dedicatedConnection) {
      this.lockHolder = await this.store.dedicatedConnection();
      await this.lockHolder.query('select pg_advisory_lock(hashtextextended($1, 0))', [this.nodeId]);
    }
    await this.store.db.insertInto('nodes').values({ id: this.nodeId, started_at: now, heartbeat_at: now }).execute();
  }

  async beat(now = Date.now()): Promise<void> {
    await this.store.db.updateTable('nodes').set({ heartbeat_at: now }).where('id', '=', this.nodeId).execute();
  }

  async unregister(): Promise<void> {
    await this.store.db.deleteFrom('nodes').where('id', '=', this.nodeId).execute();
    await this.lockHolder?.end();
    this.lockHolder = undefined;
  }

  /** The registered nodes, other than this one, that are gone. */
  async deadNodes(now = Date.now()): Promise<string[]> {
    const others = await this.store.db.selectFrom('nodes').select(['id', 'heartbeat_at']).where('id', '!=', this.nodeId).execute();
    const dead: string[] = [];
    for (const node of others) {
      if (this.store.dialect === 'sqlite' || now - node.heartbeat_at > NODE_DEAD_AFTER_MS || (await this.lockIsFree(node.id))) dead.push(node.id);
    }
    return dead;
  }

  private async lockIsFree(nodeId: string): Promise<boolean> {
    return this.store.db.connection().execute(async (connection) => {
      const { rows } = await sql<{ free: boolean }>`select pg_try_advisory_lock(hashtextextended(${nodeId}, 0)) as free`.execute(connection);
      if (rows[0]?.free) await sql`select pg_advisory_unlock(hashtextextended(${nodeId}, 0))`.execute(connection);
      return rows[0]?.free === true;
    });
  }
}
