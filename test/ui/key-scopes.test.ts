import { describe, expect, it } from 'vitest';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 22 in Chromium against a real server: a key's scopes are shown and chosen, a key with
// both is called out and narrowed in place, agents get a key of their own, and a host's page
// shows who took its name and how to replace it.
describe('key scopes and host replacement in the web UI', () => {
  const ui = uiSession({
    setup: async (env) => {
      await env.enrol('web-1', ['web']);
    },
  });
  const keys = async () => (await ui.env.api('GET', '/api/v1/api-keys?limit=1000')).json().items as Array<{ name: string; scopes: string[] }>;

  it('shows each key\'s scopes, issues an agent key, and narrows a key with both after saying what stops', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/api-keys');
    const bootstrap = page.locator('tr[data-key="bootstrap"]');
    await bootstrap.locator('[data-scopes="webhook enrol"]').waitFor();
    const note = page.getByRole('note').filter({ hasText: 'can both fire webhooks and enrol agents' });
    await expect.poll(() => note.innerText()).toMatch(/^1 key can both fire webhooks and enrol agents\s+\(“bootstrap”\)\. Keys made before scopes existed/);

    await page.getByLabel('New key name').fill('agents eu');
    await page.getByText('Agents', { exact: true }).click();
    await page.getByRole('button', { name: 'Issue key' }).click();
    const reveal = page.getByRole('dialog');
    await expect.poll(() => reveal.innerText()).toMatch(/Agents read it from PITCREW_API_KEY to enrol\./);
    expect(await reveal.innerText()).not.toMatch(/Webhook URLs take it/);
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await page.locator('tr[data-key="agents eu"] [data-scopes="enrol"]').waitFor();
    expect((await keys()).find((k) => k.name === 'agents eu')!.scopes).toEqual(['enrol']);

    await bootstrap.getByRole('button', { name: 'Keep webhook only' }).click();
    const confirm = page.getByRole('dialog', { name: 'Narrow “bootstrap”' + ` (…${env.tenant.apiKey.slice(-4)}) to webhook?` });
    await expect.poll(() => confirm.innerText()).toMatch(/this key cannot enrol agents[\s\S]*refused with 403[\s\S]*not given back/);
    await confirm.getByRole('button', { name: 'Keep webhook only' }).click();
    await bootstrap.locator('[data-scopes="webhook"]').waitFor();
    await note.waitFor({ state: 'detached' });
    expect(await bootstrap.getByRole('button', { name: /Keep/ }).count()).toBe(0);
    expect((await keys()).find((k) => k.name === 'bootstrap')!.scopes).toEqual(['webhook']);
  });

  it('makes an enrol key from the install steps on the hosts page', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/hosts');
    await page.getByRole('button', { name: 'Connect a host' }).click();
    await page.getByRole('button', { name: 'Make an agent key' }).click();
    // The block shows a placeholder until the key comes back, so wait for the key itself.
    await expect.poll(() => page.getByLabel('export the API key').innerText()).toMatch(/^export PITCREW_API_KEY=[0-9a-f]{64}$/);
    const made = (await keys()).filter((k) => k.name === 'agents');
    expect(made.map((k) => k.scopes)).toEqual([['enrol']]);
  });

  it("shows a host's enrolments, a replacement with its key and address, and the command that replaces it", async () => {
    const { page, env, base } = ui;
    const agentKey = (await env.api('POST', '/api/v1/api-keys', { name: 'rebuild', scopes: ['enrol'] })).json().apiKey;
    const replaced = await env.app.server.inject({
      method: 'POST', url: '/api/v1/agents/enrol', remoteAddress: '10.9.9.9',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ hostname: 'web-1', tags: [], os: 'Linux rebuilt', arch: 'x64', version: '9.9.9', replace: true }),
    });
    expect(replaced.statusCode, replaced.body).toBe(201);

    await signInAs(page, base, env.tenant.token, '/hosts');
    await page.locator('tr[data-host="web-1"]').getByRole('button', { name: 'History and replace' }).click();
    const dialog = page.getByRole('dialog', { name: 'web-1: enrolments' });
    const rows = dialog.getByRole('table', { name: 'enrolments' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(0).innerText()).toMatch(/replaced\s+rebuild\s+10\.9\.9\.9\s+9\.9\.9 · Linux rebuilt/);
    expect(await rows.nth(1).innerText()).toMatch(/enrolled\s+bootstrap\s+127\.0\.0\.1/);
    await expect.poll(() => dialog.getByLabel('replace command').innerText()).toMatch(/^node pitcrew-agent\.mjs --server https:\/\/.* --server-fingerprint \S+ --hostname web-1 --replace$/);
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  it('saves an agent allowlist apart from the webhook one, and enrolment obeys it', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/settings');
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Agent allowlist' }) });
    await form.getByText('The list is empty: agent enrolments are accepted from every address.', { exact: false }).waitFor();
    await form.getByRole('button', { name: 'Add an address' }).click();
    await form.getByLabel('Allowed address 1').fill('10.20.0.0/16');
    await form.getByRole('button', { name: 'Save allowlist' }).click();
    const confirm = page.getByRole('dialog', { name: 'Accept agent enrolments only from 1 address or range?' });
    await expect.poll(() => confirm.innerText()).toMatch(/Agent enrolments from other addresses will be refused with 403/);
    await confirm.getByRole('button', { name: 'Save allowlist' }).click();
    await form.getByRole('status').getByText('Saved: agent enrolments are accepted only from 1 address or range.').waitFor();
    const tenant = (await env.api('GET', '/api/v1/tenant')).json();
    expect(tenant).toMatchObject({ agentAllowlist: ['10.20.0.0/16'], ipAllowlist: [] });
  });
});
