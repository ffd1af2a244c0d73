import { describe, expect, it } from 'vitest';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 18, point 5, in Chromium against a real server: write a cron rule in the wizard, its next
// runs previewed in the rule's zone as you type (the service's own reading, and its refusal at the
// field), then on the rule's page its next ticks and its last one, paused and resumed.
describe('cron rules in the web UI', () => {
  // A schedule or zone the service cannot read is a 400 the wizard shows at the field.
  const ui = uiSession({ refusedStatuses: [400], setup: async (env) => void (await env.enrol('batch-1', ['batch'])) });

  const preview = async (schedule: string, timezone: string) => {
    const response = await ui.env.api('POST', '/api/v1/schedules/preview', { schedule, timezone, count: 5 });
    return { status: response.statusCode, body: response.json() };
  };
  const ruleNamed = async (name: string) => (await ui.env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === name);

  it('creates a cron rule with its next runs previewed, shows its ticks, pauses and resumes it', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill('rotate logs');
    await page.getByRole('radio', { name: /^Schedule/ }).check();

    // The zone starts as the browser's own.
    const zone = page.getByLabel('Time zone', { exact: true });
    expect(await zone.inputValue()).toBe(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone));
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('write the cron expression').waitFor();

    // Once a day: the service's next ticks cannot move on between its answer to the page and to the test.
    const expression = page.getByLabel('Cron expression', { exact: true });
    await expression.fill('30 2 * * *');
    await zone.fill('Europe/Berlin');
    const shown = page.locator('ol[aria-label="next runs"][data-settled="true"] time');
    const listed = async () => ({ local: await shown.allInnerTexts(), at: await shown.evaluateAll((times) => times.map((time) => time.getAttribute('datetime'))) });
    const expected = async (schedule: string, timezone: string) => {
      const { status, body } = await preview(schedule, timezone);
      expect(status).toBe(200);
      const ticks = body.ticks as Array<{ at: string; local: string }>;
      expect(ticks).toHaveLength(5);
      return { local: ticks.map((tick) => tick.local), at: ticks.map((tick) => tick.at) };
    };
    await expect.poll(listed).toEqual(await expected('30 2 * * *', 'Europe/Berlin'));
    expect((await listed()).local[0]).toMatch(/^\d{4}-\d\d-\d\d 02:30:00 CES?T$/);
    expect(await page.getByRole('region', { name: 'schedule preview' }).innerText()).toContain('Every day at 02:30, in Europe/Berlin');

    // Another zone, another wall clock: the same schedule read in Tokyo.
    await zone.fill('Asia/Tokyo');
    await expect.poll(listed).toEqual(await expected('30 2 * * *', 'Asia/Tokyo'));

    // What the service cannot read is said at the field that holds it, in its words.
    await expression.fill('61 2 * * *');
    const refused = await preview('61 2 * * *', 'Asia/Tokyo');
    expect(refused.status).toBe(400);
    const scheduleError = refused.body.errors.find((error: { path: string }) => error.path === '/schedule').message as string;
    expect(scheduleError).toMatch(/not a valid schedule/);
    await page.getByText(scheduleError, { exact: true }).waitFor();
    await expect.poll(() => expression.getAttribute('aria-invalid')).toBe('true');
    expect(await shown.count()).toBe(0);
    await expression.fill('30 2 * * *');
    await zone.fill('Mars/Olympus');
    const zoneError = (await preview('30 2 * * *', 'Mars/Olympus')).body.errors.find((error: { path: string }) => error.path === '/timezone').message as string;
    await page.getByText(zoneError, { exact: true }).waitFor();
    await expect.poll(() => zone.getAttribute('aria-invalid')).toBe('true');
    expect(await expression.getAttribute('aria-invalid')).toBeNull();
    await zone.fill('Europe/Berlin');
    await expect.poll(listed).toEqual(await expected('30 2 * * *', 'Europe/Berlin'));
    expect(await zone.getAttribute('aria-invalid')).toBeNull();

    // Issue 36: a schedule that reads well and never fires (31 February) is refused at the field, and
    // Next keeps the step, even before the preview answered (typed and Next at once).
    await expression.fill('0 0 31 2 *');
    await page.getByRole('button', { name: 'Next' }).click();
    const never = (await preview('0 0 31 2 *', 'Europe/Berlin')).body.errors.find((error: { path: string }) => error.path === '/schedule').message as string;
    expect(never).toMatch(/^never fires: /);
    await page.locator('.field-error', { hasText: never }).first().waitFor();
    await expect.poll(() => expression.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('heading', { name: 'Trigger', exact: true }).count()).toBe(1);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.locator('.field-error', { hasText: never }).first().waitFor();
    expect(await page.getByRole('heading', { name: 'Trigger', exact: true }).count()).toBe(1);
    await expression.fill('30 2 * * *');
    await expect.poll(listed).toEqual(await expected('30 2 * * *', 'Europe/Berlin'));

    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Infrastructure and target' }).waitFor();
    // A tick names no host: the host in the alert is not offered, and a target must be chosen.
    expect(await page.getByRole('radio', { name: /^The host in the alert/ }).count()).toBe(0);
    expect(await page.getByRole('radio', { name: /^Hosts with tags/ }).count()).toBe(1);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.locator('.field-error', { hasText: 'a schedule names no host' }).waitFor();
    await page.getByRole('radio', { name: /^Hosts with tags/ }).check();
    const tags = page.getByRole('textbox', { name: 'Tags' });
    await tags.fill('batch');
    await tags.press('Enter');
    await page.getByText('1 host matches').waitFor();
    expect(await page.getByRole('radio', { name: /^One online host/ }).isChecked()).toBe(true);
    expect(await page.getByLabel('Hosts at once').count()).toBe(0);
    await page.getByRole('button', { name: 'Next' }).click();
    // The sample script says what a tick gives the run.
    await expect.poll(() => page.locator('.cm-content').innerText()).toContain('$PITCREW_SCHEDULED_TIME');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Review and create' }).waitFor();
    const review = await page.locator('.wizard-step dl').innerText();
    expect(review).toMatch(/Schedule 30 2 \* \* \* \(Europe\/Berlin\)/);
    expect(review).toMatch(/every day at 02:30, Europe\/Berlin time/);
    expect(review).toMatch(/One online host of tags batch/);
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'rotate logs' }).waitFor();

    const made = await ruleNamed('rotate logs');
    expect(page.url()).toBe(`${base}/rules/${made.id}`);
    expect(made).toMatchObject({ enabled: true, trigger: { type: 'cron', schedule: '30 2 * * *', timezone: 'Europe/Berlin', overlap: 'skip' }, target: { type: 'specific_tags', tags: ['batch'] } });
    expect(made.schedule.nextTicks).toHaveLength(5);

    // The rule page: its next ticks on the zone's wall clock, as the preview reads them.
    const panel = page.getByRole('region', { name: 'schedule', exact: true });
    const ticks = panel.locator('ol[aria-label="next ticks"] time');
    const pageTicks = async () => ({ local: await ticks.allInnerTexts(), at: await ticks.evaluateAll((times) => times.map((time) => time.getAttribute('datetime'))) });
    await expect.poll(pageTicks).toEqual({ local: (await expected('30 2 * * *', 'Europe/Berlin')).local, at: made.schedule.nextTicks });
    expect(await panel.innerText()).toMatch(/Last tick\s*none yet/);

    // A tick comes (the scheduler's pass at its time): the panel shows it as the last, linked to its event.
    await env.app.context.scheduler.pass(Date.parse(made.schedule.nextTicks[0]));
    const ticked = await ruleNamed('rotate logs');
    expect(ticked.lastEvent).toMatchObject({ outcome: 'no_target' });
    expect(ticked.schedule.nextTicks[0]).toBe(made.schedule.nextTicks[1]);
    const lastTick = panel.locator('[data-last-tick]');
    await expect.poll(() => lastTick.getAttribute('data-last-tick'), { timeout: 15_000 }).toBe('no_target');
    await expect.poll(() => ticks.first().getAttribute('datetime'), { timeout: 15_000 }).toBe(made.schedule.nextTicks[1]);
    await lastTick.getByRole('link').click();
    await expect.poll(() => page.locator(`tr#event-${ticked.lastEvent.id}`).getAttribute('class')).toBe('row-expanded');

    // Pause: the page asks first, then says there are no ticks; the service agrees.
    await page.getByRole('switch', { name: 'Turn off rotate logs' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.innerText()).toMatch(/It has no ticks.*the ticks it missed are not run/s);
    await dialog.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => panel.locator('[data-ticks="paused"]').count()).toBe(1);
    expect(await panel.locator('[data-ticks="paused"]').innerText()).toMatch(/^Paused: no ticks\./);
    expect(await ticks.count()).toBe(0);
    const paused = await ruleNamed('rotate logs');
    expect(paused).toMatchObject({ enabled: false, schedule: { nextTicks: [] } });

    // Resume: the next ticks are back, from the next one after now.
    await page.getByRole('switch', { name: 'Turn on rotate logs' }).click();
    await expect.poll(() => ticks.count()).toBe(5);
    const resumed = await ruleNamed('rotate logs');
    expect(resumed.enabled).toBe(true);
    expect(resumed.schedule.nextTicks).toHaveLength(5);
    await expect.poll(async () => (await pageTicks()).at).toEqual(resumed.schedule.nextTicks);
    expect(await panel.locator('[data-ticks="paused"]').count()).toBe(0);

    // Edit: the schedule is a field like any other.
    await page.getByRole('link', { name: 'Edit' }).click();
    await expect.poll(() => expression.inputValue()).toBe('30 2 * * *');
    expect(await zone.inputValue()).toBe('Europe/Berlin');
    await expression.fill('0 3 * * *');
    const at3 = await expected('0 3 * * *', 'Europe/Berlin');
    await expect.poll(listed).toEqual(at3);
    await page.getByRole('button', { name: 'Review and create' }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/rules/${made.id}`);
    await expect.poll(async () => (await pageTicks()).local).toEqual(at3.local);
    expect((await ruleNamed('rotate logs')).trigger).toEqual({ type: 'cron', schedule: '0 3 * * *', timezone: 'Europe/Berlin', overlap: 'skip' });
  });
});
