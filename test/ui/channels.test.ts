import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../support/app.js';
import { goByKeys, signInAs } from '../support/browser.js';
import { uiSession } from '../support/ui-session.js';
import { createChannel } from '../support/notify.js';
import { startReceiver, type Receiver } from '../support/receivers.js';
import { startSlackEmulator, type SlackEmulator } from '../support/slack-emulator.js';
import { startSmtpServer, type SmtpTestServer } from '../support/smtp.js';
import type { BootstrapResult } from '../../src/tenants/bootstrap.js';

// The notification pages in Chromium against a real server, a local HTTP receiver standing in
// for Slack, and a real SMTP server: what an SRE sets up once and relies on at 3 a.m.
describe('web UI: notification channels and escalation contacts', () => {
  // A Slack workspace's Web API (support/slack-emulator.ts), for a channel that posts through its app.
  let slackApi: SlackEmulator;
  beforeAll(async () => {
    slackApi = await startSlackEmulator();
  });
  // Refusals (400, 409, the test message's 502) are part of these stories, and Chromium logs each one it sees.
  const ui = uiSession({ refusedStatuses: [400, 401, 404, 409, 502, 503], notify: () => ({ slackApiUrl: slackApi.apiUrl }) });
  let env: TestEnv;
  let page: Page;
  let base: string;
  let slack: Receiver;
  let smtp: SmtpTestServer;

  beforeAll(async () => {
    ({ env, page, base } = ui);
    slack = await startReceiver();
    smtp = await startSmtpServer();
  });

  const asTenant = (tenant: BootstrapResult, path: string) => signInAs(page, base, tenant.token, path);

  /** Everything the page holds: its text, its markup, and what its fields contain. */
  async function pageHolds(text: string): Promise<boolean> {
    const values = await page.locator('input, textarea').evaluateAll((fields) => fields.map((field) => (field as unknown as { value: string }).value).join('\n'));
    return [await page.locator('body').innerText(), await page.content(), values].some((part) => part.includes(text));
  }

  const channelId = async (name: string): Promise<string> => {
    const channels = (await env.api('GET', '/api/v1/channels')).json().items as Array<{ id: string; name: string }>;
    return channels.find((channel) => channel.name === name)!.id;
  };

  it('explains what a channel is when there is none, and says why the list failed to load', async () => {
    const fresh = await env.addTenant('no channels');
    await asTenant(fresh, '/rules');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/channels?*', async (route) => {
      await held;
      await route.continue().catch(() => undefined);
    });
    await goByKeys(page, 'c', /\/channels$/);
    await page.getByText('Loading channels…').waitFor();
    release();
    await page.unroute('**/api/v1/channels?*');
    await page.getByText('No channels yet').waitFor();
    expect(await page.locator('.state-empty').innerText()).toMatch(/A channel is a place pitcrew posts to/);
    await page.locator('.state-empty').getByRole('link', { name: 'Add channel' }).click();
    await page.getByRole('heading', { name: 'New channel' }).waitFor();

    await page.route('**/api/v1/channels?*', (route) =>
      route.fulfill({ status: 503, contentType: 'application/problem+json', body: JSON.stringify({ status: 503, code: 'PITCREW_ERR_STORAGE_UNAVAILABLE', detail: 'the database does not answer' }) }),
    );
    await page.goto(`${base}/channels`);
    await page.getByRole('alert').getByText('Could not load channels. the database does not answer').waitFor();
  });

  it('creates a Slack channel through the form, delivers its test message, and never shows the webhook URL again', async () => {
    const token = 'xoxb-never-shown-7f3a9c';
    await asTenant(env.tenant, '/channels');
    await page.getByRole('link', { name: 'Add channel' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('ops on Slack');
    await page.getByLabel('Slack webhook URL').fill(`${slack.url}/services/T000/B000/${token}`);
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('heading', { name: 'ops on Slack' }).waitFor();
    expect(await pageHolds(token)).toBe(false);
    await page.getByText(`${slack.url}/…(set)`).waitFor();

    await page.getByRole('button', { name: 'Send test message' }).click();
    await page.getByRole('status').getByText(/Delivered at .* \(HTTP 200\) in/).waitFor();
    expect(slack.accepted().map((request) => request.path)).toEqual([`/services/T000/B000/${token}`]);
    await page.locator('tr[data-attempt="delivered"]', { hasText: 'HTTP 200' }).waitFor();

    // Editing shows that a URL is stored, not what it is; saved blank, the stored one stays.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByText(`Stored: ${slack.url}/…(set). Leave blank to keep it`).waitFor();
    expect(await pageHolds(token)).toBe(false);
    await page.getByLabel('Name', { exact: true }).fill('ops on Slack (eu)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'ops on Slack (eu)' }).waitFor();
    expect((await env.api('POST', `/api/v1/channels/${await channelId('ops on Slack (eu)')}/test`)).statusCode).toBe(200);
    expect(slack.accepted().at(-1)!.path).toBe(`/services/T000/B000/${token}`);
    expect(await pageHolds(token)).toBe(false);
  });

  it('creates a Slack channel with an app and no incoming webhook, posts its test message through the app, and never shows the token', async () => {
    await asTenant(env.tenant, '/channels');
    await page.getByRole('link', { name: 'Add channel' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('ops through the app');
    await page.getByRole('button', { name: 'Create channel' }).click();
    // Neither the webhook nor the app: the form says either will do.
    await page.getByText('paste the webhook URL, starting with https://, or fill in the Slack app below to post through it').waitFor();
    await page.getByLabel('Channel ID').fill(slackApi.channelId);
    await page.getByLabel('Bot token').fill(slackApi.botToken);
    await page.getByLabel('Signing secret').fill(slackApi.signingSecret);
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('heading', { name: 'ops through the app' }).waitFor();
    await page.getByText('none: the app posts every message').waitFor();
    await page.getByText(`posts to ${slackApi.channelId}`).waitFor();

    await page.getByRole('button', { name: 'Send test message' }).click();
    await page.getByRole('status').getByText(/Delivered at .* \(HTTP 200\) in/).waitFor();
    const posted = slackApi.calls.filter((call) => call.method === 'chat.postMessage');
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ authorization: `Bearer ${slackApi.botToken}` });
    expect(slackApi.messages.at(-1)!.channel).toBe(slackApi.channelId);
    for (const secret of [slackApi.botToken, slackApi.signingSecret]) expect(await pageHolds(secret)).toBe(false);
  });

  it("shows the receiver's answer when the test message is not delivered", async () => {
    const gone = await startReceiver();
    gone.answer(404, 'no_service');
    const channel = await createChannel(env, { name: 'removed webhook', type: 'mattermost', config: { webhookUrl: `${gone.url}/hooks/abc` } });
    await asTenant(env.tenant, `/channels/${channel.id}`);
    await page.getByRole('button', { name: 'Send test message' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Not delivered' });
    await expect.poll(() => alert.innerText()).toMatch(/Not delivered at .*: the test message was not delivered to channel "removed webhook": 127\.0\.0\.1:\d+ answered 404 Not Found: "no_service"/);
    await page.getByText('failing', { exact: true }).first().waitFor();
    await page.locator('tr[data-attempt="failed"]', { hasText: 'HTTP 404' }).waitFor();
  });

  it("switches a channel's mode from the list", async () => {
    const channel = await createChannel(env, { name: 'noisy', type: 'teams', mode: 'all', config: { webhookUrl: `${slack.url}/teams` } });
    await asTenant(env.tenant, '/channels');
    const mode = page.getByLabel('Mode of noisy');
    expect(await mode.inputValue()).toBe('all');
    await mode.selectOption({ label: 'Errors only' });
    await expect.poll(async () => (await env.api('GET', `/api/v1/channels/${channel.id}`)).json().mode).toBe('errors');
    await mode.selectOption({ label: 'Disabled' });
    await page.locator('tr[data-channel="noisy"] .badge', { hasText: 'disabled' }).waitFor();
    expect((await env.api('GET', `/api/v1/channels/${channel.id}`)).json()).toMatchObject({ mode: 'disabled', status: 'disabled' });
  });

  it('creates an email channel on STARTTLS with a private CA, mails the test message, and never shows the password', async () => {
    await asTenant(env.tenant, '/channels/new');
    await page.getByRole('radio', { name: /^Email/ }).check();
    await page.getByLabel('Name', { exact: true }).fill('on-call mail');
    await page.getByLabel('SMTP server', { exact: true }).fill(smtp.host);
    await page.getByLabel('Port', { exact: true }).fill(String(smtp.port));
    await page.getByLabel('Username', { exact: true }).fill(smtp.username);
    await page.getByLabel('Password', { exact: true }).fill(smtp.password);
    await page.getByLabel('From', { exact: true }).fill('pitcrew <pitcrew@example.com>');
    await page.getByLabel('To', { exact: true }).fill('oncall@example.com\nsre@example.com');
    await page.getByLabel('Trusted CA (optional)', { exact: true }).fill(smtp.cert);
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('heading', { name: 'on-call mail' }).waitFor();
    expect(await pageHolds(smtp.password)).toBe(false);
    await page.getByText('pitcrew, password set (write-only)').waitFor();

    await page.getByRole('button', { name: 'Send test message' }).click();
    await page.getByRole('status').getByText(/Delivered at .* \(SMTP 250\)/).waitFor();
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]).toMatchObject({ secure: true, user: smtp.username, to: ['oncall@example.com', 'sre@example.com'] });
  });

  it('creates a signed webhook for chosen rules, with what the service refuses at the field and the signature explained', async () => {
    const rule = await env.createWebhookRule({ name: 'restart nginx' });
    await env.createWebhookRule({ name: 'flush cache' });
    await createChannel(env, { name: 'taken', type: 'slack', config: { webhookUrl: `${slack.url}/taken` } });
    const secret = 'whsec-0123456789abcdef';
    await asTenant(env.tenant, '/channels/new');
    await page.getByRole('radio', { name: /^Webhook/ }).check();
    await page.getByLabel('Name', { exact: true }).fill('taken');
    await page.getByLabel('Receiver URL').fill(`${slack.url}/bus`);
    await page.getByLabel('Signing secret').fill(secret);
    await page.getByText('Only the rules I pick').click();
    await page.getByRole('checkbox', { name: 'restart nginx' }).check();
    await page.getByRole('button', { name: 'Create channel' }).click();
    // 409 from the service, at the field it concerns, with the focus there.
    await page.getByText('already used by another channel').waitFor();
    const name = page.getByLabel('Name', { exact: true });
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("aria-invalid")')).toBe('true');
    await name.fill('event bus');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('heading', { name: 'event bus' }).waitFor();

    expect(await pageHolds(secret)).toBe(false);
    const panel = page.locator('.panel', { has: page.getByRole('heading', { name: 'Verifying the signature' }) });
    for (const header of ['X-Pitcrew-Timestamp', 'X-Pitcrew-Signature', 'X-Pitcrew-Delivery']) await panel.getByText(header, { exact: true }).waitFor();
    const saved = (await env.api('GET', `/api/v1/channels/${await channelId('event bus')}`)).json();
    expect(saved).toMatchObject({ type: 'webhook', ruleIds: [rule.id], config: { url: `${slack.url}/bus`, secretSet: true } });
    await page.getByRole('link', { name: 'Channels' }).click();
    expect(await page.locator('tr[data-channel="event bus"]').innerText()).toMatch(/Webhook[\s\S]*restart nginx/);
  });

  it('saves escalation contacts and reads them back, with what the service refuses at the field', async () => {
    const tenant = await env.addTenant('contacts');
    const pager = await createChannel(env, { name: 'pager', type: 'slack', config: { webhookUrl: `${slack.url}/pager` } }, tenant.token);
    await asTenant(tenant, '/channels');
    await page.getByLabel('On-call addresses').fill('oncall@example.com\nsre@example.com');
    await page.getByRole('checkbox', { name: /^pager/ }).check();
    await page.getByRole('button', { name: 'Save contacts' }).click();
    await page.getByText(/create an email channel first/).waitFor();
    expect(await page.getByLabel('On-call addresses').getAttribute('aria-invalid')).toBe('true');

    const relay = await createChannel(env, { name: 'mail relay', type: 'email', mode: 'disabled', config: { host: smtp.host, port: smtp.port, secure: false, from: 'p@example.com', to: ['x@example.com'] } }, tenant.token);
    await page.reload();
    await page.getByLabel('On-call addresses').fill('oncall@example.com\nsre@example.com');
    await page.getByRole('checkbox', { name: /^pager/ }).check();
    await page.getByLabel('Sent through').selectOption({ label: 'mail relay' });
    await page.getByRole('button', { name: 'Save contacts' }).click();
    await page.getByText(/Saved\. Last saved/).waitFor();
    const contacts = (await env.api('GET', '/api/v1/escalation-contacts', undefined, tenant.token)).json();
    expect(contacts).toMatchObject({ emails: ['oncall@example.com', 'sre@example.com'], channelIds: [pager.id], emailChannelId: relay.id });

    await page.reload();
    expect(await page.getByLabel('On-call addresses').inputValue()).toBe('oncall@example.com\nsre@example.com');
    expect(await page.getByRole('checkbox', { name: /^pager/ }).isChecked()).toBe(true);
    expect(await page.getByLabel('Sent through').inputValue()).toBe(relay.id);
  });

  it('deletes a channel only after saying what that does', async () => {
    const channel = await createChannel(env, { name: 'old pager', type: 'google_chat', config: { webhookUrl: `${slack.url}/chat` } });
    await asTenant(env.tenant, `/channels/${channel.id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.innerText()).toMatch(/Nothing more is sent to it[\s\S]*still had to send \(retries included\) are dropped/);
    await dialog.getByRole('button', { name: 'Delete channel' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/channels`);
    expect((await env.api('GET', `/api/v1/channels/${channel.id}`)).statusCode).toBe(404);
  });

  it('shows an email runbook execution as sent by the service, not as a run on a host', async () => {
    const rule = await env.createWebhookRule({ name: 'call the DBA', action: { type: 'email_runbook', runbook: { notes: '# Disk full on {{HostName}}' } }, target: { type: 'cli_machine' } });
    const [id] = (await env.webhook(rule.triggerId, { HostName: 'db-9' })).json().executionIds;
    await asTenant(env.tenant, `/executions?rule=${rule.id}`);
    const row = page.getByRole('row', { name: /call the DBA/ });
    await expect.poll(() => row.innerText()).toMatch(/service · email runbook for db-9/);
    await page.goto(`${base}/executions/${id}`);
    await page.getByRole('heading', { name: /^Execution on service · email runbook for db-9/ }).waitFor();
    await page.getByText('the runbook, emailed to on-call by the service').waitFor();
  });
});
