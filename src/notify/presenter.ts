import type { NotifyAttemptRow, NotifyChannelRow } from '../store/schema.js';
import { openChannel, ruleFilter } from './channels.js';
import { SECRET_FIELDS, type ChannelType, type ChannelView } from './schema.js';
import type { SecretBox } from '../identity/secret-box.js';

/**
 * The API view of a channel: settings as stored, secrets masked. A chat webhook URL shows its
 * scheme and host (enough to tell Slack from Teams) and "…(set)"; a password or signing secret
 * only whether it is set.
 */
export function presentChannel(row: NotifyChannelRow, box: SecretBox): ChannelView {
  const type = row.type as ChannelType;
  const config: Record<string, unknown> = JSON.parse(row.config) as Record<string, unknown>;
  let secrets: Record<string, unknown> = {};
  let unreadable = false;
  try {
    secrets = openChannel(box, row).config;
  } catch {
    unreadable = true;
  }
  for (const field of SECRET_FIELDS[type]) {
    const value = secrets[field];
    if (field === 'webhookUrl') config.webhookUrl = unreadable ? '(set; cannot be opened with this node’s secret key)' : typeof value === 'string' ? maskUrl(value) : null;
    else config[`${field}Set`] = unreadable || typeof value === 'string';
  }
  return {
    id: row.id,
    name: row.name,
    type,
    mode: row.mode as ChannelView['mode'],
    config,
    ruleIds: ruleFilter(row),
    status: status(row),
    lastDeliveredAt: iso(row.last_delivered_at),
    lastError: row.last_error,
    lastErrorAt: iso(row.last_error_at),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

export function maskUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…(set)`;
  } catch {
    return '…(set)';
  }
}

function status(row: NotifyChannelRow): ChannelView['status'] {
  if (row.mode === 'disabled') return 'disabled';
  if (row.last_error_at !== null && (row.last_delivered_at === null || row.last_error_at > row.last_delivered_at)) return 'failing';
  return row.last_delivered_at === null ? 'never_used' : 'ok';
}

export function presentAttempt(row: NotifyAttemptRow) {
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    kind: row.message_kind,
    title: row.title,
    attempt: row.attempt,
    ok: row.ok === 1,
    status: row.status,
    error: row.error,
    durationMs: row.duration_ms,
    at: iso(row.at)!,
  };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
