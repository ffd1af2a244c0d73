import type { Digest } from './digest.js';

/*
 * Microsoft Teams incoming webhook or Workflows ("Post to a channel when a webhook request is
 * received"): a message whose one attachment is an Adaptive Card. Version 1.4 renders in Teams on
 * every client; `msteams.width: Full` uses the channel's width for output.
 */
export function teamsPayload(d: Digest): Record<string, unknown> {
  const body: Array<Record<string, unknown>> = [
    { type: 'TextBlock', text: d.title, weight: 'Bolder', size: 'Medium', wrap: true, color: d.severity === 'error' ? 'Attention' : 'Good' },
    { type: 'TextBlock', text: d.summary, wrap: true },
  ];
  if (d.facts.length > 0) body.push({ type: 'FactSet', facts: d.facts.map(([title, value]) => ({ title, value })) });
  for (const section of d.sections) {
    body.push({ type: 'TextBlock', text: section.heading, weight: 'Bolder', wrap: true, separator: true });
    if (section.note) body.push({ type: 'TextBlock', text: section.note, wrap: true, isSubtle: true });
    if (section.code) body.push({ type: 'TextBlock', text: section.code, fontType: 'Monospace', wrap: true, size: 'Small' });
  }
  const card: Record<string, unknown> = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    msteams: { width: 'Full' },
    body,
  };
  if (d.links.length > 0) card.actions = d.links.map((link) => ({ type: 'Action.OpenUrl', title: link.label, url: link.url }));
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] };
}
