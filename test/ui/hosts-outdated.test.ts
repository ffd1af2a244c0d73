import { describe, expect, it } from 'vitest';
import { RELEASE_VERSION } from '../../src/hosts/agent-version.js';
import { signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';

// Issue 40 in Chromium against a real server: the hosts page marks an agent of an older release
// with the command that updates it, and leaves a current one alone.
describe('outdated agents on the hosts page', () => {
  const ui = uiSession({
    setup: async (env) => {
      const enrol = async (hostname: string, version: string) => {
        const response = await env.app.server.inject({
          method: 'POST', url: '/api/v1/agents/enrol',
          headers: { authorization: `Bearer ${env.tenant.apiKey}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ hostname, tags: [], os: 'Linux test', arch: 'x64', version }),
        });
        if (response.statusCode !== 201) throw new Error(response.body);
      };
      await enrol('db-behind', '0.0.9');
      await enrol('db-current', RELEASE_VERSION);
    },
  });

  it('shows "outdated: agent, server" on the older agent, opening to the copyable update command', async () => {
    const { page, env, base } = ui;
    await signInAs(page, base, env.tenant.token, '/hosts');
    const behind = page.locator('tr[data-host="db-behind"]');
    const badge = behind.getByText(`outdated: 0.0.9, server ${RELEASE_VERSION}`);
    await badge.waitFor();
    await badge.click();
    // Asked at the address the browser uses: the download URL is built from it.
    const install = await (await fetch(`${base}/api/v1/agents/install`, { headers: { authorization: `Bearer ${env.tenant.token}` } })).json() as { update: string };
    await expect.poll(() => behind.getByLabel('update command for db-behind').innerText()).toBe(install.update);
    expect(install.update).toMatch(/sha256sum -c - && sudo install -m 0755 pitcrew-agent\.mjs \/opt\/pitcrew-agent\/ && sudo systemctl restart pitcrew-agent$/);
    await behind.getByRole('button', { name: 'Copy' }).waitFor();

    const current = page.locator('tr[data-host="db-current"]');
    await current.getByText(RELEASE_VERSION, { exact: true }).waitFor();
    expect(await current.getByText(/outdated/).count()).toBe(0);
  });
});
