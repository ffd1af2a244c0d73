import type { Notification, SnapshotRef } from '../notification.js';
import { digest, type Digest } from './digest.js';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/**
 * What a mail carries inline at most: most mail servers refuse a mail past 10-25 MB, and base64
 * makes 4 MiB of pictures about 5.5 MB. A graph past the caps is a link (or named) instead.
 */
export const MAIL_IMAGES_MAX = 6;
export const MAIL_IMAGE_BYTES_MAX = 4 * 1024 * 1024;
/** SVG is left out: many mail clients block it, and it could carry script. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif']);

/** The graphs a mail shows inline (pure): pictures of a type mail clients show, within the caps, in order. */
export function inlineGraphs(notification: Notification): SnapshotRef[] {
  if (notification.kind !== 'run') return [];
  const chosen: SnapshotRef[] = [];
  let bytes = 0;
  for (const graph of notification.snapshots ?? []) {
    if (chosen.length === MAIL_IMAGES_MAX || !INLINE_TYPES.has(graph.contentType) || bytes + graph.bytes > MAIL_IMAGE_BYTES_MAX) continue;
    chosen.push(graph);
    bytes += graph.bytes;
  }
  return chosen;
}

/** The Content-ID of a snapshot's inline part (RFC 2392): the HTML shows it as `cid:` + this. */
export function contentId(snapshotId: string): string {
  return `snapshot-${snapshotId}@pitcrew`;
}

/**
 * A mail for a notification: plain text for every client, HTML with every value escaped. The
 * graphs in `inline` (ids) are shown in the HTML from their inline parts; the others are links.
 */
export function emailContent(notification: Notification, inline: ReadonlySet<string> = new Set()): EmailContent {
  if (notification.kind === 'runbook') {
    return { subject: oneLine(notification.subject), text: notification.text, html: page(notification.subject, notification.html) };
  }
  const d = withDecideLinks(digest(notification), notification);
  return { subject: oneLine(`[pitcrew] ${withoutIcon(d.title)}`), text: textOf(d, inline), html: page(d.title, htmlOf(d, inline)) };
}

/**
 * An approval request's mail leads with each run's signed link to the page that asks to confirm
 * (executions/approval-link.ts): the mail goes to the team, who sign in there; chats get buttons.
 */
function withDecideLinks(d: Digest, notification: Notification): Digest {
  if (notification.kind !== 'approval') return d;
  const decide = notification.executions.filter((e) => e.decideUrl).map((e) => ({ label: `Approve or reject on ${e.hostname} (sign in to confirm)`, url: e.decideUrl! }));
  return { ...d, links: [...decide, ...d.links] };
}

function textOf(d: Digest, inline: ReadonlySet<string>): string {
  const lines = [withoutIcon(d.title), '', d.summary, ''];
  for (const [label, value] of d.facts) lines.push(`${label}: ${value}`);
  for (const section of d.sections) {
    lines.push('', withoutIcon(section.heading));
    if (section.note) lines.push(section.note);
    if (section.code) lines.push(...section.code.split('\n').map((line) => `    ${line}`));
  }
  if (d.graphs?.length) {
    lines.push('', 'Graphs');
    for (const graph of d.graphs) lines.push(`${graph.title}: ${graph.url ?? (inline.has(graph.id) ? 'in the HTML part of this mail' : 'on the execution page')}`);
  }
  if (d.links.length > 0) lines.push('', ...d.links.map((link) => `${link.label}: ${link.url}`));
  return `${lines.join('\n')}\n`;
}

function graphsHtml(graphs: readonly SnapshotRef[], inline: ReadonlySet<string>): string {
  let html = '<h3>Graphs</h3>';
  for (const graph of graphs) {
    const title = escapeHtml(graph.title);
    if (inline.has(graph.id)) {
      const picture = `<img src="cid:${escapeHtml(contentId(graph.id))}" width="${graph.width}" height="${graph.height}" alt="${title}" style="max-width:100%;height:auto">`;
      html += `<p>${title}<br>${graph.url ? `<a href="${escapeHtml(graph.url)}">${picture}</a>` : picture}</p>`;
    } else if (graph.url) {
      html += `<p><a href="${escapeHtml(graph.url)}">${title}</a></p>`;
    } else {
      html += `<p>${title}: on the execution page</p>`;
    }
  }
  return html;
}

function htmlOf(d: Digest, inline: ReadonlySet<string>): string {
  const color = d.severity === 'error' ? '#b00020' : '#1b7a3a';
  let body = `<h2 style="color:${color}">${escapeHtml(d.title)}</h2><p>${escapeHtml(d.summary)}</p>`;
  if (d.facts.length > 0) {
    body += `<table cellpadding="4">${d.facts.map(([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`).join('')}</table>`;
  }
  for (const section of d.sections) {
    body += `<h3>${escapeHtml(section.heading)}</h3>`;
    if (section.note) body += `<p>${escapeHtml(section.note)}</p>`;
    if (section.code) body += `<pre style="background:#f4f4f4;padding:8px">${escapeHtml(section.code)}</pre>`;
  }
  if (d.graphs?.length) body += graphsHtml(d.graphs, inline);
  if (d.links.length > 0) body += `<p>${d.links.map((link) => `<a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a>`).join(' · ')}</p>`;
  return body;
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif">${body}</body></html>`;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Header values are one line: a payload value with a newline must not add a header. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 250);
}

function withoutIcon(text: string): string {
  // ℹ (U+2139) is a letter to Unicode, and an icon in a title.
  return text.replace(/^(?:[^\p{L}\p{N}"(]|\p{Extended_Pictographic})+/u, '');
}
