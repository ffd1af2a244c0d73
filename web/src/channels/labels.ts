import type { ChannelMode, ChannelStatus, ChannelType } from '../api/channel-types';

export const TYPE_LABELS: Record<ChannelType, string> = {
  slack: 'Slack',
  teams: 'Microsoft Teams',
  mattermost: 'Mattermost',
  google_chat: 'Google Chat',
  email: 'Email',
  webhook: 'Webhook',
};

/** Where each chat type's webhook URL comes from, said where it is typed. */
export const TYPE_HELP: Record<ChannelType, string> = {
  slack: 'An incoming webhook of a Slack app, posting to one channel.',
  teams: 'A Workflows “when a Teams webhook request is received” URL, or an incoming webhook.',
  mattermost: 'An incoming webhook of a Mattermost channel.',
  google_chat: "A space's webhook, with its key and token.",
  email: 'Mail through your SMTP server, over TLS or STARTTLS.',
  webhook: 'A JSON POST to your own receiver, signed with HMAC-SHA256.',
};

export const MODE_LABELS: Record<ChannelMode, string> = { all: 'All results', errors: 'Errors only', disabled: 'Disabled' };

export const MODE_HELP: Record<ChannelMode, string> = {
  all: 'every result, succeeded or not, every escalation and every run awaiting approval',
  errors: 'failed, timed out, lost or expired runs, escalations, and runs awaiting approval',
  disabled: 'nothing (an email channel still lends its SMTP server to escalation contacts)',
};

export const STATUS_HELP: Record<ChannelStatus, string> = {
  ok: 'the last attempt was delivered',
  failing: 'the last attempt failed',
  never_used: 'nothing sent yet',
  disabled: 'mode disabled: sends nothing',
};

/** The rules a channel hears: every rule, or the names of those it is narrowed to. */
export function describeRuleFilter(ruleIds: string[] | null, names: Map<string, string> | undefined): string {
  if (!ruleIds) return 'every rule';
  if (ruleIds.length === 0) return 'no rule';
  return ruleIds.map((id) => names?.get(id) ?? 'a deleted rule').join(', ');
}
