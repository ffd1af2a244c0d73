import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 20, point 6, in Chromium against a real server: write a runbook (refused saves shown at
// their fields), read it (notes rendered from Markdown with nothing in them able to run, the script,
// its SHA-256), save versions ("version N saved", "nothing changed"), read an older version, compare
// any two, find runbooks by name page by page, install one of the starter library, and delete one.
const FIRST_SCRIPT = '#!/bin/sh\nset -e\ndf -h /\nrm -rf /tmp/cache/*\necho done\n';
const SECOND_SCRIPT = '#!/bin/bash\nset -eu\ndf -h /\nfind /tmp/cache -mtime +7 -delete\necho done\n';
const NOTES = [
  '# Disk full',
  '',
  'Removes cache files older than a week. <img src=x onerror="window.__pwned = 1"> <script>window.__pwned = 2</script>',
  '',
  '- run when **/** is over 90 %',
  '- [run me](javascript:window.__pwned=3) · [the wiki](https://wiki.example/disk)',
  '',
].join('\n');

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('runbooks in the web UI', () => {
  // Part of the story: a reserved variable name (400) and a name already taken (409).
  const ui = uiSession({ refusedStatuses: [400, 409] });
  const runbookNamed = async (name: string) =>
    ((await ui.env.api('GET', `/api/v1/runbooks?search=${encodeURIComponent(name)}`)).json().items as Array<{ id: string; name: string }>).find((r) => r.name === name);

  it('writes a runbook, with refused saves shown at their fields, and shows its notes safely, its script and its SHA-256', async () => {
    const { page, env, base } = ui;
    expect((await env.api('POST', '/api/v1/runbooks', { name: 'nginx restart', script: 'systemctl restart nginx\n' })).statusCode).toBe(201);
    await signInAs(page, base, env.tenant.token, '/rules');
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Runbooks' }).click();
    await page.locator('tr[data-runbook="nginx restart"]').waitFor();
    await page.getByRole('link', { name: 'New runbook' }).click();

    const form = page.getByRole('form', { name: 'new runbook' });
    await form.getByLabel('Name').fill('nginx restart');
    await form.getByLabel('Interpreter').selectOption({ label: 'sh' });
    await form.locator('.cm-content').fill(FIRST_SCRIPT);
    await form.getByLabel('Variables it expects (optional)').fill('HostName, PATH');
    await form.getByLabel('Notes for people (Markdown, optional)').fill(NOTES);
    await form.getByRole('button', { name: 'Save runbook' }).click();
    // The service's message at the field it names: PATH would change how the script runs.
    const envField = form.locator('.field', { has: page.getByLabel('Variables it expects (optional)') });
    await expect.poll(() => envField.locator('.field-error').innerText()).toBe('"PATH" is reserved: it would change how the script process runs');
    expect(await form.getByLabel('Variables it expects (optional)').getAttribute('aria-invalid')).toBe('true');

    await form.getByLabel('Variables it expects (optional)').fill('HostName Mount');
    await form.getByRole('button', { name: 'Save runbook' }).click();
    const taken = await runbookNamed('nginx restart');
    const nameField = form.locator('.field', { has: page.getByLabel('Name') });
    await expect.poll(() => nameField.locator('.field-error').innerText()).toBe(`already the name of runbook ${taken!.id}`);
    expect(await form.getByRole('alert').filter({ hasNotText: 'already' }).count()).toBe(0);

    await form.getByLabel('Name').fill('disk cleanup');
    await form.getByRole('button', { name: 'Save runbook' }).click();
    await page.getByRole('heading', { name: 'disk cleanup' }).waitFor();
    await expect.poll(() => page.locator('[data-save-outcome]').innerText()).toBe('Version 1 saved.');
    const stored = (await runbookNamed('disk cleanup'))!;
    expect(page.url()).toBe(`${base}/runbooks/${stored.id}`);
    expect((await env.api('GET', `/api/v1/runbooks/${stored.id}`)).json()).toMatchObject({ version: 1, script: FIRST_SCRIPT, env: ['HostName', 'Mount'], description: NOTES, interpreter: 'sh' });

    // The notes: Markdown rendered, the raw HTML shown as text, the javascript: link only its text.
    const notes = page.locator('[data-markdown]');
    await expect.poll(() => notes.locator('h1').innerText()).toBe('Disk full');
    expect(await notes.locator('strong').innerText()).toBe('/');
    expect(await notes.innerText()).toContain('<img src=x onerror="window.__pwned = 1">');
    expect(await notes.locator('img, script').count()).toBe(0);
    expect(await notes.locator('a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([['the wiki', 'https://wiki.example/disk']]);
    await notes.getByText('run me').click();
    expect(await page.evaluate('window.__pwned')).toBeUndefined();

    await expect.poll(() => page.getByLabel('script').textContent()).toBe(FIRST_SCRIPT);
    expect(await page.locator('[data-sha256]').innerText()).toBe(sha256(FIRST_SCRIPT));
    await expect.poll(() => page.locator('.settings').innerText()).toMatch(/Interpreter\s+sh\s+Expects\s+\$HostName\s*\$Mount/);
  });

  it('saves versions: "version N saved", or "nothing changed" when the save equals the latest', async () => {
    const { page, env, base } = ui;
    const { id } = (await runbookNamed('disk cleanup'))!;
    await signInAs(page, base, env.tenant.token, `/runbooks/${id}`);
    await page.getByRole('link', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'edit the runbook' });
    await expect.poll(() => form.locator('.cm-content').innerText()).toContain('rm -rf /tmp/cache/*');
    expect(await form.getByLabel('Variables it expects (optional)').inputValue()).toBe('HostName, Mount');
    await form.getByLabel('Interpreter').selectOption({ label: 'bash' });
    await form.locator('.cm-content').fill(SECOND_SCRIPT);
    await form.getByRole('button', { name: 'Save version' }).click();
    await expect.poll(() => page.locator('[data-save-outcome]').innerText()).toBe('Version 2 saved.');
    expect(await page.locator('[data-sha256]').innerText()).toBe(sha256(SECOND_SCRIPT));

    // The same body again: the service makes no version, and the page says so.
    await page.getByRole('link', { name: 'Edit' }).click();
    await expect.poll(() => form.locator('.cm-content').innerText()).toContain('find /tmp/cache');
    await form.getByRole('button', { name: 'Save version' }).click();
    await expect.poll(() => page.locator('[data-save-outcome]').innerText()).toBe('Nothing changed: what you saved is version 2 as it stands, so no version was made.');
    expect((await env.api('GET', `/api/v1/runbooks/${id}/versions`)).json().items.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    // The versions, newest first; version 1 reads as it was saved.
    const rows = page.locator('.versions-table tbody tr');
    await expect.poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-version')))).toEqual(['2', '1']);
    expect(await rows.first().innerText()).toMatch(/^2 latest\s+disk cleanup\s+bash\s+/);
    await rows.nth(1).getByRole('link', { name: '1', exact: true }).click();
    await page.getByRole('heading', { name: 'disk cleanup · version 1' }).waitFor();
    await page.getByText('an earlier version; the latest is 2').waitFor();
    await expect.poll(() => page.getByLabel('script').textContent()).toBe(FIRST_SCRIPT);
    expect(await page.locator('[data-sha256]').innerText()).toBe(sha256(FIRST_SCRIPT));
  });

  it('compares any two versions: the fields that changed, and the lines added and removed in colour', async () => {
    const { page, env, base } = ui;
    const { id } = (await runbookNamed('disk cleanup'))!;
    await signInAs(page, base, env.tenant.token, `/runbooks/${id}`);
    await page.locator('.versions-table tr[data-version="2"]').getByRole('link', { name: 'from 1' }).click();
    await page.getByRole('heading', { name: 'disk cleanup: changes' }).waitFor();
    expect(new URL(page.url()).search).toBe('?from=1&to=2');

    const changed = page.getByRole('list', { name: 'changed fields' });
    await expect.poll(() => changed.innerText()).toBe('interpreter: sh → bash\nscript: the lines below');
    // Each line's text ends with its line feed, so the diff copies as diff -u wrote it.
    const lines = async (kind: string) => (await page.locator(`.diff [data-kind="${kind}"]`).allTextContents()).map((line) => line.replace(/\n$/, ''));
    await expect.poll(() => lines('del')).toEqual(['-#!/bin/sh', '-set -e', '-rm -rf /tmp/cache/*']);
    expect(await lines('add')).toEqual(['+#!/bin/bash', '+set -eu', '+find /tmp/cache -mtime +7 -delete']);
    expect(await lines('header')).toEqual(['--- version 1', '+++ version 2']);
    // Added lines green, removed ones red, the rest on the plain background.
    const colour = (kind: string) => page.evaluate(`getComputedStyle(document.querySelector('.diff [data-kind="${kind}"]')).backgroundColor`) as Promise<string>;
    const [added, removed, context] = [await colour('add'), await colour('del'), await colour('context')];
    expect(added).toMatch(/^rgba\(46, 160, 67/);
    expect(removed).toMatch(/^rgba\(248, 81, 73/);
    expect(context).toBe('rgba(0, 0, 0, 0)');
    expect(await page.locator('.diff-count-add').innerText()).toBe('+3');

    // Backwards: from 2 to 1, the same lines the other way round.
    await page.getByLabel('From version').selectOption('2');
    await page.getByLabel('To version').selectOption('1');
    await expect.poll(() => lines('add')).toEqual(['+#!/bin/sh', '+set -e', '+rm -rf /tmp/cache/*']);
    expect(new URL(page.url()).search).toBe('?from=2&to=1');
    await expect.poll(() => changed.innerText()).toBe('interpreter: bash → sh\nscript: the lines below');

    await page.getByLabel('To version').selectOption('2');
    await page.getByText('The same version on both sides').waitFor();
  });

  it('finds runbooks by name, 50 at a time', async () => {
    const { page, env, base } = ui;
    for (let i = 1; i <= 55; i += 1) {
      const name = `batch-${String(i).padStart(2, '0')}`;
      expect((await env.api('POST', '/api/v1/runbooks', { name, script: `echo ${i}\n` })).statusCode).toBe(201);
    }
    await signInAs(page, base, env.tenant.token, '/runbooks');
    await expect.poll(() => page.locator('.list-summary').innerText()).toBe('50 runbooks so far');
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => page.locator('.list-summary').innerText()).toBe('57 runbooks');
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    await page.keyboard.press('/');
    await page.keyboard.type('BATCH-0');
    await expect.poll(() => page.locator('tr[data-runbook]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-runbook')))).toEqual(
      ['01', '02', '03', '04', '05', '06', '07', '08', '09'].map((n) => `batch-${n}`),
    );
    expect(new URL(page.url()).searchParams.get('q')).toBe('BATCH-0');
    await page.getByRole('searchbox').fill('no such runbook');
    await page.getByText('No runbook matches these filters').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => page.locator('.list-summary').innerText()).toBe('57 runbooks');
    expect(new URL(page.url()).search).toBe('');
  });

  it('installs a starter runbook as a copy of its own, with a taken name refused at its field', async () => {
    const { page, env, base } = ui;
    const library = (await env.api('GET', '/api/v1/runbook-library')).json().items as Array<{ slug: string; name: string; sha256: string }>;
    const disk = library.find((item) => item.slug === 'disk-cleanup')!;
    await signInAs(page, base, env.tenant.token, '/runbooks');
    const panel = page.getByRole('region', { name: 'Starter library' });
    await expect.poll(() => panel.locator('[data-library]').evaluateAll((items) => items.map((item) => item.getAttribute('data-library')))).toEqual(library.map((item) => item.slug));
    const entry = panel.locator('[data-library="disk-cleanup"]');
    await entry.getByText('Read the notes').click();
    await expect.poll(() => entry.locator('[data-markdown] h1').innerText()).toBe('Disk cleanup');

    // "disk cleanup" is the name of this test's own runbook: the service's words at the field.
    const form = entry.getByRole('form', { name: 'install disk cleanup' });
    expect(await form.getByLabel('Install as').inputValue()).toBe('disk cleanup');
    await form.getByRole('button', { name: 'Install' }).click();
    const taken = await runbookNamed('disk cleanup');
    await expect.poll(() => form.locator('.field-error').innerText()).toBe(`already the name of runbook ${taken!.id}; choose another`);

    await form.getByLabel('Install as').fill('disk cleanup (starter)');
    await form.getByRole('button', { name: 'Install' }).click();
    await page.getByRole('heading', { name: 'disk cleanup (starter)' }).waitFor();
    await expect.poll(() => page.locator('[data-save-outcome]').innerText()).toBe('Installed from the starter library as version 1: this copy is yours to edit.');
    expect(await page.locator('[data-sha256]').innerText()).toBe(disk.sha256);
    await expect.poll(() => page.locator('.settings').innerText()).toMatch(/Expects\s+\$CleanupPaths\s*\$CleanupPatterns\s*\$OlderThanDays\s*\$DryRun\s*\$MaxDeleteFiles/);
    const installed = (await runbookNamed('disk cleanup (starter)'))!;
    expect((await env.api('GET', `/api/v1/runbooks/${installed.id}`)).json()).toMatchObject({ version: 1, sha256: disk.sha256 });
  });

  it('deletes a runbook and every version of it, after saying so', async () => {
    const { page, env, base } = ui;
    const { id } = (await runbookNamed('disk cleanup'))!;
    await signInAs(page, base, env.tenant.token, `/runbooks/${id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “disk cleanup”?' });
    await dialog.getByText('All 2 versions are gone for good.').waitFor();
    await dialog.getByRole('button', { name: 'Delete runbook' }).click();
    await page.getByRole('heading', { name: 'Runbooks' }).waitFor();
    expect((await env.api('GET', `/api/v1/runbooks/${id}`)).statusCode).toBe(404);
  });
});
