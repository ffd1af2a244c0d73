import { describe, expect, it } from 'vitest';
import { route, type Contacts, type RoutableChannel, type Routed } from './routing.js';

const channels: RoutableChannel[] = [
  { id: 'all', type: 'slack', mode: 'all', ruleIds: null },
  { id: 'errors', type: 'teams', mode: 'errors', ruleIds: null },
  { id: 'off', type: 'mattermost', mode: 'disabled', ruleIds: null },
  { id: 'only-r2', type: 'webhook', mode: 'all', ruleIds: ['r2'] },
  { id: 'mail', type: 'email', mode: 'disabled', ruleIds: null },
  { id: 'mail-2', type: 'email', mode: 'errors', ruleIds: ['r9'] },
];
const contacts: Contacts = { emails: ['oncall@example.com'], channelIds: ['only-r2', 'off'], emailChannelId: 'mail-2' };
const none: Contacts = { emails: [], channelIds: [], emailChannelId: null };

describe('route', () => {
  it.each<[string, Routed, Contacts, string[]]>([
    ['a success of r1: channels in mode all', { kind: 'run', severity: 'ok', ruleId: 'r1' }, contacts, ['all channel']],
    ['a failure of r1: all and errors', { kind: 'run', severity: 'error', ruleId: 'r1' }, contacts, ['all channel', 'errors channel']],
    ['a success of r2: its filter lets it through', { kind: 'run', severity: 'ok', ruleId: 'r2' }, contacts, ['all channel', 'only-r2 channel']],
    ['a failure of r9', { kind: 'run', severity: 'error', ruleId: 'r9' }, contacts, ['all channel', 'errors channel', 'mail-2 channel']],
    // Escalations are errors; contacts hear them whatever their filter (not when disabled), emails by the chosen SMTP channel.
    ['an escalation of r1', { kind: 'escalation', severity: 'error', ruleId: 'r1' }, contacts, ['all channel', 'errors channel', 'only-r2 channel', 'mail-2 contacts']],
    ['an escalation without contacts', { kind: 'escalation', severity: 'error', ruleId: 'r1' }, none, ['all channel', 'errors channel']],
    ['an escalation: the first email channel when none is chosen', { kind: 'escalation', severity: 'error', ruleId: 'r1' }, { ...contacts, emailChannelId: null }, ['all channel', 'errors channel', 'only-r2 channel', 'mail contacts']],
    ['a runbook: only its recipients, by email', { kind: 'runbook', severity: 'ok', ruleId: 'r1', recipients: ['dba@example.com'] }, contacts, ['mail-2 contacts']],
    ['a runbook without recipients: nowhere', { kind: 'runbook', severity: 'ok', ruleId: 'r1', recipients: [] }, contacts, []],
  ])('%s', (_case, message, who, expected) => {
    expect(route(message, channels, who).map((t) => `${t.channelId} ${t.audience}`).sort()).toEqual(expected.sort());
  });

  it('sends to contacts by address and to a channel by its own list', () => {
    const targets = route({ kind: 'runbook', severity: 'ok', ruleId: 'r1', recipients: ['a@example.com', 'b@example.com'] }, channels, none);
    expect(targets).toEqual([{ channelId: 'mail', audience: 'contacts', recipients: ['a@example.com', 'b@example.com'] }]);
    expect(route({ kind: 'run', severity: 'ok', ruleId: 'r1' }, channels, none)).toEqual([{ channelId: 'all', audience: 'channel', recipients: null }]);
  });

  it('finds nowhere to email without an email channel', () => {
    expect(route({ kind: 'runbook', severity: 'ok', ruleId: 'r1', recipients: ['a@example.com'] }, channels.filter((c) => c.type !== 'email'), contacts)).toEqual([]);
  });
});
