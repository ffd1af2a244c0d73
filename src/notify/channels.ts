import type { Kysely } from 'kysely';
import { PitcrewError, notFound, type FieldError } from '../errors/catalogue.js';
import { compileBodyCheck } from '../http/validation.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, NotifyChannelRow } from '../store/schema.js';
import { withUniqueName } from '../store/unique.js';
import { CHANNEL_TYPES, COMPLETE_CONFIG, SECRET_FIELDS, type ChannelInputShape, type ChannelMode, type ChannelPatch, type ChannelType } from './schema.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { OpenChannel } from './senders/index.js';

type Db = Kysely<Database>;

// A merged PATCH is checked against the same schema as a new channel's config.
const configChecks = Object.fromEntries(CHANNEL_TYPES.map((type) => [type, compileBodyCheck(COMPLETE_CONFIG[type], 'body/config')])) as Record<ChannelType, (value: unknown) => FieldError[]>;

export async function createChannel(db: Db, box: SecretBox, tenantId: string, input: ChannelInputShape, now = Date.now()): Promise<NotifyChannelRow> {
  assertPlaceToPost(input.type, input.config);
  await assertRulesExist(db, tenantId, input.ruleIds);
  const id = newId(now);
  const { config, secrets } = split(input.type, input.config);
  const row: NotifyChannelRow = {
    id,
    tenant_id: tenantId,
    name: input.name.trim(),
    type: input.type,
    mode: input.mode ?? 'all',
    config: JSON.stringify(config),
    secrets: seal(box, id, secrets),
    rule_ids: input.ruleIds ? JSON.stringify(input.ruleIds) : null,
    created_at: now,
    updated_at: now,
    last_delivered_at: null,
    last_error: null,
    last_error_at: null,
  };
  await withUniqueName('channel', row.name, () => db.insertInto('notify_channels').values(row).execute());
  return row;
}

export async function getChannel(db: Db, tenantId: string, id: string): Promise<NotifyChannelRow> {
  const row = await db.selectFrom('notify_channels').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('channel', id);
  return row;
}

export async function listChannels(db: Db, tenantId: string, page: PageRequest): Promise<NotifyChannelRow[]> {
  let query = db.selectFrom('notify_channels').selectAll().where('tenant_id', '=', tenantId);
  if (page.after) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/** Every channel of the tenants given, for routing a batch of notifications. */
export async function channelsOfTenants(db: Db, tenantIds: string[]): Promise<NotifyChannelRow[]> {
  if (tenantIds.length === 0) return [];
  return db.selectFrom('notify_channels').selectAll().where('tenant_id', 'in', tenantIds).orderBy('id').execute();
}

/** Applies a PATCH: given config fields replace stored ones, null removes one; a secret left out is kept. */
export async function updateChannel(db: Db, box: SecretBox, current: NotifyChannelRow, patch: ChannelPatch, now = Date.now()): Promise<NotifyChannelRow> {
  await assertRulesExist(db, current.tenant_id, patch.ruleIds);
  const changes: Partial<NotifyChannelRow> = { updated_at: now };
  if (patch.name !== undefined) changes.name = patch.name.trim();
  if (patch.mode !== undefined) changes.mode = patch.mode;
  if (patch.ruleIds !== undefined) changes.rule_ids = patch.ruleIds ? JSON.stringify(patch.ruleIds) : null;
  if (patch.config !== undefined) {
    const type = current.type as ChannelType;
    // null removes an optional setting (e.g. {"username": null, "password": null} turns AUTH off).
    const merged = Object.fromEntries(Object.entries({ ...openChannel(box, current).config, ...patch.config }).filter(([, value]) => value !== null));
    const errors = configChecks[type](merged);
    if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}`, { fieldErrors: errors });
    assertPlaceToPost(type, merged);
    const { config, secrets } = split(type, merged);
    changes.config = JSON.stringify(config);
    changes.secrets = seal(box, current.id, secrets);
  }
  await withUniqueName('channel', changes.name ?? current.name, () => db.updateTable('notify_channels').set(changes).where('id', '=', current.id).execute());
  return { ...current, ...changes };
}

/** A Slack channel posts through its incoming webhook or its app: without either it could send nothing. */
function assertPlaceToPost(type: ChannelType, config: Record<string, unknown>): void {
  if (type !== 'slack' || typeof config.webhookUrl === 'string' || typeof config.botToken === 'string') return;
  const error = { path: '/body/config/webhookUrl', message: "is required unless the channel has a Slack app (botToken, signingSecret, channelId): it is where the channel's messages go" };
  throw new PitcrewError('PITCREW_ERR_VALIDATION', `${error.path}: ${error.message}`, { fieldErrors: [error] });
}

/** Deletes the channel with what it still had to send; its attempts go with it. */
export async function deleteChannel(db: Db, tenantId: string, id: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const deleted = await tx.deleteFrom('notify_channels').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw notFound('channel', id);
    await tx.deleteFrom('notify_deliveries').where('channel_id', '=', id).execute();
    await tx.deleteFrom('notify_attempts').where('channel_id', '=', id).execute();
  });
}

/** The channel with its secrets opened, for a send. Throws SecretBoxError when they do not open. */
export function openChannel(box: SecretBox, row: NotifyChannelRow): OpenChannel {
  const secrets = row.secrets ? (JSON.parse(box.open(row.secrets, row.id)) as Record<string, unknown>) : {};
  return { id: row.id, name: row.name, type: row.type as ChannelType, config: { ...(JSON.parse(row.config) as Record<string, unknown>), ...secrets } };
}

export function channelMode(row: NotifyChannelRow): ChannelMode {
  return row.mode as ChannelMode;
}

export function ruleFilter(row: NotifyChannelRow): string[] | null {
  return row.rule_ids ? (JSON.parse(row.rule_ids) as string[]) : null;
}

function split(type: ChannelType, all: Record<string, unknown>): { config: Record<string, unknown>; secrets: Record<string, unknown> } {
  const config: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(all)) {
    if (value === undefined) continue;
    (SECRET_FIELDS[type].includes(key) ? secrets : config)[key] = value;
  }
  return { config, secrets };
}

function seal(box: SecretBox, id: string, secrets: Record<string, unknown>): string | null {
  return Object.keys(secrets).length > 0 ? box.seal(JSON.stringify(secrets), id) : null;
}

async function assertRulesExist(db: Db, tenantId: string, ruleIds: string[] | null | undefined): Promise<void> {
  if (!ruleIds?.length) return;
  const found = new Set((await db.selectFrom('rules').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ruleIds).where('deleted_at', 'is', null).execute()).map((r) => r.id));
  const errors = ruleIds.flatMap((id, i) => (found.has(id) ? [] : [{ path: `/body/ruleIds/${i}`, message: `no rule ${id} in this tenant` }]));
  if (errors.length > 0) throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}`, { fieldErrors: errors });
}
