import type { ChannelType } from '../schema.js';
import type { Notification } from '../notification.js';
import { digest } from './digest.js';
import { googleChatPayload } from './google-chat.js';
import { mattermostPayload } from './mattermost.js';
import { slackPayload } from './slack.js';
import { teamsPayload } from './teams.js';

export type ChatType = Exclude<ChannelType, 'email' | 'webhook'>;

/** The JSON each chat platform's incoming webhook expects for a notification. */
export function chatPayload(type: ChatType, notification: Notification): Record<string, unknown> {
  const d = digest(notification);
  switch (type) {
    case 'slack':
      return slackPayload(d);
    case 'teams':
      return teamsPayload(d);
    case 'mattermost':
      return mattermostPayload(d);
    case 'google_chat':
      return googleChatPayload(d);
  }
}
