/*
 * The shapes of the notification API (docs/notifications.md) that the UI reads and sends.
 * Secrets are write-only: a view carries a mask ("…(set)") or a *Set flag, never the value.
 */

export const CHANNEL_TYPES = ['slack', 'teams', 'mattermost', 'google_chat', 'email', 'webhook'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export type ChatType = Exclude<ChannelType, 'email' | 'webhook'>;

export const CHANNEL_MODES = ['all', 'errors', 'disabled'] as const;
export type ChannelMode = (typeof CHANNEL_MODES)[number];

export type ChannelStatus = 'ok' | 'failing' | 'never_used' | 'disabled';

/** A channel's config as the API shows it: every field optional, secrets masked. */
export interface ChannelConfigView {
  webhookUrl?: string | null;
  url?: string;
  secretSet?: boolean;
  host?: string;
  port?: number;
  secure?: boolean;
  username?: string;
  passwordSet?: boolean;
  from?: string;
  to?: string[];
  requireTls?: boolean;
  ca?: string;
  /** Teams: the Azure Bot that posts approval requests with Approve and Reject. */
  botAppId?: string;
  botAppPasswordSet?: boolean;
  botTenantId?: string;
  serviceUrl?: string;
  conversationId?: string;
  /** Slack's app (approval buttons, docs/notifications.md "Slack app"). */
  botTokenSet?: boolean;
  signingSecretSet?: boolean;
  channelId?: string;
}

export interface Channel {
  id: string;
  name: string;
  type: ChannelType;
  mode: ChannelMode;
  config: ChannelConfigView;
  ruleIds: string[] | null;
  status: ChannelStatus;
  lastDeliveredAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ChannelInput {
  name: string;
  type: ChannelType;
  mode: ChannelMode;
  ruleIds: string[] | null;
  config: Record<string, unknown>;
}

/** Given fields replace stored ones; null removes an optional one; a secret left out is kept. */
export interface ChannelPatch {
  name?: string;
  mode?: ChannelMode;
  ruleIds?: string[] | null;
  config?: Record<string, unknown>;
}

export interface DeliveryAttempt {
  id: string;
  deliveryId: string | null;
  /** run, escalation, not_run, approval, runbook or test */
  kind: string;
  title: string;
  attempt: number;
  ok: boolean;
  /** "HTTP 503", "SMTP 535" */
  status: string | null;
  error: string | null;
  durationMs: number;
  at: string;
}

export interface TestResult {
  ok: true;
  status: string | null;
  durationMs: number;
}

export interface EscalationContacts {
  emails: string[];
  channelIds: string[];
  /** The email channel whose SMTP server sends to `emails`; null: the tenant's first one. */
  emailChannelId: string | null;
  updatedAt?: string | null;
}
