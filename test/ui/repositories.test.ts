import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, waitOnline, type AgentProcess } from '../support/agents.js';
import { startTestEnv, type TestEnv } from '../support/app.js';
import { type BrowserSession, goByKeys, openBrowser, signInAs, watchApiAnswers } from '../support/browser.js';
import { startGitServers, type GitServers, type TestRepository } from '../support/git-server.js';

// Issue 20, points 2 to 4 and 6, in Chromium against a real server, real git servers (git
// http-backend behind HTTPS with a token, sshd with a deploy key) and a real agent: connect a
// repository (the secret write-only: never in the page nor in any answer), test the connection
// (refused, then ok), list its files, make a rule that runs one of them, see the execution say
// which commit it ran, and be refused deleting the repository while the rule reads it.
const RESTART = '#!/bin/sh\necho "restarting $ServiceName on $HostName"\n';
const WRONG_TOKEN = 'ghp_wrongwrongwrongwrong';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('git repositories in the web UI', () => {
  let servers: GitServers;
  let ops: TestRepository;
  let head: string;
  let env: TestEnv;
  let agent: AgentProcess;
  let browser: BrowserSession;
  let page: Page;
  let base: string;
  let answers: ReturnType<typeof watchApiAnswers>;
  // What the tests provoke, and Chromium logs: a URL refused (400), deleting a repository in use (409).
  const refused = /Failed to load resource: the server responded with a status of (400|409)/;

  beforeAll(async () => {
    servers = await startGitServers();
    ops = servers.repository('ops');
    head = ops.commit({ 'runbooks/restart.sh': RESTART, 'runbooks/disk.sh': 'df -h\n', 'README.md': '# ops\n' });
    env = await startTestEnv('sqlite', { listen: true, webUi: true, git: { caPem: servers.https.caPem } });
    base = env.listening!.httpUrl;
    agent = spawnAgent({ server: env.listening!.httpsUrl, apiKey: env.tenant.apiKey, hostname: 'web-1', fingerprint: env.listening!.fingerprint });
    await waitOnline(env.api, 'web-1');
    browser = await openBrowser();
    page = browser.page;
    answers = watchApiAnswers(page);
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
    await env?.close();
    await servers?.close();
  });
  afterEach(() => {
    expect(browser.consoleErrors.filter((line) => !refused.test(line))).toEqual([]);
    browser.consoleErrors.length = 0;
  });

  const expectNoSecretShown = () => answers.expectNoneShown([servers.token, WRONG_TOKEN]);
  const repositoryId = async () => (await env.api('GET', '/api/v1/repositories')).json().items[0].id as string;
  const outcome = () => page.locator('[data-test-outcome]');

  it('connects a repository with a token it never shows again, tests the connection and lists its files', async () => {
    await signInAs(page, base, env.tenant.token, '/runbooks');
    await page.getByRole('link', { name: 'Git repositories' }).click();
    await page.getByText('No repository yet').waitFor();
    // Reached from the main navigation too, and by the keys g g.
    await page.getByRole('navigation', { name: 'main' }).locator('a[href="/rules"]').click();
    await page.getByRole('navigation', { name: 'main' }).locator('a[href="/repositories"]').click();
    await page.getByText('No repository yet').waitFor();
    await page.getByRole('navigation', { name: 'main' }).locator('a[href="/rules"]').click();
    await page.waitForURL(/\/rules$/);
    await goByKeys(page, 'g', /\/repositories$/);
    await page.getByText('No repository yet').waitFor();
    const form = page.getByRole('form', { name: 'connect a repository' });
    await form.getByLabel('Name', { exact: true }).fill('ops-runbooks');
    // A URL the service will not read: its words at the field, nothing stored.
    await form.getByLabel('URL', { exact: true }).fill('ftp://git.example.com/ops.git');
    await form.getByLabel('Token', { exact: true }).fill(WRONG_TOKEN);
    expect(await form.getByLabel('Token', { exact: true }).getAttribute('type')).toBe('password');
    await form.getByRole('button', { name: 'Connect repository' }).click();
    const said = (await env.api('POST', '/api/v1/repositories', { name: 'x', url: 'ftp://git.example.com/ops.git', ref: 'main' })).json().errors[0];
    expect(said.path).toBe('/body/url');
    const urlField = form.locator('.field', { has: page.getByLabel('URL', { exact: true }) });
    await expect.poll(() => urlField.locator('.field-error').innerText()).toBe(said.message);
    expect((await env.api('GET', '/api/v1/repositories')).json().items).toEqual([]);

    await form.getByLabel('URL', { exact: true }).fill(servers.https.url('ops'));
    await form.getByRole('button', { name: 'Connect repository' }).click();
    await page.getByRole('heading', { name: 'ops-runbooks' }).waitFor();
    expect(page.url()).toBe(`${base}/repositories/${await repositoryId()}`);
    await expect.poll(() => page.locator('.settings').first().innerText()).toMatch(/Credential\s+access token\s+Last test\s+not tested/);

    // The token is wrong: the test says what the server answered.
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(/^Failed at .*: .*refused pitcrew: the server asked for a credential and did not accept the one given \(HTTP 401\)/);
    await expect.poll(() => page.locator('.settings').first().innerText()).toMatch(/Last test\s+failed/);

    const replace = page.getByRole('form', { name: 'replace the credential' });
    await replace.getByLabel('Token', { exact: true }).fill(servers.token);
    await replace.getByRole('button', { name: 'Replace credential' }).click();
    await replace.getByText('Credential replaced.', { exact: false }).waitFor();
    expect(await replace.getByLabel('Token', { exact: true }).inputValue()).toBe('');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(new RegExp(`^ok at .*: .* main is at commit ${head}`));
    await expect.poll(() => page.locator('.settings').first().innerText()).toMatch(/Last test\s+ok/);

    const files = page.getByRole('list', { name: 'files' });
    await expect.poll(() => files.innerText()).toBe('README.md\nrunbooks/disk.sh\nrunbooks/restart.sh');
    await expect.poll(() => page.locator('[data-files-summary]').innerText()).toBe(`3 files at main (commit ${head.slice(0, 12)})`);

    await page.getByRole('link', { name: 'Repositories', exact: true }).click();
    const row = page.locator('tr[data-repository="ops-runbooks"]');
    await expect.poll(() => row.innerText()).toMatch(new RegExp(`ops-runbooks\\s+${servers.https.url('ops').replace(/[.]/g, '\\.')}\\s+main\\s+access token\\s+ok`));
    await expectNoSecretShown();
  }, 60_000);

  it('connects over SSH with a deploy key and the host keys, and never shows the key again', async () => {
    await signInAs(page, base, env.tenant.token, '/repositories');
    const form = page.getByRole('form', { name: 'connect a repository' });
    await form.getByLabel('Name', { exact: true }).fill('ops over ssh');
    // An SSH URL picks the deploy key as it is typed.
    await form.getByLabel('URL', { exact: true }).fill(servers.ssh.url('ops'));
    expect(await form.getByRole('radio', { name: /^SSH with a deploy key/ }).isChecked()).toBe(true);
    await form.getByLabel('Deploy key', { exact: true }).fill(servers.deployKey.privateKey);
    await form.getByRole('button', { name: 'Connect repository' }).click();
    await form.getByText('paste the server’s host keys: ssh-keyscan HOST prints them').waitFor();
    await form.getByLabel('Known hosts', { exact: true }).fill(servers.ssh.knownHosts);
    await form.getByRole('button', { name: 'Connect repository' }).click();
    await page.getByRole('heading', { name: 'ops over ssh' }).waitFor();
    await expect.poll(() => page.locator('.settings').first().innerText()).toMatch(/Credential\s+SSH deploy key\s+Known hosts\s+\S+/);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => outcome().innerText()).toMatch(new RegExp(`^ok at .*: .* main is at commit ${head}`));
    await answers.expectNoneShown([servers.deployKey.privateKey.split('\n')[1]!]);

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete repository' }).click();
    await page.locator('tr[data-repository="ops-runbooks"]').waitFor();
    // The list may show the one deleted from its cache until its refetch lands.
    await expect.poll(() => page.locator('tr[data-repository="ops over ssh"]').count()).toBe(0);
  }, 60_000);

  it('makes a rule that runs a file of the repository, and the execution names the commit it ran', async () => {
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill('restart from git');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Infrastructure and target' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('radio', { name: /^A file in a git repository/ }).check();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('pick the repository that holds the runbook').waitFor();
    await page.getByLabel('Repository', { exact: true }).selectOption({ label: 'ops-runbooks' });
    await page.getByText(/^3 files at main \(/).waitFor();
    await page.getByLabel('Path in the repository').fill('restart');
    await page.getByRole('option', { name: 'runbooks/restart.sh' }).click();
    expect(await page.getByLabel('Path in the repository').inputValue()).toBe('runbooks/restart.sh');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('.settings').innerText()).toContain('Script · autofix · runbooks/restart.sh in “ops-runbooks” at main · sh · timeout 300 s (5 min)');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'restart from git' }).waitFor();
    await expect.poll(() => page.locator('[data-rule-runbook]').innerText()).toBe('runbooks/restart.sh in ops-runbooks at main (the repository’s), fetched before each run');

    const rule = (await env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === 'restart from git');
    expect(rule.action.runbook).toEqual({ repositoryId: await repositoryId(), path: 'runbooks/restart.sh', interpreter: 'sh' });
    const reply = await env.webhook(rule.trigger.triggerId, { HostName: 'web-1', MetaData: { ServiceName: 'nginx' } });
    expect(reply.statusCode, reply.body).toBe(202);
    const execution = page.getByRole('link', { name: /^execution .* on web-1: succeeded$/ });
    await execution.waitFor({ timeout: 30_000 });
    await execution.click();
    await page.getByText('restarting nginx on web-1').waitFor();
    await expect.poll(() => page.locator('[data-execution-runbook]').innerText()).toBe(`ops-runbooks @ ${head.slice(0, 7)} (main) runbooks/restart.sh`);
    await expect.poll(() => page.getByLabel('script that ran').textContent()).toBe(RESTART);
    expect(await page.locator('[data-sha256]').innerText()).toBe(sha256(RESTART));
    await expectNoSecretShown();
  }, 90_000);

  it('refuses to delete the repository while the rule reads it, saying which rule, and deletes it after', async () => {
    const id = await repositoryId();
    await signInAs(page, base, env.tenant.token, `/repositories/${id}`);
    await expect.poll(() => page.locator('[data-used-by]').innerText()).toBe('restart from git');
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete repository' }).click();
    const said = (await env.api('DELETE', `/api/v1/repositories/${id}`)).json().detail as string;
    expect(said).toContain('restart from git');
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe(said);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    const rule = (await env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === 'restart from git');
    expect((await env.api('DELETE', `/api/v1/rules/${rule.id}`)).statusCode).toBe(204);
    await page.reload();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete repository' }).click();
    await page.getByText('No repository yet').waitFor();
    expect((await env.api('GET', `/api/v1/repositories/${id}`)).statusCode).toBe(404);
    await expectNoSecretShown();
  }, 60_000);
});
