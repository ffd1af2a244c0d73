import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInAs } from '../support/browser.js';
import { emulatedAlarm, startKeystoneMonasca, transition, type KeystoneMonasca } from '../support/keystone-monasca.js';
import { uiSession } from '../support/ui-session.js';

// Issue 38.2 in Chromium against a real server and the Keystone/Monasca emulator: set up a
// Monasca import on the integration page (its read-only Keystone login, written and never shown
// back), Import now, see it succeed with its count, and a refused login said in words.
describe('the import section of an integration page', () => {
  const USER = { username: 'monitor-reader', password: 'reader-password-77', domain: 'Default', projects: ['ops'] };
  const DAY = 86_400_000;
  const ui = uiSession();
  let cloud: KeystoneMonasca;

  beforeAll(async () => {
    cloud = await startKeystoneMonasca([USER]);
    const project = cloud.projects.get('ops')!;
    const cpu = { id: 'def-cpu', name: 'high cpu', severity: 'CRITICAL' as const };
    const at = (daysAgo: number) => Math.floor((Date.now() - daysAgo * DAY) / 1000) * 1000;
    project.alarms.push(emulatedAlarm('alarm-a', cpu, 'web-1', at(10)));
    transition(project, 'alarm-a', 'ALARM', at(3));
    transition(project, 'alarm-a', 'OK', at(2));
  });
  afterAll(() => cloud.close());

  it('sets up the import through the form, imports now with its count, and says why a refused import failed', async () => {
    const { page, env, base } = ui;
    const made = await env.api('POST', '/api/v1/integrations', { name: 'monasca-eu', type: 'monasca', config: { monascaUrl: cloud.url } });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    await signInAs(page, base, env.tenant.token, `/integrations/${id}`);
    const section = page.getByRole('region', { name: 'Import' });
    await section.getByText(/can import Monasca’s alarms .* reads with a Keystone login/).waitFor();
    await section.getByText('No import yet.').waitFor();

    const form = section.getByRole('form', { name: 'import settings' });
    await form.getByLabel('Look-back (days)').fill('7');
    const login = { version: 'v3', identityUrl: cloud.url, username: USER.username, password: USER.password, project: 'ops' };
    await form.getByLabel('Read-only secret').fill(JSON.stringify(login));
    await form.getByRole('button', { name: 'Save import settings' }).click();
    await section.getByText('Import settings saved.').waitFor();
    // Write-only: the form is empty again, the page says one is set, and the API never gives it back.
    expect(await form.getByLabel('Read-only secret').inputValue()).toBe('');
    await section.getByText(/A secret is set \(never shown\)/).waitFor();
    const shown = (await env.api('GET', `/api/v1/integrations/${id}`)).json();
    expect(shown.import).toMatchObject({ enabled: false, lookbackDays: 7, hasSecret: true });
    expect(JSON.stringify(shown)).not.toContain(USER.password);

    await section.getByRole('button', { name: 'Import now' }).click();
    const rows = section.getByRole('table', { name: 'recent imports' }).locator('tbody tr');
    await expect.poll(() => rows.first().getAttribute('data-import-state'), { timeout: 20_000 }).toBe('succeeded');
    // Two transitions of alarm-a in the look-back: a firing and its resolution.
    expect(await rows.first().locator('td').nth(3).innerText()).toBe('2');

    // A password Keystone refuses: the import fails, and the page says what Keystone said.
    await form.getByLabel('Read-only secret').fill(JSON.stringify({ ...login, password: 'not-the-password-5' }));
    await form.getByRole('button', { name: 'Save import settings' }).click();
    await section.getByText('Import settings saved.').waitFor();
    await section.getByRole('button', { name: 'Import now' }).click();
    await expect.poll(() => rows.first().getAttribute('data-import-state'), { timeout: 20_000 }).toBe('failed');
    expect(await rows.first().innerText()).toMatch(/Keystone refused the credentials of user monitor-reader of project ops/);
    expect(await page.content()).not.toContain('not-the-password-5');
    expect(await rows.count()).toBe(2);
  });
});
