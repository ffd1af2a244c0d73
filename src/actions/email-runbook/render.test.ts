import { describe, expect, it } from 'vitest';
import { placeholderFields, renderRunbook } from './render.js';

describe('renderRunbook', () => {
  it('renders Markdown and fills placeholders from the event', async () => {
    const { html, text, missing } = await renderRunbook('# Disk full on {{HostName}}\n\n1. Run `df -h {{ Path }}`\n2. Call the DBA', { HostName: 'web-1', Path: '/var' });
    expect(html).toContain('<h1>Disk full on web-1</h1>');
    expect(html).toContain('<code>df -h /var</code>');
    expect(html).toMatch(/<ol>\s*<li>Run/);
    expect(text).toBe('# Disk full on web-1\n\n1. Run `df -h /var`\n2. Call the DBA');
    expect(missing).toEqual([]);
  });

  it.each([
    ['heading', '# {{X}}'],
    ['paragraph', 'host {{X}} is down'],
    ['code span', 'run `ssh {{X}}`'],
    ['code block', '```\nssh {{X}}\n```'],
    ['link text and target', '[{{X}}](https://grafana.example.com/d/{{X}})'],
    ['emphasis', '*{{X}}*'],
  ])('never lets a value become markup (%s)', async (_where, source) => {
    const evil = '<img src=x onerror=alert(1)>"\'&<script>';
    const { html } = await renderRunbook(source, { X: evil });
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>');
    expect(html).not.toMatch(/\uE000|\uE001|%EE%80/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('shows raw HTML written in the runbook as text', async () => {
    const { html } = await renderRunbook('Click <a href="javascript:alert(1)">here</a>\n\n<div onclick="x()">block</div>', {});
    expect(html).not.toMatch(/<a |<div /);
    expect(html).toContain('&lt;a href=&quot;javascript:alert(1)&quot;&gt;');
  });

  it('keeps a placeholder the event does not fill as written, and lists it', async () => {
    const { html, text, missing } = await renderRunbook('Ask {{Owner}} about {{HostName}} and {{Owner}}', { HostName: 'db-1' });
    expect(text).toBe('Ask {{Owner}} about db-1 and {{Owner}}');
    expect(html).toContain('Ask {{Owner}} about db-1');
    expect(missing).toEqual(['Owner']);
  });

  it('does not mistake characters of the runbook for its own markers', async () => {
    const { html } = await renderRunbook('a \uE0000\uE001 b {{X}}', { X: 'value' });
    expect(html).toBe('<p>a 0 b value</p>\n');
  });

  it('gives a value with Markdown in it as text, not formatting', async () => {
    const { html } = await renderRunbook('{{X}}', { X: '**bold** [link](http://evil)' });
    expect(html).toBe('<p>**bold** [link](http://evil)</p>\n');
  });
});

describe('placeholderFields', () => {
  it('takes top-level scalars, MetaData pairs (also as MetaData.Key) and the older aliases', () => {
    const fields = placeholderFields({ hostname: 'web-1', application: 'shop', Severity: 'critical', Count: 3, Act: true, Nested: { a: 1 }, MetaData: { Key1: 'v1', Severity: 'low', Deep: [1] } });
    expect(fields).toEqual({
      hostname: 'web-1', HostName: 'web-1', application: 'shop', AppName: 'shop', Severity: 'critical', Count: '3', Act: 'true',
      Key1: 'v1', 'MetaData.Key1': 'v1', 'MetaData.Severity': 'low',
    });
  });

  it('reads a numeric alias as its text, and lets it stand in for a null HostName as ingress does', () => {
    expect(placeholderFields({ HostName: null, hostname: 12345, AppName: null, application: 'shop' })).toMatchObject({ HostName: '12345', AppName: 'shop' });
  });
});
