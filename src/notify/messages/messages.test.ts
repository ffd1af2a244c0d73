import { describe, expect, it } from 'vitest';
import type { ApprovalNotification, EscalationNotification, Notification, RunNotification, TestNotification } from '../notification.js';
import { digest } from './digest.js';
import { emailContent } from './email.js';
import { chatPayload, type ChatType } from './index.js';
import { webhookBody } from './webhook.js';

const rule = { id: 'r1', name: 'restart nginx', url: 'https://p.example.com/rules/r1' };
const event = { id: 'e1', receivedAt: '2026-03-01T03:12:00.000Z', alarmName: 'disk_full', hostName: 'web-1', severity: 'critical', url: 'https://p.example.com/events/e1' };
const execution = (hostname: string, state: string, exitCode: number | null, output = '') => ({
  id: `x-${hostname}`, hostname, state, exitCode, reason: state === 'succeeded' ? null : `exit code ${exitCode}`, durationMs: 2300, outputTail: output, url: `https://p.example.com/executions/x-${hostname}`,
});

const single: RunNotification = {
  kind: 'run', severity: 'error', rule, event, action: 'autofix script (sh): systemctl restart nginx',
  counts: { failed: 1 }, total: 1, executions: [execution('web-1', 'failed', 1, 'Job for nginx.service failed')], unlisted: 0, partial: false,
};
const fanOut: RunNotification = {
  ...single, counts: { failed: 1, succeeded: 2, pending: 1 }, total: 4, partial: true,
  executions: [execution('web-3', 'failed', 2), execution('web-1', 'succeeded', 0), execution('web-2', 'succeeded', 0)],
};
const allGood: RunNotification = { ...single, severity: 'ok', counts: { succeeded: 3 }, total: 3, executions: [execution('web-1', 'succeeded', 0)], unlisted: 2 };
const escalation: EscalationNotification = {
  kind: 'escalation', severity: 'error', rule, hostname: 'web-1', limit: { max: 3, windowSeconds: 600 }, count: 3,
  windowStart: '2026-03-01T03:00:00.000Z', notDone: 'did not run the autofix script', event: null,
};
const approval: ApprovalNotification = {
  kind: 'approval', severity: 'error', rule, event, action: 'autofix script (sh): rm -rf /var/tmp/cache', role: 'admin',
  deadline: '2026-03-01T03:42:00.000Z', onTimeout: 'escalate', total: 1, executions: [{ id: 'x-web-1', hostname: 'web-1', url: 'https://p.example.com/executions/x-web-1' }],
};
const test: TestNotification = { kind: 'test', severity: 'ok', channel: { id: 'c1', name: 'ops', type: 'slack' }, sentAt: '2026-03-01T03:00:00.000Z' };

describe('digest: the words of every message', () => {
  it.each<[string, Notification, RegExp]>([
    ['one host failed', single, /^❌ restart nginx failed on web-1$/],
    ['a fan-out with a failure, still running', fanOut, /^❌ restart nginx failed on 1 of 4 hosts \(1 still running\)$/],
    ['a fan-out that succeeded', allGood, /^✅ restart nginx succeeded on all 3 hosts$/],
    ['an escalation', escalation, /^🚨 Action limit reached: restart nginx on web-1$/],
    ['a test', test, /^🧪 pitcrew test message$/],
    ['a run awaiting approval', approval, /^⏸️ Approval needed: restart nginx on web-1$/],
    ['one nobody approved in time, escalated', { ...approval, timedOut: true }, /^🚨 Nobody approved: restart nginx on web-1$/],
    ['runs of many hosts awaiting approval', { ...approval, total: 12 }, /^⏸️ Approval needed: restart nginx on 12 hosts$/],
  ])('%s', (_case, notification, title) => {
    expect(digest(notification).title).toMatch(title);
  });

  it('says what fired, where, what ran and how each host ended, failures first', () => {
    const d = digest(fanOut);
    expect(d.summary).toBe('Alarm disk_full for web-1 at 2026-03-01T03:12:00.000Z.');
    expect(d.facts).toEqual(expect.arrayContaining([['Alarm', 'disk_full'], ['Ran', 'autofix script (sh): systemctl restart nginx'], ['Hosts', '4: 1 failed, 2 succeeded, 1 still running']]));
    expect(d.sections.map((s) => s.heading)).toEqual(['❌ web-3: failed, exit code 2, in 2.3 s', '✅ web-1: succeeded, exit code 0, in 2.3 s', '✅ web-2: succeeded, exit code 0, in 2.3 s']);
    expect(digest(allGood).sections.at(-1)!.heading).toBe('… and 2 more hosts: see the event');
  });

  it('states the limit, the count, the window and what was not done in an escalation', () => {
    const d = digest(escalation);
    expect(d.summary).toContain('ran "restart nginx" 3 times on web-1 within 10 min (limit 3)');
    expect(d.summary).toContain('Not done: did not run the autofix script');
    expect(d.facts).toContainEqual(['Window', '2026-03-01T03:00:00.000Z to 2026-03-01T03:10:00.000Z']);
    const once = digest({ ...escalation, limit: { max: 1, windowSeconds: 600 }, count: 1 });
    expect(once.summary).toContain('ran "restart nginx" once on web-1 within 10 min (limit 1)');
    expect(once.facts).toContainEqual(['Limit', '1 execution per 10 min']);
  });
});

describe('chat payloads', () => {
  const hostile: RunNotification = {
    ...single,
    event: { ...event, alarmName: '<!channel> @here <users/all>' },
    executions: [execution('web-1', 'failed', 1, '```\n<!everyone> @channel & <b>')],
  };

  it.each<[ChatType, (p: Record<string, unknown>) => void]>([
    ['slack', (p) => {
      expect(p.text).toBe('❌ restart nginx failed on web-1');
      const blocks = p.blocks as Array<Record<string, unknown>>;
      expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'section', 'actions']);
      expect(blocks[4]).toEqual({ type: 'actions', elements: [
        { type: 'button', text: { type: 'plain_text', text: 'Open execution' }, url: 'https://p.example.com/executions/x-web-1' },
        { type: 'button', text: { type: 'plain_text', text: 'Open event' }, url: 'https://p.example.com/events/e1' },
        { type: 'button', text: { type: 'plain_text', text: 'Open rule' }, url: 'https://p.example.com/rules/r1' },
      ] });
      expect((blocks[3]!.text as { text: string }).text).toBe('*❌ web-1: failed, exit code 1, in 2.3 s*\nexit code 1\n```Job for nginx.service failed```');
    }],
    ['teams', (p) => {
      expect(p.type).toBe('message');
      const [attachment] = p.attachments as Array<{ contentType: string; content: { type: string; version: string; body: Array<{ type: string }>; actions: unknown[] } }>;
      expect(attachment!.contentType).toBe('application/vnd.microsoft.card.adaptive');
      expect(attachment!.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
      expect(attachment!.content.body.map((b) => b.type)).toEqual(['TextBlock', 'TextBlock', 'FactSet', 'TextBlock', 'TextBlock', 'TextBlock']);
      expect(attachment!.content.actions).toHaveLength(3);
    }],
    ['mattermost', (p) => {
      const [attachment] = p.attachments as Array<Record<string, unknown>>;
      expect(attachment).toMatchObject({ fallback: '❌ restart nginx failed on web-1', color: '#d00000', title_link: 'https://p.example.com/executions/x-web-1' });
      expect(attachment!.text).toContain('```\nJob for nginx.service failed\n```');
    }],
    ['google_chat', (p) => {
      expect(p.text).toBe('❌ restart nginx failed on web-1');
      const [card] = p.cardsV2 as Array<{ cardId: string; card: { header: { title: string }; sections: Array<{ widgets: unknown[] }> } }>;
      expect(card!.card.header.title).toBe('❌ restart nginx failed on web-1');
      expect(card!.card.sections.at(-1)!.widgets).toEqual([{ buttonList: { buttons: expect.arrayContaining([{ text: 'Open rule', onClick: { openLink: { url: 'https://p.example.com/rules/r1' } } }]) } }]);
    }],
  ])('%s has its documented shape', (type, check) => {
    check(chatPayload(type, single));
  });

  it('keeps alarm names and output from mentioning or formatting (Slack escapes, Mattermost breaks @, Google Chat <)', () => {
    const slack = JSON.stringify(chatPayload('slack', hostile));
    expect(slack).not.toMatch(/<!channel>|<!everyone>|<b>/);
    expect(slack).toContain('&lt;!channel&gt;');
    expect(slack).not.toMatch(/```\\n<|```\\n```/);
    // In Mattermost a code block expands no mention; everywhere else @ and <! are broken.
    const mattermost = JSON.stringify(chatPayload('mattermost', hostile)).replace(/```[^`]*```/g, '');
    expect(mattermost).not.toMatch(/@(here|channel)|<!channel>/);
    const google = chatPayload('google_chat', hostile);
    expect(google.text).not.toContain('<');
    expect(JSON.stringify(google.cardsV2)).not.toMatch(/<users\/all>|<b>/);
  });

  it('stays within Slack limits however long the output and however many hosts', () => {
    const huge: RunNotification = { ...single, executions: Array.from({ length: 60 }, (_, i) => execution(`web-${i}`, 'failed', 1, 'x'.repeat(5000))) };
    const blocks = chatPayload('slack', huge).blocks as Array<{ type: string; text?: { text: string } }>;
    expect(blocks.length).toBeLessThanOrEqual(50);
    for (const block of blocks) if (block.text) expect(block.text.text.length).toBeLessThanOrEqual(block.type === 'header' ? 150 : 3000);
  });
});

describe('email and webhook bodies', () => {
  it('escapes every value in the HTML part and keeps the subject on one line', () => {
    const mail = emailContent({ ...single, rule: { ...rule, name: 'restart\r\nBcc: victim@example.com <b>' } });
    expect(mail.subject).toBe('[pitcrew] restart Bcc: victim@example.com <b> failed on web-1');
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).toContain('&lt;b&gt;');
    expect(mail.text).toContain('Ran: autofix script (sh): systemctl restart nginx');
    expect(mail.text).toContain('    Job for nginx.service failed');
  });

  it('asks for approval in words: what would run, who may decide, until when, what happens past it', () => {
    const mail = emailContent(approval);
    expect(mail.subject).toBe('[pitcrew] Approval needed: restart nginx on web-1');
    for (const words of ['Would run: autofix script (sh): rm -rf /var/tmp/cache', 'Who may decide: an admin or above', 'Decide before: 2026-03-01T03:42:00.000Z', 'it expires and never runs, and the on-call contacts are told', 'https://p.example.com/executions/x-web-1']) {
      expect(mail.text).toContain(words);
    }
    const operators = emailContent({ ...approval, role: 'operator', onTimeout: 'expire' }).text;
    expect(operators).toContain('Who may decide: an operator or above');
    expect(operators).toContain('past that it expires and never runs');
  });

  it('keeps every icon out of the subject, ℹ️ included (a letter to Unicode)', () => {
    expect(emailContent({ ...allGood, counts: { rejected: 1 }, total: 1, executions: [execution('web-1', 'rejected', null)] }).subject).toBe('[pitcrew] restart nginx rejected on web-1');
  });

  it('gives the generic webhook the notification as data with a stable id', () => {
    expect(webhookBody('m1', '2026-03-01T03:12:05.000Z', escalation)).toEqual({
      id: 'm1', type: 'escalation', severity: 'error', createdAt: '2026-03-01T03:12:05.000Z',
      title: '🚨 Action limit reached: restart nginx on web-1', summary: expect.stringContaining('limit 3'), notification: escalation,
    });
  });
});
