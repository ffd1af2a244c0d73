import { createHmac, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

/*
 * What each platform's incoming webhook accepts, as documented, checked the way the platform
 * would refuse a message: a reason string means "400, not shown".
 */
type Check = (body: unknown, headers: http.IncomingHttpHeaders, raw: string) => string | undefined;
type Json = Record<string, unknown>;

const isText = (value: unknown, max = Infinity) => typeof value === 'string' && value.length > 0 && value.length <= max;

/** Slack Block Kit (docs.slack.dev/block-kit): fallback text, ≤ 50 blocks, per-element limits. */
export const slackShape: Check = (body) => {
  const b = body as Json;
  if (!isText(b?.text)) return 'missing_text: a top-level text fallback is required';
  const blocks = b.blocks as Json[];
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50) return 'invalid_blocks: 1 to 50 blocks';
  for (const block of blocks) {
    switch (block.type) {
      case 'header': {
        const text = block.text as Json;
        if (text?.type !== 'plain_text' || !isText(text.text, 150)) return 'invalid_blocks: header is plain_text of at most 150 characters';
        break;
      }
      case 'section': {
        const text = block.text as Json | undefined;
        const fields = block.fields as Json[] | undefined;
        if (!text && !fields) return 'invalid_blocks: a section needs text or fields';
        if (text && (text.type !== 'mrkdwn' || !isText(text.text, 3000))) return 'invalid_blocks: section text is mrkdwn of at most 3000 characters';
        if (fields && (fields.length > 10 || fields.some((f) => f.type !== 'mrkdwn' || !isText(f.text, 2000)))) return 'invalid_blocks: at most 10 fields of 2000';
        break;
      }
      case 'actions':
        if ((block.elements as Json[]).some((e) => e.type !== 'button' || !isText((e.text as Json).text, 75) || !isText(e.url, 3000))) return 'invalid_blocks: buttons with text and url';
        break;
      case 'context':
        break;
      default:
        return `invalid_blocks: unknown block type ${String(block.type)}`;
    }
  }
  return undefined;
};

/** Teams incoming webhook / Workflows: a message whose attachment is an Adaptive Card. */
export const teamsShape: Check = (body) => {
  const b = body as Json;
  if (b?.type !== 'message') return 'type must be "message"';
  const attachments = b.attachments as Json[];
  if (!Array.isArray(attachments) || attachments.length !== 1) return 'one attachment';
  const [attachment] = attachments as [Json];
  if (attachment.contentType !== 'application/vnd.microsoft.card.adaptive') return 'contentType must be application/vnd.microsoft.card.adaptive';
  const card = attachment.content as Json;
  if (card?.type !== 'AdaptiveCard' || !/^1\.\d$/.test(String(card.version))) return 'content must be an AdaptiveCard with a 1.x version';
  const items = card.body as Json[];
  if (!Array.isArray(items) || items.length === 0) return 'card body must not be empty';
  for (const item of items) {
    if (item.type === 'TextBlock' && !isText(item.text)) return 'TextBlock needs text';
    if (item.type === 'FactSet' && (item.facts as Json[]).some((f) => !isText(f.title) || typeof f.value !== 'string')) return 'FactSet facts need title and value';
    if (!['TextBlock', 'FactSet'].includes(String(item.type))) return `unexpected element ${String(item.type)}`;
  }
  for (const action of (card.actions as Json[] | undefined) ?? []) if (action.type !== 'Action.OpenUrl' || !isText(action.url)) return 'actions open URLs';
  return undefined;
};

/** Mattermost: Slack-compatible attachments, each with a fallback. */
export const mattermostShape: Check = (body) => {
  const b = body as Json;
  const attachments = b?.attachments as Json[];
  if (!isText(b?.text) && !Array.isArray(attachments)) return 'text or attachments required';
  for (const a of attachments ?? []) {
    if (!isText(a.fallback)) return 'attachment fallback is required';
    for (const f of (a.fields as Json[] | undefined) ?? []) if (!isText(f.title) || typeof f.value !== 'string' || typeof f.short !== 'boolean') return 'fields have title, value, short';
  }
  return undefined;
};

/** Google Chat: text and/or cardsV2 with sections of widgets. */
export const googleChatShape: Check = (body) => {
  const b = body as Json;
  if (!isText(b?.text) && !b?.cardsV2) return 'text or cardsV2 required';
  for (const entry of (b.cardsV2 as Json[] | undefined) ?? []) {
    if (!isText(entry.cardId)) return 'cardId required';
    const card = entry.card as Json;
    if (!isText((card.header as Json)?.title)) return 'card header title required';
    for (const section of card.sections as Json[]) {
      const widgets = section.widgets as Json[];
      if (!Array.isArray(widgets) || widgets.length === 0) return 'each section needs widgets';
      for (const w of widgets) if (Object.keys(w).length !== 1 || !['textParagraph', 'decoratedText', 'buttonList'].includes(Object.keys(w)[0]!)) return 'one known widget per entry';
    }
  }
  return undefined;
};

/** The generic webhook: verified the way docs/notifications.md tells receivers to. */
export function signedWebhook(secret: string, toleranceSeconds = 300): Check {
  return (_body, headers, raw) => {
    const timestamp = String(headers['x-pitcrew-timestamp'] ?? '');
    const signature = String(headers['x-pitcrew-signature'] ?? '');
    if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return 'stale or missing timestamp';
    const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`;
    if (signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) return 'bad signature';
    return undefined;
  };
}
