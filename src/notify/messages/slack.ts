import type { Digest } from './digest.js';

/*
 * Slack incoming webhook, Block Kit (docs.slack.dev/block-kit): `text` is the notification
 * fallback, `blocks` the message. Limits that make Slack refuse a whole message with 400
 * invalid_blocks: header 150 characters, section text 3000, at most 10 fields of 2000, 50 blocks.
 */

const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const FIELD_MAX = 2000;
const BLOCKS_MAX = 50;

/** mrkdwn control characters (api.slack.com "Escaping text"): also stops `<!channel>` from output. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function slackPayload(d: Digest): Record<string, unknown> {
  const blocks: Array<Record<string, unknown>> = [
    { type: 'header', text: { type: 'plain_text', text: clip(d.title, HEADER_MAX), emoji: true } },
    { type: 'section', text: { type: 'mrkdwn', text: clip(escapeMrkdwn(d.summary), SECTION_MAX) } },
  ];
  if (d.facts.length > 0) {
    blocks.push({
      type: 'section',
      fields: d.facts.slice(0, 10).map(([label, value]) => ({ type: 'mrkdwn', text: clip(`*${escapeMrkdwn(label)}*\n${escapeMrkdwn(value)}`, FIELD_MAX) })),
    });
  }
  for (const section of d.sections) {
    let text = `*${escapeMrkdwn(section.heading)}*`;
    if (section.note) text += `\n${escapeMrkdwn(section.note)}`;
    const room = SECTION_MAX - text.length - 10;
    if (section.code && room > 20) text += `\n\`\`\`${codeText(section.code, room)}\`\`\``;
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
  }
  if (d.links.length > 0) {
    blocks.push({ type: 'actions', elements: d.links.map((link) => ({ type: 'button', text: { type: 'plain_text', text: link.label }, url: link.url })) });
  }
  if (blocks.length > BLOCKS_MAX) blocks.splice(BLOCKS_MAX - 1, blocks.length - BLOCKS_MAX + 1, { type: 'context', elements: [{ type: 'mrkdwn', text: 'More in pitcrew.' }] });
  return { text: d.title, blocks };
}

/** Output inside a ``` block: escaped, and no ``` of its own to end the block early. */
function codeText(code: string, max: number): string {
  const escaped = escapeMrkdwn(code).replace(/```/g, 'ʼʼʼ');
  return escaped.length > max ? `…${escaped.slice(-(max - 1))}` : escaped;
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
