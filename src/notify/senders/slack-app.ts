import type { Notification } from '../notification.js';
import type { SendResult } from './result.js';
import { slackApprovalMessage } from '../messages/slack-approval.js';
import { callSlack, type SlackMessageRef, type SlackReach } from './slack-web-api.js';

/** A Slack channel's settings, opened (notify/schema.ts): the incoming webhook, and the app's when it has one. */
export interface SlackSettings {
  webhookUrl?: string;
  botToken?: string;
  signingSecret?: string;
  channelId?: string;
}

/** True when the channel has a Slack app that can post, update and be clicked: its bot token, channel and signing secret. */
export function hasSlackApp(config: Record<string, unknown>): boolean {
  return typeof config.botToken === 'string' && typeof config.channelId === 'string' && typeof config.signingSecret === 'string';
}

/**
 * An approval request through the channel's Slack app: chat.postMessage
 * (docs.slack.dev/reference/methods/chat.postMessage: channel, text, blocks; answers
 * {ok, channel, ts}) with Approve and Reject buttons, its {channel, ts} returned to be kept as the
 * delivery's message_ref. With `ref`, the message posted earlier is updated instead
 * (docs.slack.dev/reference/methods/chat.update: channel, ts, text, blocks). Null when this send is
 * not the app's to make (no app, or not an approval): the incoming webhook carries it, link-only.
 */
export async function sendThroughSlackApp(config: SlackSettings, notification: Notification, ref: SlackMessageRef | null, reach: SlackReach): Promise<(SendResult & { ref?: SlackMessageRef }) | null> {
  if (!hasSlackApp(config as unknown as Record<string, unknown>) || notification.kind !== 'approval' || notification.timedOut) return null;
  const message = slackApprovalMessage(notification);
  if (ref) {
    const answer = await callSlack(reach, config.botToken!, 'chat.update', { channel: ref.channel, ts: ref.ts, ...message });
    return answer.ok ? { ok: true, status: 'HTTP 200' } : answer.result;
  }
  const answer = await callSlack(reach, config.botToken!, 'chat.postMessage', { channel: config.channelId, ...message });
  if (!answer.ok) return answer.result;
  const { channel, ts } = answer.body;
  if (typeof channel !== 'string' || typeof ts !== 'string') return { ok: false, status: 'HTTP 200', error: "Slack's chat.postMessage answered without the message's channel and ts", retryable: false };
  return { ok: true, status: 'HTTP 200', ref: { channel, ts } };
}

/**
 * Any other message of a channel with an app and no incoming webhook: the webhook's payload (text,
 * blocks), which chat.postMessage takes as it is, posted to the app's channel.
 */
export async function postThroughSlackApp(config: SlackSettings, payload: Record<string, unknown>, reach: SlackReach): Promise<SendResult> {
  if (!hasSlackApp(config as unknown as Record<string, unknown>)) {
    return { ok: false, status: null, error: "the channel has neither an incoming webhook nor a Slack app's settings: nothing can be posted", retryable: false };
  }
  const answer = await callSlack(reach, config.botToken!, 'chat.postMessage', { ...payload, channel: config.channelId });
  return answer.ok ? { ok: true, status: 'HTTP 200' } : answer.result;
}
