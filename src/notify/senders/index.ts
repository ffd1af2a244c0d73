import type { EgressPolicy } from '../../egress/policy.js';
import { contentId, emailContent } from '../messages/email.js';
import { chatPayload } from '../messages/index.js';
import { webhookBody } from '../messages/webhook.js';
import type { Notification } from '../notification.js';
import { SECRET_FIELDS, type ChannelType } from '../schema.js';
import { sendMail, type SmtpSettings } from './email.js';
import { postJson } from './http.js';
import type { SendResult } from './result.js';
import { teamsBotOf } from '../teams/bot-settings.js';
import type { BotConnector } from '../teams/connector.js';
import { sendApprovalCard } from './teams-bot.js';
import { signedHeaders } from './webhook.js';
import { postThroughSlackApp, sendThroughSlackApp, type SlackSettings } from './slack-app.js';
import { SLACK_API_URL, type SlackMessageRef } from './slack-web-api.js';

/** A channel with its secrets opened: only ever held in memory for the length of a send. */
export interface OpenChannel {
  id: string;
  name: string;
  type: ChannelType;
  config: Record<string, unknown>;
}

export interface SendMeta {
  messageId: string;
  /** Stable across retries of one delivery; the generic webhook sends it for receivers to deduplicate. */
  deliveryId: string;
  createdAt: string;
  /** For email: addresses to use instead of the channel's own `to` (escalation contacts, runbook recipients). */
  recipients?: readonly string[] | null;
  /** For email: the graph snapshots' images to carry inline (messages/email.ts inlineGraphs, read by the deliverer). */
  images?: readonly MailImage[];
  /** Where this delivery's chat message landed before: the send updates it (a decided approval's outcome). */
  messageRef?: object | null;
}

export interface MailImage {
  id: string;
  contentType: string;
  bytes: Uint8Array;
}

/** How a send may reach out: its time limit, and where it may connect (egress/policy.ts). */
export interface SendOptions {
  timeoutMs: number;
  egress: EgressPolicy;
  /** The Bot Connector, for Teams channels with a bot (teams/connector.ts). */
  teams?: BotConnector;
  /** Slack's Web API (PITCREW_SLACK_API_URL); https://slack.com/api unless set. */
  slackApiUrl?: string;
}

/** Sends one notification to one channel, once. Retrying is the deliverer's business. */
export async function sendNotification(channel: OpenChannel, notification: Notification, meta: SendMeta, options: SendOptions): Promise<SendResult> {
  const secrets = SECRET_FIELDS[channel.type].map((field) => channel.config[field]).filter((v): v is string => typeof v === 'string');
  switch (channel.type) {
    case 'email': {
      const to = meta.recipients?.length ? meta.recipients : (channel.config.to as string[]);
      const images = meta.images ?? [];
      const content = emailContent(notification, new Set(images.map((image) => image.id)));
      const inline = images.map((image, i) => ({
        filename: `graph-${i + 1}.${image.contentType.split('/')[1]}`, content: Buffer.from(image.bytes), contentType: image.contentType, cid: contentId(image.id), contentDisposition: 'inline' as const,
      }));
      return sendMail(channel.config as unknown as SmtpSettings, to, { ...content, inline }, options);
    }
    case 'webhook': {
      const raw = JSON.stringify(webhookBody(meta.messageId, meta.createdAt, notification));
      const headers = signedHeaders(channel.config.secret as string, raw, meta.deliveryId);
      return postJson(channel.config.url as string, undefined, headers, options, secrets, raw);
    }
    case 'teams': {
      // An approval request by the channel's bot carries Approve and Reject (teams/approval-card.ts).
      const bot = teamsBotOf(channel);
      if (bot && options.teams && notification.kind === 'approval' && !notification.timedOut) return sendApprovalCard(options.teams, bot, notification);
      return postJson(channel.config.webhookUrl as string, chatPayload(channel.type, notification), {}, options, secrets);
    }
    case 'slack': {
      const reach = { apiUrl: options.slackApiUrl ?? SLACK_API_URL, egress: options.egress, timeoutMs: options.timeoutMs };
      const ref = (meta.messageRef ?? null) as SlackMessageRef | null;
      const viaApp = await sendThroughSlackApp(channel.config as unknown as SlackSettings, notification, ref, reach);
      if (viaApp) return viaApp;
      if (ref) return { ok: false, status: null, error: "the channel's Slack app settings (bot token, channel, signing secret) were removed: the message posted earlier cannot be updated", retryable: false };
      if (typeof channel.config.webhookUrl === 'string') return postJson(channel.config.webhookUrl, chatPayload(channel.type, notification), {}, options, secrets);
      return postThroughSlackApp(channel.config as unknown as SlackSettings, chatPayload(channel.type, notification), reach);
    }
    case 'mattermost':
    case 'google_chat':
      return postJson(channel.config.webhookUrl as string, chatPayload(channel.type, notification), {}, options, secrets);
  }
}

export type { SendResult } from './result.js';
