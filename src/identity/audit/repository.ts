import type { Kysely } from 'kysely';
import { inBatchTransaction } from '../../store/batch.js';
import type { Durability } from '../../store/durability.js';
import { idFloor, newId } from '../../store/ids.js';
import { preparedStatement } from '../../store/prepared.js';
import type { PageRequest } from '../../store/pagination.js';
import type { AuditLogRow, Database } from '../../store/schema.js';
import type { AuditActor, AuditRecord } from './entry.js';

/** Appends one entry, in the caller's transaction if it is one. Nothing here updates or deletes: only retention removes entries. */
export async function appendAudit(db: Kysely<Database>, record: AuditRecord): Promise<void> {
  await auditInsert(db, record).execute();
}

/** Appends one entry in the caller's transaction `tx`, with the statement compiled once for `db` (store/prepared.ts). */
export async function appendAuditIn(db: Kysely<Database>, tx: Kysely<Database>, record: AuditRecord): Promise<void> {
  await tx.executeQuery(preparedAuditInsert(db, ...auditValues(record)));
}

/**
 * Appends one entry as a group-commit transaction of its own (store/batch.ts): on SQLite its
 * WAL is synced off the event loop, so the entry costs the change's caller a wait, not every
 * other request the time of a second synchronous sync. Resolves once the entry is on disk.
 */
export async function appendAuditDurably(db: Kysely<Database>, durability: Durability, record: AuditRecord): Promise<void> {
  const insert = preparedAuditInsert(db, ...auditValues(record));
  const { durable } = await inBatchTransaction(db, durability, async (tx) => {
    await tx.begin([]);
    await tx.commit([insert]);
  });
  await durable;
}

function auditInsert(db: Kysely<Database>, record: AuditRecord) {
  return insertRow(db, ...auditValues(record));
}

type AuditValues = [id: string, tenantId: string, at: number, actor: string, actorId: string, actorUserId: string | null, actorEmail: string | null, via: string, ip: string | null, action: string, targetType: string, targetId: string | null, before: string | null, after: string | null];

function auditValues(record: AuditRecord): AuditValues {
  return [
    newId(record.at), record.tenantId, record.at, JSON.stringify(record.actor),
    record.actor.type === 'anonymous' ? ANONYMOUS : record.actor.id,
    actorUserId(record.actor),
    record.actor.type === 'api_key' ? null : (record.actor.email?.toLowerCase() ?? null),
    record.via, record.ip, record.action, record.targetType, record.targetId,
    record.before === undefined || record.before === null ? null : JSON.stringify(record.before),
    record.after === undefined || record.after === null ? null : JSON.stringify(record.after),
  ];
}

function insertRow(db: Kysely<Database>, ...[id, tenantId, at, actor, actorId, userId, email, via, ip, action, targetType, targetId, before, after]: AuditValues) {
  return db.insertInto('audit_log').values({
    id, tenant_id: tenantId, at, actor, actor_id: actorId, actor_user_id: userId, actor_email: email,
    via, ip, action, target_type: targetType, target_id: targetId, before, after,
  });
}

/** Every audited change writes one: built once (store/prepared.ts). */
const preparedAuditInsert = preparedStatement(insertRow);

/** The actor id of every `anonymous` actor: `actor=anonymous` lists the refused attempts of nobody known. */
export const ANONYMOUS = 'anonymous';

/** The person behind the actor: the user, or the token's user; null for an API key or someone unknown. */
function actorUserId(actor: AuditActor): string | null {
  if (actor.type === 'user') return actor.id;
  return actor.type === 'token' ? actor.userId : null;
}

export interface AuditFilter {
  /** A user id (their own changes and their tokens'), a token or key id, or a person's e-mail. */
  actor?: string | undefined;
  /** A target type (`rule`) or a type and id (`rule:0190…`). */
  target?: string | undefined;
  /** An action (`rule.update`), or a prefix ending in a dot (`rule.`). */
  action?: string | undefined;
  /** Epoch ms, both inclusive. */
  from?: number | undefined;
  to?: number | undefined;
}

/** One page, newest first (`order: 'desc'`), or oldest first for an export. */
export async function listAudit(db: Kysely<Database>, tenantId: string, filter: AuditFilter, page: PageRequest, order: 'asc' | 'desc' = 'desc'): Promise<AuditLogRow[]> {
  let query = db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId);
  if (filter.actor) {
    const actor = filter.actor;
    query = actor.includes('@')
      ? query.where('actor_email', '=', actor.toLowerCase())
      : query.where((eb) => eb.or([eb('actor_id', '=', actor), eb('actor_user_id', '=', actor)]));
  }
  if (filter.target) {
    const [type, ...rest] = filter.target.split(':');
    query = query.where('target_type', '=', type!);
    if (rest.length > 0) query = query.where('target_id', '=', rest.join(':'));
  }
  if (filter.action) {
    // A prefix as a range, not LIKE: an index serves it on both databases, and `_` means itself.
    query = filter.action.endsWith('.')
      ? query.where('action', '>=', filter.action).where('action', '<', `${filter.action.slice(0, -1)}/`)
      : query.where('action', '=', filter.action);
  }
  // Ids are UUIDv7 made at `at`: the time range is a range of the primary key.
  if (filter.from !== undefined) query = query.where('id', '>=', idFloor(filter.from));
  if (filter.to !== undefined) query = query.where('id', '<', idFloor(filter.to + 1));
  if (page.after) query = query.where('id', order === 'desc' ? '<' : '>', page.after);
  return query.orderBy('id', order).limit(page.limit + 1).execute();
}
