import type { Kysely, Transaction } from 'kysely';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, NotifyAttemptRow } from '../store/schema.js';
import type { SendResult } from './senders/result.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface AttemptRecord {
  tenantId: string;
  channelId: string;
  deliveryId: string | null;
  kind: string;
  title: string;
  attempt: number;
  result: SendResult;
  durationMs: number;
}

/** Records one try and brings the channel's "last delivered" / "last error" up to date. */
export async function recordAttempt(db: Db, record: AttemptRecord, now = Date.now()): Promise<void> {
  const { result } = record;
  await db
    .insertInto('notify_attempts')
    .values({
      id: newId(now),
      tenant_id: record.tenantId,
      channel_id: record.channelId,
      delivery_id: record.deliveryId,
      message_kind: record.kind,
      title: record.title,
      attempt: record.attempt,
      ok: result.ok ? 1 : 0,
      status: result.status,
      error: result.ok ? null : result.error,
      duration_ms: Math.round(record.durationMs),
      at: now,
    })
    .execute();
  const channel = result.ok ? { last_delivered_at: now } : { last_error: result.error, last_error_at: now };
  await db.updateTable('notify_channels').set(channel).where('id', '=', record.channelId).execute();
}

/** A channel's attempts, newest first. */
export async function listAttempts(db: Db, channelId: string, page: PageRequest): Promise<NotifyAttemptRow[]> {
  let query = db.selectFrom('notify_attempts').selectAll().where('channel_id', '=', channelId);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}
