import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

describe('renderMarkdown', () => {
  it('renders the notes people write: headings, lists, code, emphasis, links', () => {
    const html = renderMarkdown('# Disk full\n\n- check `df -h`\n- **then** clean\n\n[the wiki](https://wiki.example/disk "Disk") and <https://example.com>\n');
    expect(html).toContain('<h1>Disk full</h1>');
    expect(html).toContain('<li>check <code>df -h</code></li>');
    expect(html).toContain('<strong>then</strong>');
    expect(html).toContain('<a href="https://wiki.example/disk" title="Disk" rel="noopener noreferrer" target="_blank">the wiki</a>');
    expect(html).toContain('<a href="https://example.com" rel="noopener noreferrer" target="_blank">https://example.com</a>');
  });

  it.each([
    ['a script element', '<script>window.pwned = 1</script>'],
    ['an inline handler', 'see <img src=x onerror="window.pwned = 1"> here'],
    ['an iframe in a block', '<iframe src="javascript:alert(1)"></iframe>\n\ntext'],
  ])('shows raw HTML as text: %s', (_what, source) => {
    const html = renderMarkdown(source);
    expect(html).not.toMatch(/<(script|img|iframe)/i);
    expect(html).toContain('&lt;');
  });

  it.each([
    ['javascript:', '[click](javascript:alert(1))'],
    ['upper case', '[click](JAVASCRIPT:alert(1))'],
    ['a tab in the scheme', '[click](<java\tscript:alert(1)>)'],
    ['a data: URL', '[click](data:text/html;base64,PHNjcmlwdD4=)'],
    ['vbscript:', '[click](vbscript:msgbox)'],
    ['an autolink', '<javascript:alert(1)> click'],
    ['a reference link', '[click][x]\n\n[x]: javascript:alert(1)'],
  ])('keeps only the text of a link to %s', (_what, source) => {
    const html = renderMarkdown(source);
    expect(html).not.toContain('<a');
    expect(html).toContain('click');
  });

  it('keeps an entity in a target as written: the browser reads a path, not a scheme', () => {
    expect(renderMarkdown('[click](javascript&#58;alert(1))')).toContain('href="javascript&amp;#58;alert(1)"');
  });

  it('keeps an image of http(s), and only the alt text of another', () => {
    expect(renderMarkdown('![graph](https://grafana.example/g.png)')).toContain('<img src="https://grafana.example/g.png" alt="graph">');
    const refused = renderMarkdown('![graph](javascript:alert(1)) ![svg](data:image/svg+xml;base64,PHN2Zz4=)');
    expect(refused).not.toContain('<img');
    expect(refused).toContain('graph');
  });

  it('escapes quotes in a kept target, so it cannot leave its attribute', () => {
    const html = renderMarkdown('[x](<https://example.com/"onmouseover="alert(1)>)');
    expect(html).not.toContain('" onmouseover');
    expect(html).not.toMatch(/"onmouseover="/);
  });
});
