import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { expect } from 'vitest';
import { launchChromium } from '../../scripts/chromium.mjs';

/** Where browser tests leave the pictures of what they checked, for a person to look at (not committed). */
export const SCREENSHOT_DIR = process.env.PITCREW_UI_SCREENSHOTS ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test-results/ui');

/** The whole page as it is now (scrolled to its top), saved as `<name>.png` in SCREENSHOT_DIR; returns the file. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  // From the top: the sidebar's sticky contents are drawn where the window was scrolled to.
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Everything the pages logged as an error, and every uncaught exception. */
  consoleErrors: string[];
  close(): Promise<void>;
}

/** Debian's Chromium at 1440x900 with a fresh profile, recording console errors of every page. */
export async function openBrowser(): Promise<BrowserSession> {
  const { context, close } = await launchChromium({ width: 1440, height: 900 });
  const consoleErrors: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  // Well inside the test timeout, so a wait that fails says what it waited for.
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page, consoleErrors, close };
}

/** Signs in through the sign-in page with a token, as a person pasting it would. */
export async function signIn(page: Page, baseUrl: string, token: string, path = '/'): Promise<void> {
  await page.goto(baseUrl + path);
  await chooseTokenSignIn(page);
  await page.getByLabel('Management token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'main' }).waitFor();
}

/** On the sign-in page: the secondary way, with an API token instead of e-mail and password. */
export async function chooseTokenSignIn(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Use an API token instead' }).click();
  await page.getByLabel('Management token').waitFor();
}

/** Signs in afresh as the owner of `token`, whoever was signed in before. */
export async function signInAs(page: Page, baseUrl: string, token: string, path = '/'): Promise<void> {
  // On a blank page of the origin: a page of the app would go on calling the API with the old token.
  const blank = `${baseUrl}/__blank`;
  await page.route(blank, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><link rel="icon" href="data:,">' }));
  await page.goto(blank);
  await page.evaluate('sessionStorage.clear()');
  await page.unroute(blank);
  await signIn(page, baseUrl, token, path);
}

/** Holds the API's answers to `pattern` until the returned function is called. */
export async function holdResponses(page: Page, pattern: string): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handler = async (route: Route) => {
    await released;
    // A held request can be one the page gave up on (it navigated away) meanwhile.
    await route.continue().catch(() => undefined);
  };
  await page.route(pattern, handler);
  return async () => {
    release();
    await page.unroute(pattern, handler);
  };
}

/** Answers `pattern` with a 503 problem+json saying `detail`, until the returned function is called. */
export async function failResponses(page: Page, pattern: string, detail: string): Promise<() => Promise<void>> {
  const handler = async (route: Route) => {
    await route.fulfill({
      status: 503, contentType: 'application/problem+json',
      body: JSON.stringify({ type: 'urn:pitcrew:problem:storage-unavailable', title: 'Storage unavailable', status: 503, code: 'PITCREW_ERR_STORAGE_UNAVAILABLE', detail }),
    });
  };
  await page.route(pattern, handler);
  return () => page.unroute(pattern, handler);
}

/** Keeps the text of every API answer the page receives from now on, to check that none holds a write-only secret. */
export function watchApiAnswers(page: Page): { expectNoneShown(secrets: string[]): Promise<void> } {
  const answers: Array<Promise<string>> = [];
  page.on('response', (response) => {
    // A live stream never ends: its text would never come.
    if (response.url().includes('/api/') && !response.url().includes('/stream')) answers.push(response.text().catch(() => ''));
  });
  return {
    /** Neither the page's HTML nor any API answer it received holds one of `secrets`. */
    async expectNoneShown(secrets) {
      const html = await page.content();
      const texts = await Promise.all(answers);
      expect(texts.length).toBeGreaterThan(0);
      for (const secret of secrets) {
        expect(html).not.toContain(secret);
        expect(texts.filter((text) => text.includes(secret))).toEqual([]);
      }
    },
  };
}

/**
 * The app's "go to" shortcut: g, then `key`, until the page is at `url`. The app takes the second
 * key only within 1.5 s of the g (web/src/app/shortcuts.ts); a loaded machine's Chromium once took
 * longer to deliver the pair, and the page stayed where it was. Pressed again, at most three times.
 */
export async function goByKeys(page: Page, key: string, url: RegExp): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('g');
    await page.keyboard.press(key);
    try {
      await page.waitForURL(url, { timeout: 5_000 });
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}
