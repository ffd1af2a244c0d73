import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { attemptsOf, createChannel } from './support/notify.js';
import { expectProblem } from './support/problems.js';
import { startReceiver } from './support/receivers.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';

const SLACK_TOKEN = 'xoxb-T0001-B0001-SECRETPATHTOKEN';

describe.each(testDialects())('channels API on %s', (dialect) => {
  let env: TestEnv;
  let smtp: SmtpTestServer;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
    smtp = await startSmtpServer();
  });
  afterAll(() => env.close());

  const emailConfig = (overrides: Record<string, unknown> = {}) => ({
    host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password,
    from: 'pitcrew <pitcrew@example.com>', to: ['oncall@example.com'], ca: smtp.cert, ...overrides,
  });

  describe('secrets are write-only', () => {
    it('masks every secret in every view, and stores none of them in clear', async () => {
      const slack = await createChannel(env, { name: 'slack', type: 'slack', config: { webhookUrl: `https://hooks.slack.com/services/${SLACK_TOKEN}` } });
      const email = await createChannel(env, { name: 'mail', type: 'email', mode: 'errors', config: emailConfig() });
      const hook = await createChannel(env, { name: 'hook', type: 'webhook', config: { url: 'https://receiver.example.com/pitcrew', secret: 'whsec-abcdefghijklmnop' } });
      expect(slack.body).toMatchObject({ type: 'slack', mode: 'all', status: 'never_used', ruleIds: null, config: { webhookUrl: 'https://hooks.slack.com/…(set)' } });
      expect(email.body.config).toEqual({ ...emailConfig(), password: undefined, passwordSet: true });
      expect(hook.body.config).toEqual({ url: 'https://receiver.example.com/pitcrew', secretSet: true });

      const listed = (await env.api('GET', '/api/v1/channels')).body;
      const one = (await env.api('GET', `/api/v1/channels/${slack.id}`)).body;
      const rows = JSON.stringify(await env.store.db.selectFrom('notify_channels').selectAll().execute());
      for (const text of [listed, one, rows, env.logs.join('')]) {
        expect(text).not.toContain(SLACK_TOKEN);
        expect(text).not.toContain(smtp.password);
        expect(text).not.toContain('whsec-abcdefghijklmnop');
      }
    });

    it('keeps a secret a PATCH leaves out, and replaces one it gives', async () => {
      const receiver = await startReceiver();
      const channel = await createChannel(env, { name: 'patch-me', type: 'mattermost', config: { webhookUrl: `${receiver.url}/hooks/first` } });
      const renamed = await env.api('PATCH', `/api/v1/channels/${channel.id}`, { name: 'renamed', mode: 'errors', config: {} });
      expect(renamed.json()).toMatchObject({ name: 'renamed', mode: 'errors', config: { webhookUrl: `${receiver.url}/…(set)` } });
      expect((await env.api('POST', `/api/v1/channels/${channel.id}/test`)).statusCode).toBe(200);
      await env.api('PATCH', `/api/v1/channels/${channel.id}`, { config: { webhookUrl: `${receiver.url}/hooks/second` } });
      expect((await env.api('POST', `/api/v1/channels/${channel.id}/test`)).statusCode).toBe(200);
      expect(receiver.requests.map((r) => r.path)).toEqual(['/hooks/first', '/hooks/second']);
    });

    it('removes an optional setting given as null, and refuses to remove a required one', async () => {
      const channel = await createChannel(env, { name: 'no-auth', type: 'email', config: emailConfig() });
      const patched = await env.api('PATCH', `/api/v1/channels/${channel.id}`, { config: { username: null, password: null } });
      expect(patched.json().config).toMatchObject({ passwordSet: false });
      expect(patched.json().config.username).toBeUndefined();
      const chat = await createChannel(env, { name: 'needs-url', type: 'mattermost', config: { webhookUrl: 'https://h.example.com/x' } });
      const problem = expectProblem(await env.api('PATCH', `/api/v1/channels/${chat.id}`, { config: { webhookUrl: null } }), 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors).toEqual([{ path: '/body/config/webhookUrl', message: 'is required' }]);
      // Slack's is required only without an app, which could post instead.
      const slack = await createChannel(env, { name: 'needs-url-or-app', type: 'slack', config: { webhookUrl: 'https://h.example.com/y' } });
      const alone = expectProblem(await env.api('PATCH', `/api/v1/channels/${slack.id}`, { config: { webhookUrl: null } }), 400, 'PITCREW_ERR_VALIDATION');
      expect(alone.errors).toEqual([{ path: '/body/config/webhookUrl', message: expect.stringMatching(/^is required unless the channel has a Slack app/) }]);
    });

    it('does not open secrets sealed for another channel', async () => {
      const a = await createChannel(env, { name: 'a', type: 'slack', config: { webhookUrl: 'https://hooks.slack.com/services/A' } });
      const b = await createChannel(env, { name: 'b', type: 'slack', config: { webhookUrl: 'https://hooks.slack.com/services/B' } });
      const sealed = await env.store.db.selectFrom('notify_channels').select('secrets').where('id', '=', a.id).executeTakeFirstOrThrow();
      await env.store.db.updateTable('notify_channels').set({ secrets: sealed.secrets }).where('id', '=', b.id).execute();
      const problem = expectProblem(await env.api('POST', `/api/v1/channels/${b.id}/test`), 502, 'PITCREW_ERR_CHANNEL_DELIVERY_FAILED');
      expect(problem.detail).toMatch(/does not open with this key/);
    });
  });

  describe('validation', () => {
    it.each([
      ['an unknown type', { name: 'x', type: 'pager', config: {} }, '/body/type', /unknown type "pager"; use one of email, slack, teams, mattermost, google_chat, webhook/],
      ['a chat channel without its URL', { name: 'x', type: 'teams', config: {} }, '/body/config/webhookUrl', /is required/],
      ['a URL that is not http(s)', { name: 'x', type: 'slack', config: { webhookUrl: 'ftp://hooks.slack.com/x' } }, '/body/config/webhookUrl', /pattern/],
      ['a webhook without a secret', { name: 'x', type: 'webhook', config: { url: 'https://r.example.com' } }, '/body/config/secret', /is required/],
      ['a short webhook secret', { name: 'x', type: 'webhook', config: { url: 'https://r.example.com', secret: 'short' } }, '/body/config/secret', /fewer than 16/],
      ['email without recipients', { name: 'x', type: 'email', config: { host: 'smtp', port: 587, secure: false, from: 'a@b.c', to: [] } }, '/body/config/to', /fewer than 1/],
      ['a wrong mode', { name: 'x', type: 'slack', mode: 'loud', config: { webhookUrl: 'https://h.example.com' } }, '/body/mode', /must be one of "all", "errors", "disabled"/],
      ['an unknown rule in the filter', { name: 'x', type: 'slack', ruleIds: ['0190c1a8-0000-7000-8000-000000000000'], config: { webhookUrl: 'https://h.example.com' } }, '/body/ruleIds/0', /no rule/],
    ])('refuses %s', async (_case, body, path, message) => {
      const problem = expectProblem(await env.api('POST', '/api/v1/channels', body), 400, 'PITCREW_ERR_VALIDATION');
      expect(problem.errors).toContainEqual({ path, message: expect.stringMatching(message) });
    });

    it('checks a PATCHed config as a whole, and names are unique per tenant', async () => {
      const channel = await createChannel(env, { name: 'unique', type: 'email', config: emailConfig() });
      const patched = expectProblem(await env.api('PATCH', `/api/v1/channels/${channel.id}`, { config: { port: 'x', extra: 1 } }), 400, 'PITCREW_ERR_VALIDATION');
      expect(patched.errors!.map((e) => e.path).sort()).toEqual(['/body/config/extra', '/body/config/port']);
      expectProblem(await env.api('POST', '/api/v1/channels', { name: 'unique', type: 'slack', config: { webhookUrl: 'https://h.example.com' } }), 409, 'PITCREW_ERR_CONFLICT');
      const other = await env.addTenant(`channels-other-${dialect}`);
      expect((await env.api('POST', '/api/v1/channels', { name: 'unique', type: 'slack', config: { webhookUrl: 'https://h.example.com' } }, other.token)).statusCode).toBe(201);
      expect((await env.api('GET', `/api/v1/channels/${channel.id}`, undefined, other.token)).statusCode).toBe(404);
      expect((await env.api('POST', `/api/v1/channels/${channel.id}/test`, undefined, other.token)).statusCode).toBe(404);
    });

    it('deletes a channel with its history', async () => {
      const channel = await createChannel(env, { name: 'doomed', type: 'slack', config: { webhookUrl: 'https://h.example.com' } });
      expect((await env.api('DELETE', `/api/v1/channels/${channel.id}`)).statusCode).toBe(204);
      expectProblem(await env.api('GET', `/api/v1/channels/${channel.id}`), 404, 'PITCREW_ERR_NOT_FOUND');
      expectProblem(await env.api('DELETE', `/api/v1/channels/${channel.id}`), 404, 'PITCREW_ERR_NOT_FOUND');
    });
  });

  describe('send test message', () => {
    it('mails through SMTP with STARTTLS and AUTH, trusting the given certificate', async () => {
      const channel = await createChannel(env, { name: 'mail-test', type: 'email', mode: 'disabled', config: emailConfig({ to: ['a@example.com', 'b@example.com'] }) });
      const reply = await env.api('POST', `/api/v1/channels/${channel.id}/test`);
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.json()).toMatchObject({ ok: true, status: 'SMTP 250' });
      const mail = smtp.mails.at(-1)!;
      expect(mail).toMatchObject({ secure: true, user: 'pitcrew', from: 'pitcrew@example.com', to: ['a@example.com', 'b@example.com'] });
      expect(mail.subject).toBe('[pitcrew] pitcrew test message');
      expect(mail.text).toContain('"mail-test" (email)');
      expect(mail.html).toContain('<h2');
      expect((await attemptsOf(env, channel.id))[0]).toMatchObject({ ok: true, kind: 'test', deliveryId: null, status: 'SMTP 250' });
    });

    it.each([
      ['a wrong password', { password: 'wrong' }, /SMTP 535|535/],
      ['a certificate it was not told to trust', { ca: undefined }, /self[- ]signed/i],
    ])('answers 502 with the reason for %s, and never the password', async (_case, overrides, reason) => {
      const config = emailConfig(overrides);
      if ('ca' in overrides) delete (config as Record<string, unknown>).ca;
      const channel = await createChannel(env, { name: `mail-${Math.random()}`, type: 'email', config });
      const problem = expectProblem(await env.api('POST', `/api/v1/channels/${channel.id}/test`), 502, 'PITCREW_ERR_CHANNEL_DELIVERY_FAILED');
      expect(problem.detail).toMatch(reason);
      expect(problem.detail).not.toContain(smtp.password);
      const view = (await env.api('GET', `/api/v1/channels/${channel.id}`)).json();
      expect(view).toMatchObject({ status: 'failing', lastDeliveredAt: null, lastError: expect.stringMatching(reason) });
    });

    it("answers 502 with the receiver's status and a short excerpt, without the URL's token", async () => {
      const receiver = await startReceiver();
      receiver.answer(403, `action_prohibited ${'x'.repeat(500)} /services/${SLACK_TOKEN}`);
      const channel = await createChannel(env, { name: 'refusing', type: 'slack', config: { webhookUrl: `${receiver.url}/services/${SLACK_TOKEN}` } });
      const problem = expectProblem(await env.api('POST', `/api/v1/channels/${channel.id}/test`), 502, 'PITCREW_ERR_CHANNEL_DELIVERY_FAILED');
      expect(problem.detail).toMatch(/^the test message was not delivered to channel "refusing": 127\.0\.0\.1:\d+ answered 403 Forbidden: "action_prohibited x+…"$/);
      expect(problem.detail.length).toBeLessThan(400);
      expect(JSON.stringify(problem) + env.logs.join('')).not.toContain(SLACK_TOKEN);
    });

    it('says when the receiver cannot be reached', async () => {
      const gone = await startReceiver();
      await gone.close();
      const channel = await createChannel(env, { name: 'nowhere', type: 'google_chat', config: { webhookUrl: `${gone.url}/v1/spaces/x/messages?key=k&token=t` } });
      const problem = expectProblem(await env.api('POST', `/api/v1/channels/${channel.id}/test`), 502, 'PITCREW_ERR_CHANNEL_DELIVERY_FAILED');
      expect(problem.detail).toMatch(/could not deliver to 127\.0\.0\.1:\d+: ECONNREFUSED$/);
      expect(problem.detail).not.toContain('token=t');
    });
  });

  describe('escalation contacts', () => {
    it('are empty until set, and refer only to the tenant’s channels', async () => {
      const t = await env.addTenant(`contacts-${dialect}`);
      expect((await env.api('GET', '/api/v1/escalation-contacts', undefined, t.token)).json()).toEqual({ emails: [], channelIds: [], emailChannelId: null, updatedAt: null });
      const noMail = expectProblem(await env.api('PUT', '/api/v1/escalation-contacts', { emails: ['oncall@example.com'], channelIds: [] }, t.token), 400, 'PITCREW_ERR_VALIDATION');
      expect(noMail.errors).toEqual([{ path: '/body/emails', message: expect.stringMatching(/create an email channel first/) }]);
      const foreign = await createChannel(env, { name: 'foreign', type: 'slack', config: { webhookUrl: 'https://h.example.com' } });
      const wrong = expectProblem(await env.api('PUT', '/api/v1/escalation-contacts', { emails: [], channelIds: [foreign.id] }, t.token), 400, 'PITCREW_ERR_VALIDATION');
      expect(wrong.errors).toEqual([{ path: '/body/channelIds/0', message: `no channel ${foreign.id} in this tenant` }]);

      const mail = await createChannel(env, { name: 'smtp', type: 'email', mode: 'disabled', config: emailConfig() }, t.token);
      const chat = await createChannel(env, { name: 'oncall', type: 'slack', config: { webhookUrl: 'https://h.example.com' } }, t.token);
      const set = await env.api('PUT', '/api/v1/escalation-contacts', { emails: ['oncall@example.com'], channelIds: [chat.id], emailChannelId: mail.id }, t.token);
      expect(set.statusCode, set.body).toBe(200);
      expect(set.json()).toMatchObject({ emails: ['oncall@example.com'], channelIds: [chat.id], emailChannelId: mail.id, updatedAt: expect.any(String) });
      await env.api('DELETE', `/api/v1/channels/${chat.id}`, undefined, t.token);
      expect((await env.api('GET', '/api/v1/escalation-contacts', undefined, t.token)).json()).toMatchObject({ channelIds: [], emailChannelId: mail.id });
    });
  });
});

// Server-side request forgery: a tenant's receiver URL must not reach into the service's network.
describe('receivers in private networks', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv('sqlite', { egressAllowNetworks: [] });
  });
  afterAll(() => env.close());

  it('are not called unless the operator opens their network, by address or by a name that resolves there', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      const urls = {
        'by address': `${receiver.url}/hook`,
        'by name': `http://localhost:${port}/hook`,
        'IPv4-mapped': `http://[::ffff:127.0.0.1]:${port}/hook`,
      };
      for (const [how, url] of Object.entries(urls)) {
        const channel = await createChannel(env, { name: `internal ${how}`, type: 'webhook', mode: 'all', config: { url, secret: 'whsec-0123456789abcdef' } });
        const problem = expectProblem(await env.api('POST', `/api/v1/channels/${channel.id}/test`), 502, 'PITCREW_ERR_CHANNEL_DELIVERY_FAILED');
        expect(problem.detail, how).toMatch(/not sent: .* (is a private, loopback or link-local address|resolves only to private, loopback or link-local addresses), which pitcrew does not call.*PITCREW_EGRESS_ALLOW_NETWORKS/);
        const [attempt] = await attemptsOf(env, channel.id);
        expect(attempt, how).toMatchObject({ ok: false, kind: 'test' });
      }
      expect(receiver.requests).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('nor is an SMTP server there: a mail server on loopback is refused before any connection', async () => {
    const smtp = await startSmtpServer();
    const channel = await createChannel(env, {
      name: 'internal relay', type: 'email', mode: 'all',
      config: { host: smtp.host, port: smtp.port, secure: false, from: 'pitcrew@example.com', to: ['oncall@example.com'], ca: smtp.cert },
    });
    const problem = expectProblem(await env.api('POST', `/api/v1/channels/${channel.id}/test`), 502, 'PITCREW_ERR_CHANNEL_DELIVERY_FAILED');
    expect(problem.detail).toMatch(/not sent: 127.0.0.1 is a private, loopback or link-local address.*PITCREW_EGRESS_ALLOW_NETWORKS/);
    expect(smtp.mails).toEqual([]);
  });
});
