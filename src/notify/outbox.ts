import type { Kysely, Transaction } from 'kysely';
import { newId } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import { channelMode, channelsOfTenants, ruleFilter } from './channels.js';
import { getContacts } from './contacts.js';
import type { Notification } from './notification.js';
import { digest } from './messages/digest.js';
import type { Contacts, RoutableChannel, Target } from './routing.js';
import type { ChannelType } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewMessage {
  tenantId: string;
  /** Unique per thing to tell: a repeat with the same key (another node, a retry) adds nothing. */
  dedupeKey: string;
  ruleId: string | null;
  executionId?: string | null;
  notification: Notification;
}

/**
 * Writes a message and one delivery per target, once: the message is keyed by its dedupe key,
 * deliveries by (message, channel, audience). Returns the message id, or null when the key was
 * already taken (nothing was written).
 */
export async function enqueue(db: Db, message: NewMessage, targets: Target[], now = Date.now()): Promise<string | null> {
  const id = newId(now);
  const inserted = await db
    .insertInto('notify_messages')
    .values({
      id,
      tenant_id: message.tenantId,
      kind: message.notification.kind,
      dedupe_key: message.dedupeKey,
      severity: message.notification.severity,
      rule_id: message.ruleId,
      execution_id: message.executionId ?? null,
      title: digest(message.notification).title,
      body: JSON.stringify(message.notification),
      created_at: now,
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return null;
  if (targets.length > 0) {
    await db
      .insertInto('notify_deliveries')
      .values(targets.map((t) => ({
        id: newId(now),
        message_id: id,
        tenant_id: message.tenantId,
        channel_id: t.channelId,
        audience: t.audience,
        recipients: t.recipients ? JSON.stringify(t.recipients) : null,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
      })))
      .execute();
  }
  return id;
}

export interface TenantRouting {
  channels: RoutableChannel[];
  contacts: Contacts;
}

/** Channels and contacts of the tenants given, as routing reads them. */
export async function routingOf(db: Kysely<Database>, tenantIds: string[]): Promise<Map<string, TenantRouting>> {
  const byTenant = new Map<string, TenantRouting>();
  for (const tenantId of tenantIds) byTenant.set(tenantId, { channels: [], contacts: await getContacts(db, tenantId) });
  for (const row of await channelsOfTenants(db, tenantIds)) {
    byTenant.get(row.tenant_id)!.channels.push({ id: row.id, type: row.type as ChannelType, mode: channelMode(row), ruleIds: ruleFilter(row) });
  }
  return byTenant;
}
