// Debian's Chromium driven by playwright-core, as the browser tests and `npm run screenshots` use
// it. .ci/run installs the package; nothing is downloaded by Playwright itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

// Without the background-networking flags, Chromium keeps calling out to Google's services,
// which this machine's closed network refuses (and fills logs with).
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A fresh browser with an empty profile (its own --user-data-dir, removed on close), one page
 * size for every screen, and the clipboard open to the page (the copy buttons).
 */
export async function launchChromium({ width = 1440, height = 900, colorScheme = 'dark' } = {}) {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: apt-get install chromium (.ci/run does)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width, height },
    colorScheme,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
