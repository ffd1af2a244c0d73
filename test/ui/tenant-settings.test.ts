import { describe, expect, it } from 'vitest';
import { goByKeys, signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// The tenant's ingress settings in Chromium against a real server: what they mean is said before
// they apply, the service's refusals land at the field, and a saved setting takes effect at once.
describe('tenant settings in the web UI', () => {
  // The refused allowlist is part of the story.
  const ui = uiSession({ refusedStatuses: [400] });

  const tenant = async () => (await ui.env.api('GET', '/api/v1/tenant')).json();
  const allowlist = () => ui.page.locator('form', { has: ui.page.getByRole('heading', { name: 'IP allowlist' }) });
  const throttle = () => ui.page.locator('form', { has: ui.page.getByRole('heading', { name: 'Throttle' }) });

  it('saves an allowlist after saying that other addresses get 403, with a wrong CIDR refused at its field', async () => {
    const { page, env, base } = ui;
    const rule = await env.createWebhookRule({ name: 'guarded webhook' });
    await signInAs(page, base, env.tenant.token, '/rules');
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Tenant settings' }).waitFor();
    const form = allowlist();
    await form.getByText('The list is empty: webhooks are accepted from every address. An empty list always means every address.').waitFor();

    await form.getByRole('button', { name: 'Add an address' }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.id') as Promise<string>).toBe(await form.getByLabel('Allowed address 1').getAttribute('id'));
    await page.keyboard.type('10.0.0.0/33');
    await form.getByRole('button', { name: 'Add an address' }).click();
    await form.getByLabel('Allowed address 2').fill(' 203.0.113.0/24 ');
    await form.getByLabel('Allowed address 2').press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Accept webhooks only from 2 addresses or ranges?' });
    await expect.poll(() => confirm.innerText()).toMatch(/Webhooks from other addresses will be refused with 403[\s\S]*10\.0\.0\.0\/33\s+203\.0\.113\.0\/24/);
    await confirm.getByRole('button', { name: 'Save allowlist' }).click();

    // The service names the entry it refuses; the page puts its message at that input.
    await form.getByText('"10.0.0.0/33" is not an IPv4 or IPv6 CIDR such as 203.0.113.0/24 or 2001:db8::/32').waitFor();
    expect(await form.getByLabel('Allowed address 1').getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByLabel('Allowed address 2').getAttribute('aria-invalid')).toBeNull();
    expect((await tenant()).ipAllowlist).toEqual([]);

    await form.getByLabel('Allowed address 1').fill('2001:db8::/32');
    expect(await form.getByLabel('Allowed address 1').getAttribute('aria-invalid')).toBeNull();
    await form.getByRole('button', { name: 'Save allowlist' }).click();
    await confirm.getByRole('button', { name: 'Save allowlist' }).click();
    await form.getByRole('status').getByText('Saved: webhooks are accepted only from 2 addresses or ranges.').waitFor();
    await form.getByText('Now: webhooks are accepted only from 2 addresses or ranges. An empty list means every address.').waitFor();
    expect((await tenant()).ipAllowlist).toEqual(['2001:db8::/32', '203.0.113.0/24']);
    expect((await env.webhook(rule.triggerId, {}, { ip: '198.51.100.1' })).statusCode).toBe(403);
    expect((await env.webhook(rule.triggerId, {}, { ip: '203.0.113.9' })).statusCode).toBe(202);

    // Emptying the list says what that means too.
    await form.getByRole('button', { name: 'Remove address 2' }).click();
    await form.getByRole('button', { name: 'Remove address 1' }).click();
    await form.getByRole('button', { name: 'Save allowlist' }).click();
    const open = page.getByRole('dialog', { name: 'Accept webhooks from every address?' });
    await open.getByText('With an empty list, any address that has one of your API keys can call your webhooks.').waitFor();
    await open.getByRole('button', { name: 'Save allowlist' }).click();
    await form.getByRole('status').getByText('Saved: webhooks are accepted from every address.').waitFor();
    expect((await tenant()).ipAllowlist).toEqual([]);
    expect((await env.webhook(rule.triggerId, {}, { ip: '198.51.100.1' })).statusCode).toBe(202);
  });

  it("saves the tenant's own throttle, checking it first, and returns to the service's defaults", async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/settings');
    const form = throttle();
    await form.getByText("Now: the service's defaults (PITCREW_THROTTLE_RATE, PITCREW_THROTTLE_BURST).").waitFor();
    await form.getByText("This tenant's own").click();
    await form.getByLabel('Rate (calls per second)').fill('0');
    await form.getByLabel('Burst (calls)').fill('200');
    await form.getByRole('button', { name: 'Save throttle' }).click();
    await form.getByText('must be from 1 to 10000000').waitFor();
    expect(await form.getByLabel('Rate (calls per second)').getAttribute('aria-invalid')).toBe('true');
    expect((await tenant()).throttle).toBeNull();

    await form.getByLabel('Rate (calls per second)').fill('50');
    await form.getByRole('button', { name: 'Save throttle' }).click();
    await form.getByRole('status').getByText('Saved: 50 calls per second, bursts of 200.').waitFor();
    expect((await tenant()).throttle).toEqual({ ratePerSecond: 50, burst: 200 });

    // A reload shows what is stored; the keyboard reaches the page (g s).
    await page.goto(`${base}/rules`);
    await page.getByRole('heading', { name: 'Rules' }).waitFor();
    await goByKeys(page, 's', /\/settings$/);
    await throttle().getByText('Now: 50 calls per second, bursts of 200.').waitFor();
    expect(await throttle().getByLabel('Rate (calls per second)').inputValue()).toBe('50');

    await throttle().getByText("The service's defaults").click();
    await throttle().getByRole('button', { name: 'Save throttle' }).click();
    await throttle().getByRole('status').getByText("Saved: the service's defaults apply.").waitFor();
    expect((await tenant()).throttle).toBeNull();
  });

  it("saves when a resolution is automation's and when a webhook's incident closes, in minutes, a wrong one refused at its field", async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/settings');
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Incidents' }) });
    // The defaults, as the API gives them in seconds (tenants/routes.ts).
    await form.getByText("Now: a resolution within 60 min of a fix is automation's; a webhook's incident closes after 30 min quiet.").waitFor();
    expect((await tenant()).incidents).toEqual({ automationWindowSeconds: 3600, quietSeconds: 1800 });

    await form.getByLabel('Automation window (minutes)').fill('10081');
    await form.getByLabel('Quiet period (minutes)').fill('45');
    await form.getByRole('button', { name: 'Save incident settings' }).click();
    await form.getByText('must be from 1 to 10080').waitFor();
    expect(await form.getByLabel('Automation window (minutes)').getAttribute('aria-invalid')).toBe('true');
    expect((await tenant()).incidents).toEqual({ automationWindowSeconds: 3600, quietSeconds: 1800 });

    await form.getByLabel('Automation window (minutes)').fill('90');
    await form.getByRole('button', { name: 'Save incident settings' }).click();
    await form.getByRole('status').getByText("Saved: a resolution within 90 min of a fix is automation's; a webhook's incident closes after 45 min quiet.").waitFor();
    expect((await tenant()).incidents).toEqual({ automationWindowSeconds: 5400, quietSeconds: 2700 });
    const entry = (await env.api('GET', '/api/v1/audit?action=tenant.update')).json().items[0];
    expect(entry.after.incidents).toEqual({ automationWindowSeconds: 5400, quietSeconds: 2700 });
  });

  it('says how long history is kept, and who sets it', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/settings');
    const history = page.getByRole('region', { name: 'History' });
    await history.getByText('Kept for ever: nothing is deleted.').waitFor();
    expect(await history.innerText()).toContain('Set for the whole service by whoever runs pitcrew (PITCREW_RETENTION_DAYS).');
  });
});
