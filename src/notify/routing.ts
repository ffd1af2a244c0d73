import type { Severity } from './notification.js';
import type { ChannelMode, ChannelType } from './schema.js';

/** What routing needs of a channel. */
export interface RoutableChannel {
  id: string;
  type: ChannelType;
  mode: ChannelMode;
  /** null: every rule. */
  ruleIds: readonly string[] | null;
}

/** The tenant's escalation contacts (GET/PUT /api/v1/escalation-contacts). */
export interface Contacts {
  emails: readonly string[];
  channelIds: readonly string[];
  emailChannelId: string | null;
}

export const NO_CONTACTS: Contacts = { emails: [], channelIds: [], emailChannelId: null };

export interface Routed {
  kind: 'run' | 'escalation' | 'not_run' | 'runbook' | 'approval';
  severity: Severity;
  ruleId: string | null;
  /** For a runbook: the addresses it goes to. */
  recipients?: readonly string[];
}

export interface Target {
  channelId: string;
  /** 'channel': the channel's own recipients; 'contacts': its SMTP server, to `recipients`. */
  audience: 'channel' | 'contacts';
  recipients: string[] | null;
}

/**
 * Who hears about a message (docs/notifications.md, "Modes"). Pure, so every case is a table row.
 * - a run: channels in mode `all`, or `errors` when something failed; each within its rule filter
 * - an escalation: the same channels (an escalation is an error), plus the escalation contacts:
 *   their channels whatever their mode (unless disabled) and filter, and their email addresses
 * - a runbook: only its recipients, by email
 */
export function route(message: Routed, channels: readonly RoutableChannel[], contacts: Contacts): Target[] {
  const targets = new Map<string, Target>();
  const add = (target: Target) => targets.set(`${target.channelId} ${target.audience}`, target);
  const byMode = message.kind !== 'runbook';
  for (const channel of channels) {
    if (!byMode || channel.mode === 'disabled') continue;
    if (channel.mode === 'errors' && message.severity !== 'error') continue;
    if (channel.ruleIds && (message.ruleId === null || !channel.ruleIds.includes(message.ruleId))) continue;
    add({ channelId: channel.id, audience: 'channel', recipients: null });
  }
  if (message.kind === 'escalation') {
    for (const id of contacts.channelIds) {
      const channel = channels.find((c) => c.id === id);
      if (channel && channel.mode !== 'disabled') add({ channelId: id, audience: 'channel', recipients: null });
    }
  }
  const emails = message.kind === 'runbook' ? (message.recipients ?? []) : message.kind === 'escalation' ? contacts.emails : [];
  const smtp = smtpChannel(channels, contacts);
  if (emails.length > 0 && smtp) add({ channelId: smtp.id, audience: 'contacts', recipients: [...emails] });
  return [...targets.values()];
}

/** The email channel whose SMTP server sends to people by address: the chosen one, else the first. */
export function smtpChannel(channels: readonly RoutableChannel[], contacts: Contacts): RoutableChannel | undefined {
  const emailChannels = channels.filter((c) => c.type === 'email');
  return emailChannels.find((c) => c.id === contacts.emailChannelId) ?? emailChannels[0];
}
