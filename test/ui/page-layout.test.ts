import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { saveScreenshot, signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 36, point 12, in Chromium against a real server, at the width of a small laptop window
// (800 px) and of a desktop (1440 px): the rule page, the rules list and an integration's page laid
// out so that nothing is cut or hidden, measured in the browser. Each test leaves its pictures in
// test-results/ui (SCREENSHOT_DIR).

const WIDTHS = [800, 1440];
/** Enrolled out of order: the hosts page lists them by name, numbers as numbers. */
const HOSTS = ['web-10', 'web-2', 'db-1', 'Web-1', 'api-3'];
const LONG_LINE = 'curl -fsS --retry 5 -H "Authorization: Bearer $TOKEN" "https://internal-api.example.com/v1/maintenance/hosts/$HostName/drain?reason=disk_full&notify=oncall@example.com&timeout=600"';

interface PageFacts {
  viewport: number;
  documentWidth: number;
  documentHeight: number;
  viewportHeight: number;
  sidebarBottom: number;
  sidebarBackground: string;
}

/** Layout facts of the page as it is now, measured by the browser. */
function pageFacts(page: Page): Promise<PageFacts> {
  return page.evaluate(`(() => {
    const sidebar = document.querySelector('nav.sidebar');
    const root = document.documentElement;
    return {
      viewport: window.innerWidth,
      documentWidth: root.scrollWidth,
      documentHeight: root.scrollHeight,
      viewportHeight: window.innerHeight,
      sidebarBottom: sidebar.getBoundingClientRect().bottom + window.scrollY,
      sidebarBackground: getComputedStyle(sidebar).backgroundColor,
    };
  })()`);
}

/** The page never scrolls sideways, and on a page longer than the window the sidebar's background goes down to its end. */
async function expectWholePage(page: Page, { long }: { long: boolean }) {
  const facts = await pageFacts(page);
  expect(facts.documentWidth, 'the page scrolls sideways').toBeLessThanOrEqual(facts.viewport);
  expect(facts.sidebarBackground).not.toBe('rgba(0, 0, 0, 0)');
  if (long) expect(facts.documentHeight).toBeGreaterThan(facts.viewportHeight);
  expect(facts.sidebarBottom, 'the sidebar stops short of the page end').toBeGreaterThanOrEqual(facts.documentHeight - 1);
}

/** The right edge of each header cell of the table, and of the window and the table's box. */
function columnEdges(table: Locator) {
  return table.evaluate((element) => {
    const box = element.parentElement!.getBoundingClientRect();
    const headers = [...element.querySelectorAll('thead th')].filter((th) => th.getBoundingClientRect().width > 0).map((th) => th.getBoundingClientRect().right);
    return { headers, viewport: element.ownerDocument.defaultView!.innerWidth, box: box.right };
  });
}

async function expectColumnsInView(table: Locator) {
  const { headers, viewport, box } = await columnEdges(table);
  expect(headers.length).toBeGreaterThan(0);
  for (const right of headers) {
    expect(right, 'a column is cut off by the window').toBeLessThanOrEqual(viewport);
    expect(right, 'a column sticks out of its box').toBeLessThanOrEqual(box + 0.5);
  }
}

/** Two frames after the query answered, so what the page does with its answer is on screen. */
async function settled(page: Page, answered: Promise<unknown>) {
  await answered;
  for (let i = 0; i < 2; i += 1) await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => resolve(null)))');
}

describe('page layout at 800 and 1440 px', () => {
  const ui = uiSession({
    setup: async (env) => {
      for (const hostname of HOSTS) await env.enrol(hostname);
    },
  });
  const panel = (heading: string) => ui.page.locator('section.panel', { has: ui.page.getByRole('heading', { name: new RegExp(`^${heading}`) }) });

  it.each(WIDTHS)('rule page at %i px: the runbook wraps, no empty card above the events, the sidebar goes down to the end', async (width) => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({
      name: `drain a host whose disk is full and tell the on-call (${width})`,
      action: { type: 'script', flavour: 'autofix', runbook: { script: `#!/bin/bash\nset -euo pipefail\n${LONG_LINE}\necho done\n`, interpreter: 'bash', notes: 'https://wiki.example.com/runbooks/storage/disk-full-on-web-hosts-and-what-to-do-about-it-when-paged-at-3am' } },
    });
    for (let i = 0; i < 12; i += 1) await env.webhook(rule.triggerId, { HostName: i % 3 === 0 ? 'ghost-9' : HOSTS[i % HOSTS.length], AlarmName: 'disk_full' }, { headers: { 'idempotency-key': `nagios-${width}-${i}` } });
    await page.setViewportSize({ width, height: 900 });
    const escalations = page.waitForResponse((response) => response.url().includes(`/api/v1/escalations?`) && response.url().includes(rule.id));
    await signInAs(page, base, env.tenant.token, `/rules/${rule.id}`);
    const events = panel('Events');
    await expect.poll(() => events.locator('tbody tr').count()).toBe(12);
    await settled(page, escalations);

    // The runbook's long line is all there to read: wrapped, nothing hidden to the side.
    const runbook = page.locator('pre.runbook');
    const box = await runbook.evaluate((pre) => ({ scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth, whiteSpace: pre.ownerDocument.defaultView!.getComputedStyle(pre).whiteSpace }));
    expect(box.scrollWidth, 'the runbook is cut at its right edge').toBeLessThanOrEqual(box.clientWidth);
    expect(box.whiteSpace).toBe('pre-wrap');
    expect(await runbook.innerText()).toContain(LONG_LINE);

    // Above the events, only what there is: the webhook and the settings (no limit, no escalation: no cards for them).
    const above = await page.locator('section.panel').evaluateAll((panels) => {
      const eventsAt = panels.findIndex((p) => p.querySelector('h2')?.textContent?.startsWith('Events'));
      return panels.slice(0, eventsAt).map((p) => ({ heading: p.querySelector('h2')?.textContent ?? '', empty: p.querySelectorAll('.state-empty').length }));
    });
    expect(above).toEqual([{ heading: 'Webhook', empty: 0 }, { heading: 'Settings', empty: 0 }]);

    await expectColumnsInView(events.locator('table'));
    await expectWholePage(page, { long: true });
    await saveScreenshot(page, `rule-page-${width}`);
  });

  it.each(WIDTHS)('rules list at %i px: every column in view, the last one included', async (width) => {
    const { page, env, base } = ui;
    for (const name of ['restart nginx on the whole web fleet in eu-west-1', 'rotate the logs of every database host']) {
      await env.createWebhookRule({ name: `${name} (${width})`, target: { type: 'specific_tags', tags: ['web', 'nginx', 'eu-west-1'] } });
    }
    await page.setViewportSize({ width, height: 900 });
    await signInAs(page, base, env.tenant.token, '/rules');
    const table = page.locator('main table');
    await table.locator('tbody tr').first().waitFor();
    expect(await table.locator('thead th').last().innerText()).toMatch(/last execution/i);
    await expectColumnsInView(table);
    // What a narrow window folds away is under the rule's name.
    const row = table.locator('tbody tr', { hasText: `restart nginx on the whole web fleet in eu-west-1 (${width})` });
    expect(await row.innerText()).toMatch(/Webhook[\s\S]*Script · autofix[\s\S]*Tags web \+ nginx \+ eu-west-1/);
    await expectWholePage(page, { long: false });
    await saveScreenshot(page, `rules-list-${width}`);
  });

  it.each(WIDTHS)("integration page at %i px: the receiver's URL on one line, a dry run that says it would find no host", async (width) => {
    const { page, env, base } = ui;
    const made = (await env.api('POST', '/api/v1/integrations', { name: `prometheus ${width}`, type: 'alertmanager' })).json();
    const rule = await env.api('POST', '/api/v1/rules', {
      name: `clean disks on alert (${width})`, trigger: { type: 'alert', integrationId: made.id },
      action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } }, target: { type: 'trigger_host' }, infrastructureType: 'On_Premise',
    });
    expect(rule.statusCode, rule.body).toBe(201);
    await page.setViewportSize({ width, height: 900 });
    await signInAs(page, base, env.tenant.token, `/integrations/${made.id}`);
    await page.getByLabel('API key for the URL').fill(env.tenant.apiKey);
    const url = `${base}/api/v1/trigger/channel/alertmanager/${env.tenant.apiKey}/${made.id}`;
    const snippet = page.getByLabel('Alertmanager receiver');
    await expect.poll(() => snippet.innerText()).toContain(`- url: '${url}'`);

    // The URL is one line of the YAML as Alertmanager reads it: the block scrolls sideways instead.
    const layout = await snippet.evaluate((pre, text) => {
      // The lines the URL's text is drawn on: one box per line it covers.
      const node = [...pre.childNodes].find((child) => child.textContent!.includes(text))!;
      const range = pre.ownerDocument.createRange();
      const at = node.textContent!.indexOf(text);
      range.setStart(node, at);
      range.setEnd(node, at + text.length);
      const lineTops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      const style = pre.ownerDocument.defaultView!.getComputedStyle(pre);
      return { urlLines: lineTops.size, whiteSpace: style.whiteSpace, overflowX: style.overflowX };
    }, url);
    expect(layout).toEqual({ urlLines: 1, whiteSpace: 'pre', overflowX: 'auto' });

    // A dry run stops before a target is looked for: it says what acting would have done.
    const test = page.getByRole('form', { name: 'send a test alert' });
    await test.getByLabel('Host').fill('ghost-1');
    await test.getByRole('button', { name: 'Send test alert' }).click();
    const acted = page.locator('[data-if-acted]');
    await expect.poll(() => acted.getAttribute('data-if-acted')).toBe('no_target');
    expect(await acted.innerText()).toMatch(/^Had it acted: no target no host named "ghost-1" has an agent in this tenant$/);
    await page.locator('tr[data-alert="PitcrewTestAlert"]').waitFor();
    await expectColumnsInView(page.locator('table.alerts-table'));
    await expectWholePage(page, { long: width === 800 });
    await saveScreenshot(page, `integration-page-${width}`);
  });

  it("names a tick of a cron rule's schedule as its reason, its idempotency key aside", async () => {
    const { page, env, base } = ui;
    const made = await env.api('POST', '/api/v1/rules', {
      name: 'morning report', trigger: { type: 'cron', schedule: '0 6 * * *', timezone: 'UTC' },
      action: { type: 'script', flavour: 'diagnostics', runbook: { script: 'uptime' } }, target: { type: 'specific_host', hostname: 'db-1' }, infrastructureType: 'On_Premise',
    });
    expect(made.statusCode, made.body).toBe(201);
    const tick = made.json().schedule.nextTicks[0] as string;
    await env.app.context.scheduler.pass(Date.parse(tick));
    const [event] = (await env.api('GET', `/api/v1/rules/${made.json().id}/events`)).json().items;
    expect(event).toMatchObject({ outcome: 'accepted', reason: null, idempotencyKey: `cron:${Date.parse(tick)}` });

    await page.setViewportSize({ width: 1440, height: 900 });
    await signInAs(page, base, env.tenant.token, `/rules/${made.json().id}`);
    const reason = panel('Events').locator(`tr#event-${event.id} td.cell-reason`);
    await reason.waitFor();
    expect(await reason.innerText()).toBe(`cron tick ${tick.slice(0, 10)} 06:00 UTC`);
    expect(await reason.locator('[data-tick]').getAttribute('title')).toMatch(new RegExp(`^Idempotency-Key cron:${Date.parse(tick)}`));
    await saveScreenshot(page, 'cron-rule-events-1440');
  });

  it('lists hosts by name, numbers as numbers', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/hosts');
    const names = page.locator('tbody tr[data-host] td:first-child');
    await expect.poll(() => names.allInnerTexts()).toEqual(['api-3', 'db-1', 'Web-1', 'web-2', 'web-10']);
  });
});
