import type { Kysely } from 'kysely';
import { notFound } from '../errors/catalogue.js';
import { newId } from '../store/ids.js';
import type { Database, GraphSnapshotsTable } from '../store/schema.js';

/** The largest image kept (a chart is tens of KB; a tool's own render a few hundred): past it the capture fails, saying so. */
export const MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024;

export interface NewSnapshot {
  tenantId: string;
  executionId: string;
  eventId: string;
  position: number;
  title: string;
  query: string;
  contentType: string;
  width: number;
  height: number;
  image: Uint8Array;
}

export type SnapshotMeta = Omit<GraphSnapshotsTable, 'image'>;
const META = ['id', 'tenant_id', 'execution_id', 'event_id', 'position', 'title', 'query', 'content_type', 'width', 'height', 'bytes', 'created_at'] as const;

/** The snapshots of one capture, in one insert: an execution shows all its graphs or none. */
export async function insertSnapshots(db: Kysely<Database>, snapshots: readonly NewSnapshot[], now: number): Promise<string[]> {
  if (snapshots.length === 0) return [];
  const rows = snapshots.map((s) => ({
    id: newId(now), tenant_id: s.tenantId, execution_id: s.executionId, event_id: s.eventId, position: s.position, title: s.title, query: s.query,
    content_type: s.contentType, width: s.width, height: s.height, bytes: s.image.byteLength, image: s.image, created_at: now,
  }));
  await db.insertInto('graph_snapshots').values(rows).execute();
  return rows.map((row) => row.id);
}

/** The snapshots an execution view lists: its own (a graph_snapshot run), or its event's (a fix that captured graphs too). */
export async function snapshotsOfExecution(db: Kysely<Database>, tenantId: string, execution: { id: string; event_id: string }): Promise<SnapshotMeta[]> {
  const rows = await db.selectFrom('graph_snapshots').select(META).where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([eb('execution_id', '=', execution.id), eb('event_id', '=', execution.event_id)]))
    .orderBy('id').execute();
  return rows.map(numbers);
}

/** An event's snapshots, oldest first (a notification of the event's run shows them): at most `limit`. */
export async function snapshotsOfEvent(db: Kysely<Database>, tenantId: string, eventId: string, limit: number): Promise<SnapshotMeta[]> {
  const rows = await db.selectFrom('graph_snapshots').select(META).where('tenant_id', '=', tenantId).where('event_id', '=', eventId)
    .orderBy('id').limit(limit).execute();
  return rows.map(numbers);
}

/** The images of the snapshots named, those still kept (retention may have deleted some), in no order. */
export async function imagesOf(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Array<{ id: string; content_type: string; image: Uint8Array }>> {
  if (ids.length === 0) return [];
  return db.selectFrom('graph_snapshots').select(['id', 'content_type', 'image']).where('tenant_id', '=', tenantId).where('id', 'in', [...ids]).execute();
}

/** The latest snapshots of a rule's executions, newest first: the rule page's and its events' pictures. */
export async function latestSnapshotsOfRule(db: Kysely<Database>, tenantId: string, ruleId: string, limit: number): Promise<SnapshotMeta[]> {
  const rows = await db.selectFrom('graph_snapshots').innerJoin('executions', 'executions.id', 'graph_snapshots.execution_id')
    .select(META.map((column) => `graph_snapshots.${column}` as const))
    .where('graph_snapshots.tenant_id', '=', tenantId).where('executions.rule_id', '=', ruleId)
    .orderBy('graph_snapshots.id', 'desc').limit(limit).execute();
  return rows.map(numbers);
}

export async function getSnapshot(db: Kysely<Database>, tenantId: string, id: string): Promise<GraphSnapshotsTable> {
  const row = await db.selectFrom('graph_snapshots').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('snapshot', id);
  return { ...numbers(row), image: row.image };
}

/** A snapshot of the tenant without its image (what a link is made for). */
export async function getSnapshotMeta(db: Kysely<Database>, tenantId: string, id: string): Promise<SnapshotMeta> {
  const row = await db.selectFrom('graph_snapshots').select(META).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('snapshot', id);
  return numbers(row);
}

/** Without checking the tenant: a signed link names the tenant in its signature, checked after. */
export async function findSnapshot(db: Kysely<Database>, id: string): Promise<GraphSnapshotsTable | undefined> {
  const row = await db.selectFrom('graph_snapshots').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? { ...numbers(row), image: row.image } : undefined;
}

/** PostgreSQL's bigint comes back as text. */
function numbers<T extends SnapshotMeta>(row: T): T {
  return { ...row, created_at: Number(row.created_at), width: Number(row.width), height: Number(row.height), bytes: Number(row.bytes), position: Number(row.position) };
}
