import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

/** A node that has not beaten for this long is dead: its agent sessions and claims are void. */
export const NODE_DEAD_AFTER_MS = 15_000;

export function newNodeId(): string {
  return randomUUID();
}

export async function registerNode(db: Kysely<Database>, nodeId: string, now = Date.now()): Promise<void> {
  await db.insertInto('nodes').values({ id: nodeId, started_at: now, heartbeat_at: now }).execute();
}

export async function beat(db: Kysely<Database>, nodeId: string, now = Date.now()): Promise<void> {
  await db.updateTable('nodes').set({ heartbeat_at: now }).where('id', '=', nodeId).execute();
}

export async function unregisterNode(db: Kysely<Database>, nodeId: string): Promise<void> {
  await db.deleteFrom('nodes').where('id', '=', nodeId).execute();
}

/**
 * Nodes other than `self` that are gone. With SQLite only one process serves the database, so
 * every other node is a previous run; with PostgreSQL a node is gone once its heartbeat is stale.
 */
export async function deadNodes(db: Kysely<Database>, self: string, singleNode: boolean, now = Date.now()): Promise<string[]> {
  let query = db.selectFrom('nodes').select('id').where('id', '!=', self);
  if (!singleNode) query = query.where('heartbeat_at', '<', now - NODE_DEAD_AFTER_MS);
  return (await query.execute()).map((row) => row.id);
}
