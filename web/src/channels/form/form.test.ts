import { describe, expect, it } from 'vitest';
import type { Channel } from '../../api/channel-types';
import { channelErrorsFrom, checkChannelForm, emptyChannelForm, formFromChannel, NO_SECRETS, storedSecrets, toChannelInput, toChannelPatch } from './form';

const email = {
  id: 'c1', name: 'on-call mail', type: 'email', mode: 'errors', ruleIds: ['r1'],
  config: { host: 'smtp.example.com', port: 587, secure: false, username: 'pitcrew', passwordSet: true, from: 'pitcrew <p@example.com>', to: ['a@example.com', 'b@example.com'], requireTls: true },
} as unknown as Channel;

describe('the channel form', () => {
  it('sends a new chat channel with its webhook URL and no rule filter', () => {
    const form = { ...emptyChannelForm(), name: ' ops ', webhookUrl: ' https://hooks.slack.com/services/T/B/X ' };
    expect(toChannelInput(form)).toEqual({ name: 'ops', type: 'slack', mode: 'all', ruleIds: null, config: { webhookUrl: 'https://hooks.slack.com/services/T/B/X' } });
  });

  it('sends an email channel with addresses one a line and optional settings only when given', () => {
    const form = { ...emptyChannelForm(), name: 'mail', type: 'email' as const, host: 'smtp', port: '465', secure: true, from: 'f@x', to: 'a@x\nb@x, a@x\n' };
    expect(toChannelInput(form).config).toEqual({ host: 'smtp', port: 465, secure: true, requireTls: true, from: 'f@x', to: ['a@x', 'b@x'] });
  });

  it('edits without sending back a secret left blank, and never holds a stored one', () => {
    const form = formFromChannel(email);
    expect(form).toMatchObject({ password: '', to: 'a@example.com\nb@example.com', everyRule: false, ruleIds: ['r1'] });
    expect(toChannelPatch(form).config).toEqual({ host: 'smtp.example.com', port: 587, secure: false, requireTls: true, from: 'pitcrew <p@example.com>', to: ['a@example.com', 'b@example.com'], username: 'pitcrew', ca: null });
    expect(toChannelPatch({ ...form, password: 'new' }).config).toMatchObject({ password: 'new' });
    expect(toChannelPatch({ ...form, username: '' }).config).toMatchObject({ username: null, password: null });
    const slack = { ...email, type: 'slack', config: { webhookUrl: 'https://hooks.slack.com/…(set)' } } as unknown as Channel;
    expect(formFromChannel(slack).webhookUrl).toBe('');
    expect(toChannelPatch(formFromChannel(slack)).config).toEqual({});
  });

  it("keeps a Slack app's secrets write-only, asks for the three together, and removes them with the channel id", () => {
    const slack = { ...email, type: 'slack', config: { webhookUrl: 'https://hooks.slack.com/…(set)', channelId: 'C0OPS', botTokenSet: true, signingSecretSet: true } } as unknown as Channel;
    const form = formFromChannel(slack);
    expect(form).toMatchObject({ channelId: 'C0OPS', botToken: '', signingSecret: '' });
    expect(toChannelPatch(form).config).toEqual({ channelId: 'C0OPS' });
    expect(checkChannelForm(form, storedSecrets(slack))).toEqual({});
    expect(toChannelPatch({ ...form, channelId: '' }).config).toEqual({ channelId: null, botToken: null, signingSecret: null });
    const fresh = { ...emptyChannelForm(), name: 'ops', webhookUrl: 'https://hooks.slack.com/services/T/B/x', channelId: 'C0OPS' };
    expect(checkChannelForm(fresh, NO_SECRETS)).toEqual({ botToken: expect.stringMatching(/xoxb-/), signingSecret: expect.stringMatching(/Signing Secret/) });
    expect(toChannelInput({ ...fresh, botToken: 'xoxb-1-2', signingSecret: 'ab'.repeat(16) }).config).toEqual({ webhookUrl: fresh.webhookUrl, channelId: 'C0OPS', botToken: 'xoxb-1-2', signingSecret: 'ab'.repeat(16) });
    expect(channelErrorsFrom([{ path: '/body/config/botToken', message: 'must match pattern' }]).errors).toEqual({ botToken: 'must match pattern' });
  });

  it('takes a Slack channel with an app and no incoming webhook, and asks for one of the two', () => {
    const appOnly = { ...emptyChannelForm(), name: 'ops', channelId: 'C0OPS', botToken: 'xoxb-1-2', signingSecret: 'ab'.repeat(16) };
    expect(checkChannelForm(appOnly, NO_SECRETS)).toEqual({});
    expect(toChannelInput(appOnly).config).toEqual({ channelId: 'C0OPS', botToken: 'xoxb-1-2', signingSecret: 'ab'.repeat(16) });
    const neither = { ...emptyChannelForm(), name: 'ops' };
    expect(checkChannelForm(neither, NO_SECRETS)).toEqual({ webhookUrl: expect.stringMatching(/or fill in the Slack app below/) });
    // A URL typed is checked, app or not.
    expect(checkChannelForm({ ...appOnly, webhookUrl: 'hooks.slack.com' }, NO_SECRETS)).toEqual({ webhookUrl: expect.stringMatching(/https:\/\//) });
  });

  it('asks for a secret only when none is stored', () => {
    const webhook = { ...emptyChannelForm(), name: 'bus', type: 'webhook' as const, url: 'https://example.com/in' };
    expect(checkChannelForm(webhook, NO_SECRETS)).toEqual({ secret: expect.stringMatching(/16 characters/) });
    expect(checkChannelForm(webhook, { ...NO_SECRETS, secret: true })).toEqual({});
    expect(checkChannelForm({ ...webhook, secret: 'short' }, { ...NO_SECRETS, secret: true })).toEqual({ secret: expect.stringMatching(/16 characters/) });
    expect(checkChannelForm(formFromChannel(email), storedSecrets(email))).toEqual({});
    expect(checkChannelForm({ ...formFromChannel(email), to: 'nobody' }, storedSecrets(email))).toEqual({ to: '“nobody” is not an email address' });
  });

  it('sends a Teams channel with its approvals bot, keeps a blank bot password, and removes the bot when its app id is cleared', () => {
    const form = {
      ...emptyChannelForm(), name: 'noc', type: 'teams' as const, webhookUrl: 'https://example.webhook.office.com/x',
      botAppId: ' a1b2 ', botAppPassword: 'secret', serviceUrl: 'https://smba.trafficmanager.net/emea/', conversationId: '19:abc@thread.tacv2',
    };
    expect(toChannelInput(form).config).toEqual({ webhookUrl: 'https://example.webhook.office.com/x', botAppId: 'a1b2', botAppPassword: 'secret', serviceUrl: 'https://smba.trafficmanager.net/emea/', conversationId: '19:abc@thread.tacv2' });
    expect(toChannelInput({ ...form, botAppId: '' }).config).toEqual({ webhookUrl: 'https://example.webhook.office.com/x' });
    const teams = { ...email, type: 'teams', config: { webhookUrl: 'https://example.webhook.office.com/…(set)', botAppId: 'a1b2', botAppPasswordSet: true, serviceUrl: 'https://smba.trafficmanager.net/emea/', conversationId: '19:abc@thread.tacv2' } } as unknown as Channel;
    const edited = formFromChannel(teams);
    expect(edited).toMatchObject({ botAppId: 'a1b2', botAppPassword: '' });
    expect(checkChannelForm(edited, storedSecrets(teams))).toEqual({});
    expect(checkChannelForm(edited, NO_SECRETS)).toMatchObject({ botAppPassword: expect.stringMatching(/client secret/) });
    expect(toChannelPatch(edited).config).toEqual({ botAppId: 'a1b2', serviceUrl: 'https://smba.trafficmanager.net/emea/', conversationId: '19:abc@thread.tacv2', botTenantId: null });
    expect(toChannelPatch({ ...edited, botAppId: '' }).config).toEqual({ botAppId: null, botAppPassword: null, botTenantId: null, serviceUrl: null, conversationId: null });
  });

  it("places the service's field errors at the form's fields", () => {
    const { errors, unplaced } = channelErrorsFrom([
      { path: '/body/name', message: 'already used by another channel' },
      { path: '/body/config/to/1', message: 'must be an email' },
      { path: '/body/ruleIds/0', message: 'no rule r9 in this tenant' },
      { path: '/body/surprise', message: 'is not a known field' },
    ]);
    expect(errors).toEqual({ name: 'already used by another channel', to: 'must be an email', ruleIds: 'no rule r9 in this tenant' });
    expect(unplaced).toEqual([{ path: '/body/surprise', message: 'is not a known field' }]);
  });
});
