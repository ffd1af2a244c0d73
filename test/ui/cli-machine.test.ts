import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../support/app.js';
import { openBrowser, signInAs, type BrowserSession } from '../support/browser.js';
import { startEc2Emulator, type Ec2Emulator } from '../support/ec2-emulator.js';

// Issue 19, points 4 and 5, in Chromium against a real server: make a CLI runbook in the wizard
// (no host target, an AWS credential), fire it, and see on the execution's page Debian's aws CLI
// start an instance at the EC2 emulator (which checks the SigV4 signature), with the credential's
// secret masked in the output and absent from the page.
const KEY = { accessKeyId: 'AKIAI44QH8DHBUICLI01', secretAccessKey: 'uiCliSecret/Zp9Utk/h3yCo8nvbEXAMPLEKEY' };
const INSTANCE = 'i-0c11c11c';

describe('the CLI Machine in the web UI', () => {
  let env: TestEnv;
  let ec2: Ec2Emulator;
  let browser: BrowserSession;
  let page: Page;
  let base: string;
  let credentialId: string;

  beforeAll(async () => {
    ec2 = await startEc2Emulator();
    ec2.transitionPolls = 0;
    ec2.addKey(KEY.accessKeyId, KEY.secretAccessKey);
    ec2.addInstance({ id: INSTANCE, region: 'eu-west-1', state: 'stopped' });
    env = await startTestEnv('sqlite', { listen: true, webUi: true, awsEndpoint: ec2.url });
    base = env.listening!.httpUrl;
    credentialId = (await env.api('POST', '/api/v1/credentials', { name: 'aws ops', provider: 'aws', secret: KEY })).json().id;
    browser = await openBrowser();
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await ec2?.close();
  });

  it('makes a CLI runbook with a credential in the wizard; its run starts the instance and masks the secret', async () => {
    await signInAs(page, base, env.tenant.token, '/rules/new');
    await page.getByLabel('Rule name').fill('start the worker');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Flapping protection' }).waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Infrastructure and target' }).waitFor();
    await page.getByRole('radio', { name: /^CLI runbook/ }).check();
    // The CLI Machine is the target: no host to choose.
    expect(await page.getByRole('radio', { name: /^The host in the alert/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'CLI runbook' }).waitFor();
    expect(await page.getByRole('radio', { name: /^Autofix/ }).count()).toBe(0);
    await page.getByLabel('AWS credential').selectOption({ label: 'aws ops' });
    const editor = page.locator('.cm-content');
    await expect.poll(() => editor.innerText()).toContain('aws sts get-caller-identity');
    await editor.fill('echo "key=$AWS_SECRET_ACCESS_KEY"\naws --endpoint-url "$AWS_ENDPOINT_URL_EC2" --region eu-west-1 --output text ec2 start-instances --instance-ids "$InstanceId"\n');
    await page.getByLabel('Timeout (seconds)').fill('60');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Action limit' }).waitFor();
    expect(await page.getByLabel('Then').count()).toBe(0);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('heading', { name: 'Review and create' }).waitFor();
    await expect.poll(() => page.locator('.settings').innerText()).toMatch(/CLI runbook on the CLI Machine · sh · 3 lines · timeout 60 s \(1 min\)[\s\S]*Credentials\s+aws ops/);
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { name: 'start the worker' }).waitFor();
    await expect.poll(() => page.locator('[data-cli-credentials]').innerText()).toBe('aws ops');

    const rule = (await env.api('GET', '/api/v1/rules')).json().items.find((r: { name: string }) => r.name === 'start the worker');
    expect(rule).toMatchObject({ target: { type: 'cli_machine' }, action: { type: 'cli', credentialIds: [credentialId], runbook: { interpreter: 'sh' }, timeoutSeconds: 60 } });
    const reply = await env.webhook(rule.trigger.triggerId, { HostName: 'worker-1', InstanceId: INSTANCE });
    expect(reply.statusCode, reply.body).toBe(202);

    const execution = page.getByRole('link', { name: /^execution .* on worker-1: succeeded$/ });
    await execution.waitFor({ timeout: 30_000 });
    await execution.click();
    await page.getByText('key=********').waitFor();
    await expect.poll(() => page.locator('body').innerText()).toContain(`STARTINGINSTANCES\t${INSTANCE}`);
    expect(ec2.instance(INSTANCE)!.state).toBe('running');
    expect(await page.content()).not.toContain(KEY.secretAccessKey);
    expect(browser.consoleErrors).toEqual([]);
  }, 60_000);
});
