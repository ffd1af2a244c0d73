import { describe, expect, it } from 'vitest';
import type { Action, Target } from '../rules/schema.js';
import { FLAPPING_DEFAULTS } from '../rules/rule.js';
import { builtInKind } from '../actions/kinds.js';
import { decide, hostKey, NO_HISTORY, resolveTargets, serviceRunKey, type Decision, type EventFacts, type HistoryFacts, type HostFacts, type RuleFacts } from './decide.js';

/** decide() with the rule's own action kind, as the ingest writer calls it. */
function decideOf(rule: RuleFacts, event: EventFacts, hosts: readonly HostFacts[], history?: HistoryFacts): Decision {
  return decide(rule, event, hosts, builtInKind(rule.action.type), history);
}

const script: Action = { type: 'script', flavour: 'autofix', runbook: { script: 'true' } };
const web1: HostFacts = { id: 'h1', hostname: 'web-1', tags: ['web', 'eu'] };
const web2: HostFacts = { id: 'h2', hostname: 'WEB-2', tags: ['web', 'us'] };
const db1: HostFacts = { id: 'h3', hostname: 'db-1', tags: ['db', 'eu'] };
const hosts = [web1, web2, db1];

function rule(target: Target, overrides: Partial<RuleFacts> = {}): RuleFacts {
  return { enabled: true, action: script, target, ...overrides };
}

describe('decide', () => {
  // Every combination of the inputs decideOf() reads, with the outcome DESIGN.md §2 asks for.
  it.each<[string, RuleFacts, { act: boolean; hostName?: string }, Decision['outcome'], string[], RegExp | null]>([
    ['rule on, Act true, host known', rule({ type: 'trigger_host' }), { act: true, hostName: 'web-1' }, 'accepted', ['h1'], null],
    ['host names compare without case', rule({ type: 'trigger_host' }), { act: true, hostName: 'web-2' }, 'accepted', ['h2'], null],
    ['rule on, Act false', rule({ type: 'trigger_host' }), { act: false, hostName: 'web-1' }, 'dry_run', [], /Act was false.*dry run/],
    ['rule off, Act true', rule({ type: 'trigger_host' }, { enabled: false }), { act: true, hostName: 'web-1' }, 'rule_off', [], /turned off.*recorded/],
    // Rule off wins over a dry run: nothing would run either way, and the rule state explains more.
    ['rule off, Act false', rule({ type: 'trigger_host' }, { enabled: false }), { act: false }, 'rule_off', [], /turned off.*recorded/],
    ['trigger host not named', rule({ type: 'trigger_host' }), { act: true }, 'no_target', [], /payload names none/],
    ['trigger host unknown', rule({ type: 'trigger_host' }), { act: true, hostName: 'mail-1' }, 'no_target', [], /no host named "mail-1" has an agent in this tenant$/],
    ['trigger host with a port', rule({ type: 'trigger_host' }), { act: true, hostName: 'web-1:9100' }, 'no_target', [], /no host named "web-1:9100" .*; host names carry no port: send HostName "web-1"$/],
    ['specific host', rule({ type: 'specific_host', hostname: 'db-1' }), { act: true, hostName: 'web-1' }, 'accepted', ['h3'], null],
    ['specific host unknown', rule({ type: 'specific_host', hostname: 'db-9' }), { act: true }, 'no_target', [], /"db-9" has no agent/],
    ['tags: every host with all of them', rule({ type: 'specific_tags', tags: ['web'] }), { act: true }, 'accepted', ['h1', 'h2'], null],
    ['tags: all must match', rule({ type: 'specific_tags', tags: ['web', 'eu'] }), { act: true }, 'accepted', ['h1'], null],
    ['tags: none match', rule({ type: 'specific_tags', tags: ['web', 'asia'] }), { act: true }, 'no_target', [], /no host carries all of the tags web, asia/],
    ['cli machine', rule({ type: 'cli_machine' }, { action: { type: 'cli', runbook: { script: 'az vm list' } } }), { act: true }, 'accepted', [], null],
    ['cloud action naming no cloud', rule({ type: 'trigger_host' }, { action: { type: 'cloud', operation: 'stop' } }), { act: true, hostName: 'web-1' }, 'no_target', [], /names no cloud/],
  ])('%s → %s', (_case, facts, event, outcome, targetIds, reason) => {
    const decision = decideOf(facts, { hostName: undefined, ...event }, hosts);
    expect(decision.outcome).toBe(outcome);
    expect(decision.targets.map((h) => h.id)).toEqual(targetIds);
    if (reason === null) expect(decision.reason).toBeNull();
    else expect(decision.reason).toMatch(reason);
  });

  it.each<[string, Target, string | undefined, string | undefined]>([
    ['the payload host', { type: 'trigger_host' }, 'mail-9', 'mail-9'],
    ['no host at all', { type: 'cli_machine' }, undefined, undefined],
    ["the rule's host", { type: 'specific_host', hostname: 'db-1' }, 'web-1', 'db-1'],
    ['tags: the payload host', { type: 'specific_tags', tags: ['web'] }, 'web-1', 'web-1'],
  ])('an email_runbook rule runs once on the service, about %s, agent or not', (_case, target, hostName, about) => {
    const action: Action = { type: 'email_runbook', runbook: { notes: '# Call the DBA' } };
    const decision = decideOf(rule(target, { action }), { act: true, hostName }, []);
    expect(decision).toEqual({ outcome: 'accepted', reason: null, targets: [], held: [], limited: [], escalate: false, serviceRuns: [{ about }] });
  });

  it('mails a runbook within the action limit per host it is about, and escalates nothing past it', () => {
    const action: Action = { type: 'email_runbook', runbook: { notes: 'x' } };
    const facts = rule({ type: 'trigger_host' }, { action, actionLimit: { max: 2, windowSeconds: 600, onLimit: 'escalate' } });
    const history = (count: number, hostname: string | undefined) => ({ ...NO_HISTORY, executionsInWindow: new Map([[serviceRunKey(hostname), count]]) });
    expect(decideOf(facts, { act: true, hostName: 'db-1' }, [], history(1, 'db-1')).outcome).toBe('accepted');
    expect(decideOf(facts, { act: true, hostName: 'DB-1' }, [], history(2, 'db-1'))).toEqual({
      outcome: 'limited', reason: 'the runbook was mailed twice about host DB-1 within 600 s, its action limit (max 2): not sent again', targets: [], limited: [], escalate: false,
    });
    expect(decideOf(facts, { act: true, hostName: 'db-2' }, [], history(2, 'db-1')).outcome).toBe('accepted');
    expect(decideOf(facts, { act: true, hostName: undefined }, [], history(2, undefined)).outcome).toBe('limited');
  });

  it('words a limit of one run as people say it: ran once, not 1 times', () => {
    const action: Action = { type: 'cli', runbook: { script: 'aws ec2 describe-instances' } };
    const facts = rule({ type: 'cli_machine' }, { action, actionLimit: { max: 1, windowSeconds: 600, onLimit: 'escalate' } });
    const history = { ...NO_HISTORY, executionsInWindow: new Map([[serviceRunKey('web-1'), 1]]) };
    expect(decideOf(facts, { act: true, hostName: 'web-1' }, [], history).reason).toBe('the CLI runbook ran once about web-1 within 600 s, its action limit (max 1): not run again');
  });

  it('plans one run for a cloud tag filter, which the action limit does not hold back (each instance it finds is counted then)', () => {
    const action: Action = { type: 'cloud', provider: 'aws', operation: 'reboot', region: 'eu-west-1', credentialId: 'c1', instances: { tags: { env: 'prod' } } };
    const facts = rule({ type: 'trigger_host' }, { action, actionLimit: { max: 1, windowSeconds: 600, onLimit: 'escalate' } });
    const full = { ...NO_HISTORY, executionsInWindow: new Map([[serviceRunKey(undefined), 5]]) };
    expect(decideOf(facts, { act: true, hostName: 'web-1' }, hosts, full)).toEqual({ outcome: 'accepted', reason: null, targets: [], held: [], limited: [], escalate: false, serviceRuns: [{ about: undefined, unlimited: true }] });
    const named = { ...action, instances: { ids: ['i-0123456789abcdef0'] } };
    const atLimit = { ...NO_HISTORY, executionsInWindow: new Map([[serviceRunKey('i-0123456789abcdef0'), 1]]) };
    expect(decideOf({ ...facts, action: named }, { act: true, hostName: 'web-1' }, hosts, atLimit).outcome).toBe('limited');
  });

  it('holds a cloud action’s instances past its maxConcurrency, after the action limit took its share', () => {
    const ids = ['i-0000000a', 'i-0000000b', 'i-0000000c', 'i-0000000d'];
    const action: Action = { type: 'cloud', provider: 'aws', operation: 'reboot', region: 'eu-west-1', credentialId: 'c1', instances: { ids }, maxConcurrency: 2 };
    const facts = rule({ type: 'trigger_host' }, { action, actionLimit: { max: 1, windowSeconds: 600, onLimit: 'escalate' } });
    const history = { ...NO_HISTORY, executionsInWindow: new Map([[serviceRunKey('i-0000000a'), 1]]) };
    const decision = decideOf(facts, { act: true, hostName: undefined }, hosts, history);
    expect(decision.outcome === 'accepted' && decision.serviceRuns).toEqual([{ about: 'i-0000000b' }, { about: 'i-0000000c' }, { about: 'i-0000000d', held: true }]);
  });

  it('records an email_runbook rule without sending when it is off or a dry run', () => {
    const action: Action = { type: 'email_runbook', runbook: { notes: 'x' } };
    expect(decideOf(rule({ type: 'cli_machine' }, { action, enabled: false }), { act: true, hostName: undefined }, []).outcome).toBe('rule_off');
    expect(decideOf(rule({ type: 'cli_machine' }, { action }), { act: false, hostName: undefined }, []).outcome).toBe('dry_run');
  });

  it('is pure: the same inputs give equal decisions and the inputs are left as they were', () => {
    const facts = Object.freeze(rule({ type: 'specific_tags', tags: ['web'] }));
    const event = Object.freeze({ act: true, hostName: undefined });
    const frozenHosts = Object.freeze([...hosts]);
    expect(decideOf(facts, event, frozenHosts)).toEqual(decideOf(facts, event, frozenHosts));
    expect(frozenHosts).toEqual(hosts);
  });

  it('says in every non-acting decision that the alarm was still recorded', () => {
    for (const [enabled, act] of [[false, true], [false, false], [true, false]] as const) {
      const { reason } = decideOf(rule({ type: 'trigger_host' }, { enabled }), { act, hostName: 'web-1' }, hosts);
      expect(reason).toMatch(/recorded/);
      expect(reason).toMatch(/no action runs/);
    }
  });

  describe('flapping', () => {
    const flapping = { ...FLAPPING_DEFAULTS, enabled: true, maxEvents: 3, windowSeconds: 60, cooldownSeconds: 120, maxStateChanges: 2 };
    const guarded = rule({ type: 'trigger_host' }, { flapping });
    const now = 1_000_000_000;
    const alarms = (recent: number, last: { agoSeconds: number; suppressed: boolean; state?: 'firing' | 'resolved' } | null, stateChanges = 0): HistoryFacts => ({
      ...NO_HISTORY,
      alarms: { recent, stateChanges, last: last && { at: now - last.agoSeconds * 1000, suppressed: last.suppressed, state: last.state ?? null } },
    });

    // The history counts earlier alarms; this event makes one more.
    it.each<[string, HistoryFacts, 'firing' | 'resolved' | undefined, Decision['outcome'], RegExp | null]>([
      ['first alarm', NO_HISTORY, undefined, 'accepted', null],
      ['maxEvents alarms in the window, this one included', alarms(2, { agoSeconds: 5, suppressed: false }), undefined, 'accepted', null],
      ['one more than maxEvents', alarms(3, { agoSeconds: 5, suppressed: false }), undefined, 'flapping', /more than 3 alarms for host web-1 within 60 s \(maxEvents\).*quiet for 120 s/],
      ['suppressed, quiet for less than the cool-down', alarms(0, { agoSeconds: 119, suppressed: true }), undefined, 'flapping', /still flapping.*119 s ago/],
      ['suppressed, quiet for the whole cool-down: recovered', alarms(0, { agoSeconds: 120, suppressed: true }), undefined, 'accepted', null],
      ['quiet long enough, but still over the rate', alarms(3, { agoSeconds: 130, suppressed: true }), undefined, 'flapping', /more than 3 alarms/],
      ['state changes up to maxStateChanges', alarms(1, { agoSeconds: 5, suppressed: false, state: 'resolved' }, 1), 'firing', 'accepted', null],
      ['state changes over maxStateChanges', alarms(2, { agoSeconds: 5, suppressed: false, state: 'resolved' }, 2), 'firing', 'flapping', /changed between firing and resolved more than twice within 60 s \(maxStateChanges\)/],
      ['the same state again is no change', alarms(2, { agoSeconds: 5, suppressed: false, state: 'firing' }, 2), 'firing', 'accepted', null],
    ])('%s → %s', (_case, history, alarmState, outcome, reason) => {
      const decision = decideOf(guarded, { act: true, hostName: 'web-1', alarmState, receivedAt: now }, hosts, history);
      expect(decision.outcome).toBe(outcome);
      if (reason) expect(decision.reason).toMatch(reason);
      expect(decision.targets.map((h) => h.id)).toEqual(outcome === 'accepted' ? ['h1'] : []);
    });

    it('is off unless enabled, however many alarms came', () => {
      const off = rule({ type: 'trigger_host' }, { flapping: { ...flapping, enabled: false } });
      expect(decideOf(off, { act: true, hostName: 'web-1', receivedAt: now }, hosts, alarms(1000, { agoSeconds: 0, suppressed: true })).outcome).toBe('accepted');
    });

    it('comes after rule off and dry run, which record without judging', () => {
      const storm = alarms(1000, { agoSeconds: 0, suppressed: true });
      expect(decideOf({ ...guarded, enabled: false }, { act: true, hostName: 'web-1', receivedAt: now }, hosts, storm).outcome).toBe('rule_off');
      expect(decideOf(guarded, { act: false, hostName: 'web-1', receivedAt: now }, hosts, storm).outcome).toBe('dry_run');
    });

    it('names the alarms without a host when the payload names none', () => {
      const decision = decideOf(rule({ type: 'specific_host', hostname: 'db-1' }, { flapping }), { act: true, hostName: undefined, receivedAt: now }, hosts, alarms(3, null));
      expect(decision).toMatchObject({ outcome: 'flapping', reason: expect.stringMatching(/alarms naming no host/) });
    });
  });

  describe('action limits', () => {
    const used = (counts: Record<string, number>): HistoryFacts => ({ ...NO_HISTORY, executionsInWindow: new Map(Object.entries(counts)) });
    const limited = (onLimit?: 'escalate' | 'drop') => ({ actionLimit: { max: 2, windowSeconds: 3600, ...(onLimit ? { onLimit } : {}) } });

    it.each<[string, RuleFacts, Record<string, number>, Decision['outcome'], string[], string[], boolean, RegExp | null]>([
      ['under the limit', rule({ type: 'trigger_host' }, limited()), { h1: 1 }, 'accepted', ['h1'], [], true, null],
      ['at the limit: escalated by default', rule({ type: 'trigger_host' }, limited()), { h1: 2 }, 'limited', [], ['h1'], true, /limit reached on web-1: 2 executions within 3600 s already; escalated to a human/],
      ['at the limit, onLimit drop', rule({ type: 'trigger_host' }, limited('drop')), { h1: 2 }, 'limited', [], ['h1'], false, /dropped \(onLimit: drop\)/],
      ['other hosts’ executions do not count', rule({ type: 'trigger_host' }, limited()), { h2: 50, h3: 9 }, 'accepted', ['h1'], [], true, null],
      ['tags: hosts under the limit run, the others are escalated', rule({ type: 'specific_tags', tags: ['web'] }, limited()), { h1: 2, h2: 1 }, 'accepted', ['h2'], ['h1'], true, /limit reached on web-1.*the other hosts run/],
      ['tags: every host at the limit', rule({ type: 'specific_tags', tags: ['web'] }, limited()), { h1: 2, h2: 3 }, 'limited', [], ['h1', 'h2'], true, /web-1, WEB-2/],
      ['no limit set', rule({ type: 'trigger_host' }), { h1: 10_000 }, 'accepted', ['h1'], [], true, null],
    ])('%s → %s', (_case, facts, counts, outcome, targetIds, limitedIds, escalate, reason) => {
      const decision = decideOf(facts, { act: true, hostName: 'web-1' }, hosts, used(counts));
      expect(decision.outcome).toBe(outcome);
      expect(decision.targets.map((h) => h.id)).toEqual(targetIds);
      if (decision.outcome === 'limited' || decision.outcome === 'accepted') {
        expect(decision.limited.map((l) => l.host.id)).toEqual(limitedIds);
        if (limitedIds.length > 0) expect(decision.escalate).toBe(escalate);
      }
      if (reason) expect(decision.reason).toMatch(reason);
      else expect(decision.reason).toBeNull();
    });

    it('flapping is judged before the limit: a suppressed alarm is not escalated', () => {
      const facts = rule({ type: 'trigger_host' }, { ...limited(), flapping: { ...FLAPPING_DEFAULTS, enabled: true, maxEvents: 1 } });
      const history = { ...used({ h1: 2 }), alarms: { recent: 1, stateChanges: 0, last: { at: 0, suppressed: false, state: null } } };
      expect(decideOf(facts, { act: true, hostName: 'web-1', receivedAt: 1000 }, hosts, history).outcome).toBe('flapping');
    });
  });

  describe('fan-out', () => {
    const many: HostFacts[] = Array.from({ length: 5 }, (_, i) => ({ id: `w${i}`, hostname: `web-${i}`, tags: ['web'] }));

    it('starts at most maxConcurrency hosts, in host-name order, and holds the rest back', () => {
      const decision = decideOf(rule({ type: 'specific_tags', tags: ['web'], maxConcurrency: 2 }), { act: true, hostName: undefined }, [...many].reverse());
      expect(decision).toMatchObject({ outcome: 'accepted', reason: null });
      if (decision.outcome !== 'accepted') throw new Error('not accepted');
      expect(decision.targets.map((h) => h.id)).toEqual(['w0', 'w1']);
      expect(decision.held.map((h) => h.id)).toEqual(['w2', 'w3', 'w4']);
    });

    it('holds nothing back without maxConcurrency', () => {
      const decision = decideOf(rule({ type: 'specific_tags', tags: ['web'] }), { act: true, hostName: undefined }, many);
      expect(decision).toMatchObject({ outcome: 'accepted', held: [] });
      expect(decision.targets).toHaveLength(5);
    });
  });

  describe('idempotency', () => {
    const original = { eventId: 'e1', outcome: 'accepted' as const, reason: null, executionIds: ['x1'] };

    it('a retry is a duplicate of the original, whatever the rule and the history say now', () => {
      for (const facts of [rule({ type: 'trigger_host' }), rule({ type: 'trigger_host' }, { enabled: false })]) {
        const decision = decideOf(facts, { act: true, hostName: 'web-1' }, hosts, { ...NO_HISTORY, original });
        expect(decision).toMatchObject({ outcome: 'duplicate', original, targets: [] });
        expect(decision.reason).toMatch(/Idempotency-Key.*nothing runs again/);
      }
    });
  });
});

describe('hostKey', () => {
  it.each([
    ['WEB-1', 'web-1'],
    [' Web-1 ', 'web-1'],
    ['db_2.Example.COM', 'db_2.example.com'],
    // DNS folds ASCII letters only (RFC 4343): others stay as sent, as SQLite's lower() leaves them.
    ['ÉCOLE-1', 'École-1'],
    ['WEB-\u212A', 'web-\u212A'],
  ])('compares %j as %j', (name, key) => {
    expect(hostKey(name)).toBe(key);
  });
});

describe('host names that differ only by domain', () => {
  const fqdn = { id: 'f', hostname: 'db-1.example.com', tags: [] };
  const short = { id: 's', hostname: 'web-1', tags: [] };
  const twins = [{ id: 'a', hostname: 'app-1.eu.example.com', tags: [] }, { id: 'b', hostname: 'app-1.us.example.com', tags: [] }];
  const hosts = [fqdn, short, ...twins];
  const target = (name: string) => resolveTargets({ type: 'trigger_host' }, { act: true, hostName: name }, hosts);

  it('finds the host by its full name first, without case', () => {
    expect(target('DB-1.Example.com')).toEqual([fqdn]);
    expect(target('web-1')).toEqual([short]);
  });

  it('finds the one host a name differs from only by its domain, either way round', () => {
    expect(target('db-1')).toEqual([fqdn]);
    expect(target('web-1.example.com')).toEqual([short]);
  });

  it('picks none when the short name fits several hosts, and says which', () => {
    expect(target('app-1')).toMatch(/differs only by domain from several \(app-1\.eu\.example\.com, app-1\.us\.example\.com\)/);
    expect(target('app-2')).toMatch(/no host named "app-2"/);
  });
});

describe('a tag target that picks one host', () => {
  const host = (id: string, online: boolean, lastPickedAt: number | null): HostFacts => ({ id, hostname: id, tags: ['batch'], online, lastPickedAt });
  const pickOne = (hosts: HostFacts[]) => resolveTargets({ type: 'specific_tags', tags: ['batch'] }, { act: true, hostName: undefined }, hosts, 'one');

  it('takes the least recently picked online host, a never picked one first, ties by name', () => {
    expect(pickOne([host('b-1', true, 300), host('b-2', true, 100), host('b-3', false, null)])).toEqual([host('b-2', true, 100)]);
    expect(pickOne([host('b-2', true, 100), host('b-4', true, null), host('b-3', true, null)])).toEqual([host('b-3', true, null)]);
  });

  it('says so when no host of the tags is online, and picks all when asked to', () => {
    expect(pickOne([host('b-1', false, null), host('b-2', false, 5)])).toBe('none of the 2 hosts with the tags batch is online (the target picks one online host)');
    expect(resolveTargets({ type: 'specific_tags', tags: ['batch'] }, { act: true, hostName: undefined }, [host('b-1', false, null), host('b-2', true, 1)])).toHaveLength(2);
  });

  it('is what a schedule does unless its target says otherwise', () => {
    const cron = { enabled: true, trigger: { type: 'cron' }, action: { type: 'script', flavour: 'autofix', runbook: { script: 'true' } } as Action, target: { type: 'specific_tags', tags: ['batch'] } as Target };
    const hosts = [host('b-1', true, 2), host('b-2', true, 1)];
    const planned = (rule: RuleFacts) => decide(rule, { act: true, hostName: undefined }, hosts, builtInKind('script'));
    expect(planned(cron)).toMatchObject({ outcome: 'accepted', targets: [{ id: 'b-2' }] });
    expect(planned({ ...cron, target: { ...cron.target, pick: 'all' } })).toMatchObject({ outcome: 'accepted', targets: [{ id: 'b-1' }, { id: 'b-2' }] });
    expect(planned({ ...cron, trigger: { type: 'webhook' } })).toMatchObject({ targets: [{ id: 'b-1' }, { id: 'b-2' }] });
  });
});
