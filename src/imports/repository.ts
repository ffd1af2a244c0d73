import type { Kysely } from 'kysely';
import { recordImportStatus } from '../integrations/import-settings.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, ImportRow } from '../store/schema.js';
import { isUniqueViolation } from '../store/unique.js';
import { preparedQuery } from '../store/prepared.js';

type Db = Kysely<Database>;

export type ImportTrigger = 'schedule' | 'manual';

/**
 * Queues an import of the integration, unless one is queued or running already (at most one at a
 * time, across nodes: the `imports_one_active` index): then that one's id. `created` says which.
 */
export async function queueImport(db: Db, integration: { id: string; tenant_id: string }, trigger: ImportTrigger, now: number): Promise<{ id: string; created: boolean }> {
  const active = await activeImport(db, integration.id);
  if (active) return { id: active.id, created: false };
  const id = newId(now);
  try {
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('imports').values({
        id, tenant_id: integration.tenant_id, integration_id: integration.id, trigger, state: 'queued', queued_at: now,
        started_at: null, ended_at: null, imported: 0, pages: 0, error: null, cursor: null, node_id: null, claim: null,
      }).execute();
      await recordImportStatus(tx, integration.id, { last_import_id: id, last_state: 'queued', last_started_at: null, last_ended_at: null, last_imported: 0 });
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Another node or request queued one between the read and the insert.
    const other = await activeImport(db, integration.id);
    if (other) return { id: other.id, created: false };
    throw error;
  }
  return { id, created: true };
}

export async function activeImport(db: Db, integrationId: string): Promise<Pick<ImportRow, 'id' | 'state'> | undefined> {
  return db.selectFrom('imports').select(['id', 'state']).where('integration_id', '=', integrationId).where('state', 'in', ['queued', 'running']).executeTakeFirst();
}

/** Read by every pass of every node (built once: store/prepared.ts). */
export const queuedImports = preparedQuery((db, limit: number) => db.selectFrom('imports').selectAll().where('state', '=', 'queued').orderBy('id').limit(limit));

/** queued → running for this node, under a claim token its pages must show: the one caller that moved it gets true. */
export async function claimImport(db: Db, row: ImportRow, nodeId: string, claim: string, now: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const claimed = await tx.updateTable('imports')
      .set({ state: 'running', node_id: nodeId, claim, started_at: row.started_at ?? now })
      .where('id', '=', row.id).where('state', '=', 'queued')
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) return false;
    await recordImportStatus(tx, row.integration_id, { last_import_id: row.id, last_state: 'running', last_started_at: row.started_at ?? now, last_ended_at: null, last_imported: row.imported });
    return true;
  });
}

/**
 * The page's record under the claim (in the page's transaction): false when the claim no longer
 * holds (another node took the import over after taking this one for dead), and nothing may commit.
 */
export async function recordPage(db: Db, id: string, claim: string, page: { cursor: string; added: number }): Promise<boolean> {
  const updated = await db.updateTable('imports')
    .set((eb) => ({ cursor: page.cursor, imported: eb('imported', '+', page.added), pages: eb('pages', '+', 1) }))
    .where('id', '=', id).where('claim', '=', claim).where('state', '=', 'running')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** running → succeeded | failed, under the claim; the integration's status with it. */
export async function endImport(db: Db, row: Pick<ImportRow, 'id' | 'integration_id'>, claim: string, end: { state: 'succeeded' | 'failed'; error?: string; imported: number }, now: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const ended = await tx.updateTable('imports')
      .set({ state: end.state, ended_at: now, error: end.error ?? null, node_id: null, claim: null })
      .where('id', '=', row.id).where('claim', '=', claim).where('state', '=', 'running')
      .executeTakeFirst();
    if (Number(ended.numUpdatedRows) === 0) return false;
    await recordImportStatus(tx, row.integration_id, {
      last_state: end.state, last_ended_at: now, last_imported: end.imported,
      ...(end.error === undefined ? {} : { last_error: end.error, last_error_at: now }),
    });
    return true;
  });
}

/** running → queued under the claim: the service is stopping; this node or another continues from the cursor. */
export async function releaseImport(db: Db, row: Pick<ImportRow, 'id' | 'integration_id'>, claim: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const released = await tx.updateTable('imports').set({ state: 'queued', node_id: null, claim: null })
      .where('id', '=', row.id).where('claim', '=', claim).where('state', '=', 'running').executeTakeFirst();
    if (Number(released.numUpdatedRows) > 0) await recordImportStatus(tx, row.integration_id, { last_state: 'queued' });
  });
}

/**
 * Imports left `running` by a node that is gone (its row removed from `nodes` by the sweeper, which
 * tells dead nodes by their lock and heartbeat), or by this node without a run behind them (a
 * failure to record the end): queued again, to continue from their cursor.
 */
const runningImports = preparedQuery((db) => db.selectFrom('imports').select(['id', 'node_id']).where('state', '=', 'running'));

export async function requeueOrphans(db: Db, nodeId: string, runningHere: readonly string[]): Promise<number> {
  // A read first: every pass of every node asks, and there is rarely anything to do.
  const running = await runningImports(db);
  if (!running.some((row) => row.node_id !== nodeId || !runningHere.includes(row.id))) return 0;
  return db.transaction().execute(async (tx) => {
    const requeued = await tx.updateTable('imports').set({ state: 'queued', node_id: null, claim: null })
      .where('state', '=', 'running')
      .where('node_id', 'is not', null)
      .where((eb) => eb.or([
        eb('node_id', 'not in', eb.selectFrom('nodes').select('id')),
        eb.and([eb('node_id', '=', nodeId), ...(runningHere.length > 0 ? [eb('id', 'not in', [...runningHere])] : [])]),
      ]))
      .returning(['integration_id'])
      .execute();
    for (const row of requeued) await recordImportStatus(tx, row.integration_id, { last_state: 'queued' });
    return requeued.length;
  });
}

export async function getImport(db: Db, tenantId: string, id: string): Promise<ImportRow | undefined> {
  return db.selectFrom('imports').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** An integration's imports, newest first. */
export async function listImports(db: Db, integrationId: string, page: PageRequest): Promise<ImportRow[]> {
  let query = db.selectFrom('imports').selectAll().where('integration_id', '=', integrationId);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}
