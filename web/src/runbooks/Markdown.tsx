import { useMemo } from 'react';
import { renderMarkdown } from './markdown';

/** A runbook's notes, rendered: raw HTML shows as text and links go nowhere but http(s), mailto or this site (markdown.ts). */
export function Markdown({ source }: { source: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  // renderMarkdown escapes every raw HTML and drops unsafe targets: nothing in it can run.
  return <div className="markdown" data-markdown dangerouslySetInnerHTML={{ __html: html }} />;
}
