import type { Digest } from './digest.js';

/*
 * Google Chat incoming webhook (developers.google.com/workspace/chat): `text` for notifications
 * and clients without cards, `cardsV2` for the message. Card text takes a small HTML subset, so
 * values are HTML-escaped; `<users/all>` in plain text would mention everyone, so `<` is escaped there too.
 */
export function googleChatPayload(d: Digest): Record<string, unknown> {
  const sections: Array<Record<string, unknown>> = [];
  const first: Array<Record<string, unknown>> = [{ textParagraph: { text: html(d.summary) } }];
  for (const [label, value] of d.facts) first.push({ decoratedText: { topLabel: label, text: html(value), wrapText: true } });
  sections.push({ widgets: first });
  for (const section of d.sections) {
    const widgets: Array<Record<string, unknown>> = [];
    if (section.note) widgets.push({ textParagraph: { text: html(section.note) } });
    if (section.code) widgets.push({ textParagraph: { text: `<font color="#555555">${html(section.code)}</font>` } });
    if (widgets.length === 0) widgets.push({ textParagraph: { text: html(section.heading) } });
    sections.push({ header: html(section.heading), widgets });
  }
  if (d.links.length > 0) {
    sections.push({ widgets: [{ buttonList: { buttons: d.links.map((link) => ({ text: link.label, onClick: { openLink: { url: link.url } } })) } }] });
  }
  return {
    text: plain(d.title),
    cardsV2: [{ cardId: 'pitcrew', card: { header: { title: d.title, subtitle: d.severity === 'error' ? 'needs attention' : 'for your information' }, sections } }],
  };
}

function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, '<br>');
}

function plain(text: string): string {
  return text.replace(/</g, '‹');
}
