import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startTestEnv, type TestEnv, type TestEnvOptions } from './app.js';
import { openBrowser, type BrowserSession } from './browser.js';

export interface UiSession {
  env: TestEnv;
  browser: BrowserSession;
  page: Page;
  /** The server's HTTP address, where the UI is. */
  base: string;
}

/**
 * For the calling describe block: a server with the web UI on loopback (SQLite) and Chromium
 * to drive it. After each test the page's routes are dropped, and its console must hold no error
 * except the refusals the tests provoke, with `refusedStatuses` (Chromium logs each one it sees).
 */
export function uiSession(options: { refusedStatuses?: number[]; setup?: (env: TestEnv) => Promise<void>; clock?: () => number; notify?: () => TestEnvOptions['notify'] } = {}): UiSession {
  const session = {} as UiSession;
  const refused = new RegExp(`Failed to load resource: the server responded with a status of (${(options.refusedStatuses ?? []).join('|') || 'none'})`);
  beforeAll(async () => {
    // `notify` is read here, once the file's earlier hooks (an emulator started) have run.
    session.env = await startTestEnv('sqlite', { listen: true, webUi: true, clock: options.clock, notify: options.notify?.() });
    session.base = session.env.listening!.httpUrl;
    await options.setup?.(session.env);
    session.browser = await openBrowser();
    session.page = session.browser.page;
  });
  afterAll(async () => {
    await session.browser?.close();
    await session.env?.close();
  });
  afterEach(async () => {
    await session.page.unrouteAll({ behavior: 'ignoreErrors' });
    expect(session.browser.consoleErrors.filter((line) => !refused.test(line))).toEqual([]);
    session.browser.consoleErrors.length = 0;
  });
  return session;
}
