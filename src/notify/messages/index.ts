import type { ChannelType } from '../schema.js';
import type { Notification } from '../notification.js';
import { digest, type Digest } from './digest.js';
import { googleChatPayload } from './google-chat.js';
import { mattermostPayload } from './mattermost.js';
import { clip, slackPayload } from './slack.js';
import { teamsPayload } from './teams.js';

export type ChatType = Exclude<ChannelType, 'email' | 'webhook'>;

/** The JSON each chat platform's incoming webhook expects for a notification. */
export function chatPayload(type: ChatType, notification: Notification): Record<string, unknown> {
  const d = withGraphLinks(digest(notification));
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

/** Slack refuses a button whose text is longer than 75 characters. */
const GRAPH_LABEL_MAX = 75;

/**
 * A chat shows a graph by its signed link, opened without a session until it expires: the chat
 * platforms' own image blocks would have the platform fetch the image, which fails (and Slack then
 * refuses the whole message) wherever pitcrew is not reachable from the internet.
 */
function withGraphLinks(d: Digest): Digest {
  const graphs = (d.graphs ?? []).filter((graph) => graph.url !== null);
  if (graphs.length === 0) return d;
  return { ...d, links: [...d.links, ...graphs.map((graph) => ({ label: clip(`📈 ${graph.title}`, GRAPH_LABEL_MAX), url: graph.url! }))] };
}
