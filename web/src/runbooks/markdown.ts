import { Marked, type Tokens } from 'marked';

/*
 * A runbook's notes (Markdown) made into HTML that cannot run anything: a runbook is written by
 * anyone with a token, and read by everyone in the tenant. Raw HTML written in the notes is shown
 * as text; a link or an image keeps its target only when it is http(s), mailto or within this
 * site (no javascript:, data:, vbscript: …), else only its text shows. Marked escapes every other
 * text and attribute value.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const LINK_SCHEMES = new Set(['http', 'https', 'mailto']);
const IMAGE_SCHEMES = new Set(['http', 'https']);

/** Whether a link or image target is of one of `schemes`, or has no scheme (a path, an anchor, //host/…: this page's http(s)). */
function allowed(href: string, schemes: Set<string>): boolean {
  // Browsers drop control characters and blanks inside a URL's scheme ("java\tscript:"): so does the check.
  const squeezed = Array.from(href).filter((char) => char > ' ' && char !== '\u007f').join('');
  const scheme = SCHEME.exec(squeezed)?.[1];
  return scheme === undefined || schemes.has(scheme.toLowerCase());
}

const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
    link(token: Tokens.Link) {
      const text = this.parser.parseInline(token.tokens);
      if (!allowed(token.href, LINK_SCHEMES)) return text;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(token.href)}"${title} rel="noopener noreferrer" target="_blank">${text}</a>`;
    },
    image(token: Tokens.Image) {
      if (!allowed(token.href, IMAGE_SCHEMES)) return escapeHtml(token.text);
      // Marked's own image, now that its target is known to be harmless.
      return false;
    },
  },
});

/** The notes as HTML safe to put in the page. */
export function renderMarkdown(source: string): string {
  return markdown.parse(source) as string;
}
