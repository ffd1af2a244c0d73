import type { Kysely } from 'kysely';
import { PitcrewError, type FieldError } from '../errors/catalogue.js';
import type { Database } from '../store/schema.js';
import { NO_CONTACTS, type Contacts } from './routing.js';
import type { ContactsInput, ContactsView } from './schema.js';

type Db = Kysely<Database>;

/** The tenant's escalation contacts; channels deleted since are left out. */
export async function getContacts(db: Db, tenantId: string): Promise<Contacts & { updatedAt: number | null }> {
  const row = await db.selectFrom('notify_contacts').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) return { ...NO_CONTACTS, updatedAt: null };
  const listed = JSON.parse(row.channel_ids) as string[];
  const wanted = row.email_channel_id ? [...listed, row.email_channel_id] : listed;
  const alive = new Set(wanted.length === 0 ? [] : (await db.selectFrom('notify_channels').select('id').where('tenant_id', '=', tenantId).where('id', 'in', wanted).execute()).map((r) => r.id));
  return {
    emails: JSON.parse(row.emails) as string[],
    channelIds: listed.filter((id) => alive.has(id)),
    emailChannelId: row.email_channel_id && alive.has(row.email_channel_id) ? row.email_channel_id : null,
    updatedAt: row.updated_at,
  };
}

/** Replaces the contacts. Channels must be the tenant's; addresses need an email channel to send them. */
export async function putContacts(db: Db, tenantId: string, input: ContactsInput, now = Date.now()): Promise<void> {
  const channels = await db.selectFrom('notify_channels').select(['id', 'type']).where('tenant_id', '=', tenantId).execute();
  const known = new Map(channels.map((c) => [c.id, c.type]));
  const errors: FieldError[] = input.channelIds.flatMap((id, i) => (known.has(id) ? [] : [{ path: `/body/channelIds/${i}`, message: `no channel ${id} in this tenant` }]));
  if (input.emailChannelId && known.get(input.emailChannelId) !== 'email') {
    errors.push({ path: '/body/emailChannelId', message: `${input.emailChannelId} is not an email channel of this tenant` });
  }
  if (input.emails.length > 0 && ![...known.values()].includes('email')) {
    errors.push({ path: '/body/emails', message: 'on-call addresses are sent to through an email channel’s SMTP server: create an email channel first (its mode may be disabled)' });
  }
  if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}`, { fieldErrors: errors });
  const row = { tenant_id: tenantId, emails: JSON.stringify(input.emails), channel_ids: JSON.stringify(input.channelIds), email_channel_id: input.emailChannelId ?? null, updated_at: now };
  await db
    .insertInto('notify_contacts')
    .values(row)
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ emails: row.emails, channel_ids: row.channel_ids, email_channel_id: row.email_channel_id, updated_at: now }))
    .execute();
}

export function presentContacts(contacts: Contacts & { updatedAt: number | null }): ContactsView {
  return {
    emails: [...contacts.emails],
    channelIds: [...contacts.channelIds],
    emailChannelId: contacts.emailChannelId,
    updatedAt: contacts.updatedAt === null ? null : new Date(contacts.updatedAt).toISOString(),
  };
}
