import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel } from './support/notify.js';
import { invite } from './support/people.js';
import { slackShape } from './support/platforms.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';
import { waitFor } from './support/wait.js';

// Issue 42 (docs/approvals.md, "Who hears of it"): a run that waits for approval is told to the
// channels (a real SMTP server, a Slack webhook receiver checking Slack's payload shape), once;
// its rejection and its expiry reach them too, as any ending does.
describe.each(testDialects())('approval requests and outcomes in channels on %s', (dialect) => {
  let env: TestEnv;
  let smtp: SmtpTestServer;
  let slack: Receiver;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { publicUrl: 'https://pitcrew.example.com', sweepIntervalMs: 100, notify: { groupWaitSeconds: 0 } });
    smtp = await startSmtpServer();
    slack = await startReceiver(slackShape);
    await env.enrol('db-1', ['db']);
    const mail = await createChannel(env, {
      name: 'mail', type: 'email', mode: 'all',
      config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password: smtp.password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
    });
    // Mode errors: hears requests (they need a person) and expiries, not a person's rejection.
    await createChannel(env, { name: 'chat', type: 'slack', mode: 'errors', config: { webhookUrl: slack.url } });
    const contacts = await env.api('PUT', '/api/v1/escalation-contacts', { emails: ['oncall@example.com'], channelIds: [], emailChannelId: mail.id });
    expect(contacts.statusCode, contacts.body).toBe(200);
  });
  afterAll(() => env.close());

  async function waiting(name: string, approval: Record<string, unknown>) {
    const rule = await env.createWebhookRule({ name, approval: { required: true, ...approval }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'rm -rf /var/tmp/cache' } } });
    const reply = await env.webhook(rule.triggerId, { HostName: 'db-1', AlarmName: 'disk_full' });
    expect(reply.statusCode, reply.body).toBe(202);
    return { ruleId: rule.id, id: (reply.json().executionIds as string[])[0]! };
  }
  const mailsAbout = (name: string) => smtp.mails.filter((m) => m.subject.includes(name));
  const chatsAbout = (name: string) => slack.accepted().filter((r) => (r.body as { text: string }).text.includes(name));

  it('asks the channels once: what would run, where, the alert, who may decide, until when, and the link', async () => {
    const { id } = await waiting('purge cache', { role: 'admin', timeoutSeconds: 1800 });
    const execution = (await env.api('GET', `/api/v1/executions/${id}`)).json();
    const deadline = execution.approval.deadline as string;
    const mail = await waitFor(() => mailsAbout('purge cache')[0], 'the request by mail');
    expect(mail.subject).toBe('[pitcrew] Approval needed: purge cache on db-1');
    for (const words of ['Alarm: disk_full', 'Host: db-1', 'Would run: autofix script', 'rm -rf /var/tmp/cache', 'Who may decide: an admin or above', `Decide before: ${deadline}`, `https://pitcrew.example.com/executions/${id}`, 'nothing has run']) {
      expect(mail.text).toContain(words);
    }
    const chat = await waitFor(() => chatsAbout('purge cache')[0], 'the request in Slack');
    expect((chat.body as { text: string }).text).toBe('⏸️ Approval needed: purge cache on db-1');
    expect(chat.raw).toContain(`https://pitcrew.example.com/executions/${id}`);
    // More passes tell nobody again.
    await env.app.context.notifier.pass();
    await env.app.context.notifier.pass();
    expect(mailsAbout('purge cache')).toHaveLength(1);
    expect(chatsAbout('purge cache')).toHaveLength(1);
    expect((await env.api('GET', `/api/v1/executions/${id}`)).json().state).toBe('awaiting_approval');
  });

  it("carries a signed link to a page that asks the signed-in person: the link alone decides nothing, and once used it shows the outcome", async () => {
    const { id } = await waiting('drop replica', {});
    const mail = await waitFor(() => mailsAbout('drop replica')[0], 'the request by mail');
    const url = new URL(mail.text.match(/Approve or reject on db-1 \(sign in to confirm\): (\S+)/)![1]!);
    expect(url.origin + url.pathname).toBe(`https://pitcrew.example.com/executions/${id}/decide`);
    const check = `/api/v1/executions/${id}/approval-link${url.search}`;
    const operator = await invite(env, `decider-${dialect}@example.com`, 'operator');
    const viewer = await invite(env, `looker-${dialect}@example.com`, 'viewer');

    // Without a session: nothing, and nothing changes.
    const anonymous = await env.app.server.inject({ method: 'GET', url: check });
    expect(anonymous.statusCode).toBe(401);
    const tampered = await operator.call('GET', check.replace(/sig=[^&]+/, 'sig=AAAA'));
    expect(tampered.statusCode).toBe(403);
    expect(tampered.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(tampered.json().detail).toMatch(/this approval link is not valid/);
    const shifted = await operator.call('GET', check.replace(/exp=(\d+)/, (_m, exp: string) => `exp=${Number(exp) + 3600}`));
    expect(shifted.statusCode).toBe(403);
    // Opening it (GET) reads the execution and decides nothing.
    const opened = await operator.call('GET', check);
    expect(opened.statusCode, opened.body).toBe(200);
    expect(opened.json()).toMatchObject({ id, state: 'awaiting_approval' });
    expect((await env.api('GET', `/api/v1/executions/${id}`)).json().state).toBe('awaiting_approval');

    const link = Object.fromEntries(url.searchParams);
    const byViewer = await viewer.call('POST', `/api/v1/executions/${id}/approve`, { link });
    expect(byViewer.statusCode).toBe(403);
    const wrongLink = await operator.call('POST', `/api/v1/executions/${id}/approve`, { link: { ...link, sig: 'AAAA' } });
    expect(wrongLink.statusCode).toBe(403);
    expect((await env.api('GET', `/api/v1/executions/${id}`)).json().state).toBe('awaiting_approval');
    const approved = await operator.call('POST', `/api/v1/executions/${id}/approve`, { link, comment: 'from my phone' });
    expect(approved.statusCode, approved.body).toBe(202);
    const decided = (await env.api('GET', `/api/v1/executions/${id}`)).json();
    expect(decided.transitions.find((t: { to: string }) => t.to === 'queued').decidedBy).toMatchObject({ email: `decider-${dialect}@example.com`, via: 'email', comment: 'from my phone' });
    // Single use: the page now shows the outcome, and a second click changes nothing.
    expect((await operator.call('GET', check)).json().state).not.toBe('awaiting_approval');
    expect((await operator.call('POST', `/api/v1/executions/${id}/reject`, { link })).statusCode).toBe(409);
  });

  it('tells the rejection, with who and why, to the channels that hear every ending', async () => {
    const { id } = await waiting('reboot db', {});
    await waitFor(() => mailsAbout('reboot db')[0], 'the request by mail');
    const rejected = await env.api('POST', `/api/v1/executions/${id}/reject`, { comment: 'not during the sale' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    const outcome = await waitFor(() => mailsAbout('reboot db').find((m) => m.subject.includes('rejected')), 'the rejection by mail');
    expect(outcome.subject).toBe('[pitcrew] reboot db rejected on db-1');
    expect(outcome.text).toMatch(/rejected by .* \(api\): not during the sale/);
    // Slack, in mode errors, heard the request but not a person's choice.
    await env.app.context.notifier.pass();
    expect(chatsAbout('reboot db').map((r) => (r.body as { text: string }).text)).toEqual(['⏸️ Approval needed: reboot db on db-1']);
  });

  it('tells the expiry of one nobody decided to every channel, as the error it is', async () => {
    const { id } = await waiting('rotate logs', { timeoutSeconds: 2 });
    await waitFor(async () => (await env.api('GET', `/api/v1/executions/${id}`)).json().state === 'expired', 'the expiry');
    const mail = await waitFor(() => mailsAbout('rotate logs').find((m) => m.subject.includes('expired')), 'the expiry by mail');
    expect(mail.text).toMatch(/nobody approved or rejected it within/);
    await waitFor(() => chatsAbout('rotate logs').find((r) => (r.body as { text: string }).text.includes('expired')), 'the expiry in Slack');
    // onTimeout expire: the on-call contacts are not told.
    await env.app.context.notifier.pass();
    expect(mailsAbout('rotate logs').filter((m) => m.to.includes('oncall@example.com'))).toEqual([]);
  });

  it('with onTimeout escalate, ends it expired, never run, and tells the on-call contacts once', async () => {
    const { id } = await waiting('restart primary', { timeoutSeconds: 2, onTimeout: 'escalate' });
    const expired = await waitFor(async () => {
      const e = (await env.api('GET', `/api/v1/executions/${id}`)).json();
      return e.state === 'expired' ? e : undefined;
    }, 'the expiry');
    expect(expired.reason).toMatch(/nobody approved or rejected it within .* it never ran; the on-call contacts are told/);
    const escalation = await waitFor(() => mailsAbout('restart primary').find((m) => m.to.includes('oncall@example.com')), 'the escalation to on-call');
    expect(escalation.subject).toBe('[pitcrew] Nobody approved: restart primary on db-1');
    for (const words of ['it expired and never ran', 'Would have run: autofix script', `https://pitcrew.example.com/executions/${id}`]) expect(escalation.text).toContain(words);
    await waitFor(() => chatsAbout('restart primary').find((r) => (r.body as { text: string }).text === '🚨 Nobody approved: restart primary on db-1'), 'the escalation in the errors channel');
    const late = await env.api('POST', `/api/v1/executions/${id}/approve`);
    expect(late.statusCode).toBe(409);
    await env.app.context.notifier.pass();
    expect(await env.app.context.notifier.escalateUndecided(env.tenant.tenantId, id)).toBeNull();
    expect(mailsAbout('restart primary').filter((m) => m.to.includes('oncall@example.com'))).toHaveLength(1);
  });

  it('escalates, on a later sweep, one whose node stopped between its expiry and the message', async () => {
    const { id } = await waiting('fail over db', { timeoutSeconds: 1800, onTimeout: 'escalate' });
    // What the sweeping node commits before it would tell: the expiry alone, as if it died then.
    const reason = 'nobody approved or rejected it within 30 min (the rule\'s approval.timeoutSeconds); it never ran; the on-call contacts are told';
    expect(await env.app.context.ledger.move([id], 'expired', reason, ['awaiting_approval'])).toEqual([id]);
    const pastDeadline = Date.now() + 1_801_000;
    expect(await env.app.context.notifier.escalateOwed(pastDeadline)).toBe(1);
    const escalation = await waitFor(() => mailsAbout('fail over db').find((m) => m.to.includes('oncall@example.com')), 'the escalation to on-call');
    expect(escalation.subject).toBe('[pitcrew] Nobody approved: fail over db on db-1');
    expect(await env.app.context.notifier.escalateOwed(pastDeadline)).toBe(0);
    // One that expired without escalating is owed nothing.
    const quiet = await waiting('trim journal', { timeoutSeconds: 1800 });
    await env.app.context.ledger.move([quiet.id], 'expired', 'nobody approved or rejected it within 30 min; it never ran', ['awaiting_approval']);
    expect(await env.app.context.notifier.escalateOwed(pastDeadline)).toBe(0);
  });
});
