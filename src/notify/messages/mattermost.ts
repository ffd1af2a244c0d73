import type { Digest } from './digest.js';

/*
 * Mattermost incoming webhook, Slack-compatible message attachments
 * (developers.mattermost.com/integrate/reference/message-attachments): `fallback` is required,
 * `text` and field values are Markdown and would expand @mentions, so payload and output text
 * is kept from mentioning anyone.
 */
export function mattermostPayload(d: Digest): Record<string, unknown> {
  let text = noMentions(d.summary);
  for (const section of d.sections) {
    text += `\n\n**${noMentions(section.heading)}**`;
    if (section.note) text += `\n${noMentions(section.note)}`;
    // Inside a code block Mattermost shows text as is and expands no mention.
    if (section.code) text += `\n\`\`\`\n${section.code.replace(/```/g, 'ʼʼʼ')}\n\`\`\``;
  }
  if (d.links.length > 0) text += `\n\n${d.links.map((link) => `[${link.label}](${link.url})`).join(' · ')}`;
  const attachment: Record<string, unknown> = {
    fallback: noMentions(d.title),
    color: d.severity === 'error' ? '#d00000' : '#2eb886',
    title: noMentions(d.title),
    text,
    fields: d.facts.map(([title, value]) => ({ short: true, title, value: noMentions(value) })),
  };
  if (d.links[0]) attachment.title_link = d.links[0].url;
  return { text: noMentions(d.title), attachments: [attachment] };
}

/**
 * A zero-width space after @ keeps "@channel" in an alarm name from paging a whole channel; the
 * same after `<` for the Slack forms (<!channel>) Mattermost also translates.
 */
export function noMentions(text: string): string {
  return text.replace(/@/g, '@\u200b').replace(/<!/g, '<\u200b!');
}
