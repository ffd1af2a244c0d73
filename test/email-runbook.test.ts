import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';
import { createChannel, waitState } from './support/notify.js';
import { startSmtpServer, type SmtpTestServer } from './support/smtp.js';
import { waitFor } from './support/wait.js';

const RUNBOOK = [
  '# Disk full on {{HostName}}',
  '',
  '1. Check `df -h` on {{ HostName }}',
  '2. Ask the owner, {{MetaData.Owner}}, before deleting anything',
  '3. Escalate to {{Nobody}} if that fails',
].join('\n');

describe.each(testDialects())('the email_runbook action on %s', (dialect) => {
  let env: TestEnv;
  let smtp: SmtpTestServer;

  beforeAll(async () => {
    env = await startTestEnv(dialect, { publicUrl: 'https://pitcrew.example.com' });
    smtp = await startSmtpServer();
  });
  afterAll(() => env.close());

  async function tenantWithMail(name: string, password = smtp.password) {
    const t = await env.addTenant(`${name}-${dialect}`);
    const channel = await createChannel(env, {
      name: 'smtp', type: 'email', mode: 'disabled',
      config: { host: smtp.host, port: smtp.port, secure: false, username: smtp.username, password, from: 'pitcrew@example.com', to: ['team@example.com'], ca: smtp.cert },
    }, t.token);
    const put = await env.api('PUT', '/api/v1/escalation-contacts', { emails: ['oncall@example.com'], channelIds: [] }, t.token);
    expect(put.statusCode, put.body).toBe(200);
    const fire = async (action: Record<string, unknown>, body: Record<string, unknown>) => {
      const rule = await env.createWebhookRule({ name: `runbook ${name}`, action, target: { type: 'cli_machine' }, infrastructureType: 'CLOUD_GCP' }, t.token);
      const reply = await env.webhook(rule.triggerId, body, { apiKey: t.apiKey });
      expect(reply.statusCode, reply.body).toBe(202);
      return { rule, reply: reply.json() as { outcome: string; reason: string | null; executionIds: string[] } };
    };
    const execution = (id: string, state: string) => waitState({ ...env, api: (m, u, b) => env.api(m, u, b, t.token) }, id, state);
    return { ...t, channel, fire, execution };
  }

  it('sends the runbook, rendered to HTML with the event filled in and escaped, to on-call; the execution succeeds', async () => {
    const t = await tenantWithMail('runbook-ok');
    const before = smtp.mails.length;
    const { rule, reply } = await t.fire(
      { type: 'email_runbook', runbook: { notes: RUNBOOK, script: 'du -sh /var/log/*' } },
      { HostName: 'web-1<script>alert(1)</script>', AlarmName: 'disk_full', MetaData: { Owner: '<b>dba@example.com</b>' } },
    );
    expect(reply).toMatchObject({ outcome: 'accepted', reason: null, executionIds: [expect.any(String)] });
    const execution = await t.execution(reply.executionIds[0]!, 'succeeded');
    expect(execution).toMatchObject({ ruleId: rule.id, hostId: null, hostname: 'web-1<script>alert(1)</script>', reason: 'the runbook was emailed to oncall@example.com' });
    expect((execution.transitions as Array<{ to: string }>).map((tr) => tr.to)).toEqual(['queued', 'dispatched', 'succeeded']);

    await waitFor(() => smtp.mails.length > before, 'the runbook mail');
    const mail = smtp.mails.at(-1)!;
    expect(mail.to).toEqual(['oncall@example.com']);
    expect(mail.subject).toBe(`[pitcrew] Runbook: runbook runbook-ok on web-1<script>alert(1)</script>`);
    expect(mail.html).toContain('<h1>Disk full on web-1&lt;script&gt;alert(1)&lt;/script&gt;</h1>');
    expect(mail.html).toContain('<code>df -h</code> on web-1&lt;script&gt;');
    expect(mail.html).toContain('Ask the owner, &lt;b&gt;dba@example.com&lt;/b&gt;, before');
    expect(mail.html).toContain('Escalate to {{Nobody}}');
    expect(mail.html).toContain('du -sh /var/log/*');
    expect(mail.html).not.toMatch(/<script>|<b>dba/);
    expect(mail.text).toContain('# Disk full on web-1<script>alert(1)</script>');
  });

  it('mails the runbook once per tick of a cron rule, however many nodes see the tick', async () => {
    const t = await tenantWithMail('runbook-cron');
    const made = await env.api('POST', '/api/v1/rules', {
      name: 'nightly runbook', trigger: { type: 'cron', schedule: '0 3 * * *', timezone: 'Europe/Berlin' },
      action: { type: 'email_runbook', runbook: { notes: `Nightly check ${dialect}: look at the backups` } }, target: { type: 'cli_machine' }, infrastructureType: 'CLOUD_GCP',
    }, t.token);
    expect(made.statusCode, made.body).toBe(201);
    const ruleId = made.json().id as string;
    const tick = Date.parse(made.json().schedule.nextTicks[0]);
    // Two passes at once, as two nodes would, then one a second later: one event, one run, one mail.
    await Promise.all([env.app.context.scheduler.pass(tick), env.app.context.scheduler.pass(tick)]);
    await env.app.context.scheduler.pass(tick + 1000);
    const executions = (await env.api('GET', `/api/v1/executions?ruleId=${ruleId}`, undefined, t.token)).json().items as Array<{ id: string }>;
    expect(executions).toHaveLength(1);
    expect(await t.execution(executions[0]!.id, 'succeeded')).toMatchObject({ reason: 'the runbook was emailed to oncall@example.com' });
    await waitFor(() => smtp.mails.some((m) => m.text.includes(`Nightly check ${dialect}`)), 'the runbook mail');
    await env.app.context.notifier.pass();
    expect(smtp.mails.filter((m) => m.text.includes(`Nightly check ${dialect}`))).toHaveLength(1);
    expect((await env.api('GET', `/api/v1/rules/${ruleId}/events`, undefined, t.token)).json().items).toHaveLength(1);
  });

  it("sends to the action's own recipients instead of the contacts", async () => {
    const t = await tenantWithMail('runbook-recipients');
    const { reply } = await t.fire({ type: 'email_runbook', runbook: { notes: 'Call {{Who}}' }, recipients: ['dba@example.com', 'noc@example.com'] }, { Who: 'the DBA' });
    const execution = await t.execution(reply.executionIds[0]!, 'succeeded');
    expect(execution.reason).toBe('the runbook was emailed to dba@example.com, noc@example.com');
    const mail = await waitFor(() => smtp.mails.find((m) => m.text.includes('Call the DBA')), 'the mail');
    expect(mail.to.sort()).toEqual(['dba@example.com', 'noc@example.com']);
  });

  it('fails the execution, with the reason, when the mail is refused', async () => {
    const t = await tenantWithMail('runbook-refused', 'not-the-password');
    const { reply } = await t.fire({ type: 'email_runbook', runbook: { notes: 'x' } }, {});
    const execution = await t.execution(reply.executionIds[0]!, 'failed');
    expect(execution.reason).toMatch(/^the runbook email was not delivered: SMTP delivery failed: .*535/);
    expect(execution.reason).not.toContain('not-the-password');
  });

  it('fails the execution when there is no one to send it to', async () => {
    const t = await env.addTenant(`runbook-nobody-${dialect}`);
    const rule = await env.createWebhookRule({ action: { type: 'email_runbook', runbook: { notes: 'x' } }, target: { type: 'cli_machine' } }, t.token);
    const reply = (await env.webhook(rule.triggerId, {}, { apiKey: t.apiKey })).json();
    expect(reply.outcome).toBe('accepted');
    const execution = await waitState({ ...env, api: (m, u, b) => env.api(m, u, b, t.token) }, reply.executionIds[0], 'failed');
    expect(execution.reason).toMatch(/no one to send the runbook to: give the action recipients, or set escalation contacts/);
  });

  it('sends nothing for a dry run', async () => {
    const t = await tenantWithMail('runbook-dry');
    const before = smtp.mails.length;
    const { reply } = await t.fire({ type: 'email_runbook', runbook: { notes: 'x' } }, { Act: false });
    expect(reply).toMatchObject({ outcome: 'dry_run', executionIds: [] });
    await env.app.context.notifier.pass();
    expect(smtp.mails.length).toBe(before);
  });

  it('mails at most actionLimit.max runbooks per host within the window, even when the storm arrives at once', async () => {
    const t = await tenantWithMail('runbook-storm');
    const rule = await env.createWebhookRule({
      name: 'runbook storm', action: { type: 'email_runbook', runbook: { notes: 'x' } }, target: { type: 'trigger_host' },
      actionLimit: { max: 2, windowSeconds: 3600 },
    }, t.token);
    const fire = (HostName: string) => env.webhook(rule.triggerId, { HostName }, { apiKey: t.apiKey }).then((r) => r.json() as { outcome: string; reason: string | null });
    const storm = await Promise.all(Array.from({ length: 12 }, () => fire('db-1')));
    expect(storm.filter((r) => r.outcome === 'accepted')).toHaveLength(2);
    const limited = storm.filter((r) => r.outcome === 'limited');
    expect(limited).toHaveLength(10);
    expect(limited[0]!.reason).toMatch(/the runbook was mailed twice about host db-1 within 3600 s, its action limit \(max 2\): not sent again/);
    // The count is per host the mail is about, whatever the case of its name.
    expect((await fire('DB-1')).outcome).toBe('limited');
    expect((await fire('db-2')).outcome).toBe('accepted');
    const executions = (await env.api('GET', `/api/v1/executions?ruleId=${rule.id}`, undefined, t.token)).json().items as unknown[];
    expect(executions).toHaveLength(3);
    const usage = (await env.api('GET', `/api/v1/rules/${rule.id}/limits`, undefined, t.token)).json();
    expect(usage.hosts).toEqual([
      expect.objectContaining({ hostId: null, hostname: 'db-1', used: 2, remaining: 0, limited: true, escalation: null }),
      expect.objectContaining({ hostId: null, hostname: 'db-2', used: 1, remaining: 1, limited: false }),
    ]);
  });
});
