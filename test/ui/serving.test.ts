import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, WEB_ROOT, type TestEnv } from '../support/app.js';
import { openBrowser, signIn, type BrowserSession } from '../support/browser.js';

const BUDGET_BYTES = 300 * 1024;
const gzipSize = (file: string) => zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;

// How pitcrew server serves the UI: files, client routes, and the API's own 404s kept apart.
describe('the web UI served by pitcrew server', () => {
  let env: TestEnv;
  let base: string;
  beforeAll(async () => {
    env = await startTestEnv('sqlite', { listen: true, webUi: true });
    base = env.listening!.httpUrl;
  });
  afterAll(() => env.close());

  const page = { accept: 'text/html,application/xhtml+xml' };

  it('serves the app at / and at every client route, never cached, so a release shows at once', async () => {
    for (const route of ['/', '/rules', '/rules/new', '/executions/0190a4a4-0000-7000-8000-000000000000', '/hosts?x=1', '/nowhere/at/all']) {
      const response = await fetch(base + route, { headers: page });
      expect(response.status, route).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(await response.text()).toContain('<div id="root"></div>');
    }
  });

  it('keeps unknown API routes and missing files as problem+json 404s, even for a browser', async () => {
    for (const route of ['/api/v1/nope', '/api/v1/rules/not-a-uuid/nope', '/api', '/assets/missing.js']) {
      const response = await fetch(base + route, { headers: page });
      expect(response.status, route).toBe(404);
      expect(response.headers.get('content-type'), route).toMatch(/^application\/problem\+json/);
    }
    const post = await fetch(`${base}/rules`, { method: 'POST', headers: page });
    expect(post.status).toBe(404);
    expect(post.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('serves hashed assets compressed and cacheable for a year', async () => {
    const html = await (await fetch(base, { headers: page })).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const response = await fetch(base + script, { headers: { 'accept-encoding': 'gzip' } });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('content-type')).toMatch(/javascript/);
  });

  it('loads the first page with under 300 KiB of gzipped JavaScript, and no page loads code it does not need', async () => {
    const browser: BrowserSession = await openBrowser();
    try {
      const scripts = new Set<string>();
      browser.page.on('request', (request) => {
        if (request.resourceType() === 'script') scripts.add(new URL(request.url()).pathname);
      });
      await browser.page.goto(base);
      await browser.page.getByLabel('E-mail').waitFor();
      const firstPage = [...scripts];
      const bytes = firstPage.reduce((sum, script) => sum + gzipSize(path.join(WEB_ROOT, script)), 0);
      console.log(`first page: ${firstPage.length} script(s), ${(bytes / 1024).toFixed(1)} KiB gzipped`);
      expect(bytes).toBeGreaterThan(10 * 1024);
      expect(bytes).toBeLessThan(BUDGET_BYTES);

      // The dashboard after sign-in adds its own chunk only; the code editor waits for the wizard.
      await signIn(browser.page, base, env.tenant.token);
      await browser.page.getByText('No rules yet').waitFor();
      const dashboard = [...scripts].reduce((sum, script) => sum + gzipSize(path.join(WEB_ROOT, script)), 0);
      expect(dashboard).toBeLessThan(BUDGET_BYTES);
      const sizeBefore = scripts.size;
      await browser.page.getByRole('link', { name: /New rule/ }).click();
      await browser.page.getByLabel('Rule name').fill('x');
      for (let step = 0; step < 3; step += 1) await browser.page.getByRole('button', { name: 'Next' }).click();
      await browser.page.locator('.cm-content').waitFor();
      expect(scripts.size).toBeGreaterThan(sizeBefore + 1);
      expect(browser.consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
