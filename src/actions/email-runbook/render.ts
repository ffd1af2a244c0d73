import type { Marked } from 'marked';
import { escapeHtml } from '../../notify/messages/email.js';

/**
 * A runbook's Markdown made into an email (docs/rules.md, "email_runbook"): `{{Name}}`
 * placeholders take the event's fields. Values never become markup: in the HTML each is escaped
 * after Markdown is rendered, and raw HTML written in the runbook itself is shown as text.
 * Placeholders the event does not fill stay as written, and are listed.
 */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

// Private-use characters stand for each value while Markdown is rendered; none survive from the text.
const OPEN = '\uE000';
const CLOSE = '\uE001';
const PRIVATE_USE = /[\uE000-\uF8FF]/g;

let markdown: Marked | undefined;

/** marked, loaded by the first runbook emailed: a start does not need it (bench/README.md, session 34). */
async function markdownRenderer(): Promise<Marked> {
  if (markdown) return markdown;
  const { Marked } = await import('marked');
  return (markdown ??= new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => escapeHtml(text) } }));
}

export interface RenderedRunbook {
  html: string;
  text: string;
  missing: string[];
}

export async function renderRunbook(source: string, fields: Readonly<Record<string, string>>): Promise<RenderedRunbook> {
  const clean = source.replace(PRIVATE_USE, '');
  const missing = new Set<string>();
  const values: string[] = [];
  const valueOf = (literal: string, name: string): string => {
    if (Object.hasOwn(fields, name)) return fields[name]!;
    missing.add(name);
    return literal;
  };
  const text = clean.replace(PLACEHOLDER, (literal, name: string) => valueOf(literal, name));
  const marked = clean.replace(PLACEHOLDER, (literal, name: string) => {
    values.push(valueOf(literal, name));
    return `${OPEN}${values.length - 1}${CLOSE}`;
  });
  let html = (await markdownRenderer()).parse(marked) as string;
  // In link targets Markdown percent-encodes the stand-ins; both forms are replaced.
  for (const [stand, encoded] of values.map((_, i) => [`${OPEN}${i}${CLOSE}`, encodeURI(`${OPEN}${i}${CLOSE}`)] as const).reverse()) {
    const value = escapeHtml(values[Number(stand.slice(1, -1))]!);
    html = html.split(stand).join(value).split(encoded).join(value);
  }
  return { html, text, missing: [...missing] };
}

/**
 * The fields a runbook can name: the payload's top-level values, the pairs inside MetaData (also
 * as MetaData.Key), and HostName/AppName for the older hostname/application.
 */
export function placeholderFields(payload: Readonly<Record<string, unknown>>): Record<string, string> {
  const fields: Record<string, string> = {};
  const scalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);
  const meta = payload.MetaData;
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    for (const [name, value] of Object.entries(meta)) {
      if (!scalar(value)) continue;
      fields[name] = String(value ?? '');
      fields[`MetaData.${name}`] = String(value ?? '');
    }
  }
  for (const [name, value] of Object.entries(payload)) if (scalar(value)) fields[name] = String(value ?? '');
  // As ingress reads them (ingress/payload.ts): a null HostName is absent, and the alias stands in.
  if (payload.hostname != null && scalar(payload.hostname) && payload.HostName == null) fields.HostName = String(payload.hostname);
  if (payload.application != null && scalar(payload.application) && payload.AppName == null) fields.AppName = String(payload.application);
  return fields;
}
