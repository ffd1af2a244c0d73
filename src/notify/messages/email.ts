import type { Notification } from '../notification.js';
import { digest, type Digest } from './digest.js';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/** A mail for a notification: plain text for every client, HTML with every value escaped. */
export function emailContent(notification: Notification): EmailContent {
  if (notification.kind === 'runbook') {
    return { subject: oneLine(notification.subject), text: notification.text, html: page(notification.subject, notification.html) };
  }
  const d = digest(notification);
  return { subject: oneLine(`[pitcrew] ${withoutIcon(d.title)}`), text: textOf(d), html: page(d.title, htmlOf(d)) };
}

function textOf(d: Digest): string {
  const lines = [withoutIcon(d.title), '', d.summary, ''];
  for (const [label, value] of d.facts) lines.push(`${label}: ${value}`);
  for (const section of d.sections) {
    lines.push('', withoutIcon(section.heading));
    if (section.note) lines.push(section.note);
    if (section.code) lines.push(...section.code.split('\n').map((line) => `    ${line}`));
  }
  if (d.links.length > 0) lines.push('', ...d.links.map((link) => `${link.label}: ${link.url}`));
  return `${lines.join('\n')}\n`;
}

function htmlOf(d: Digest): string {
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
  return text.replace(/^[^\p{L}\p{N}"(]+/u, '');
}
