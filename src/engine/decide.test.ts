import { describe, expect, it } from 'vitest';
import type { Action, Target } from '../rules/schema.js';
import { decide, type Decision, type HostFacts, type RuleFacts } from './decide.js';

const script: Action = { type: 'script', flavour: 'autofix', runbook: { script: 'true' } };
const web1: HostFacts = { id: 'h1', hostname: 'web-1', tags: ['web', 'eu'] };
const web2: HostFacts = { id: 'h2', hostname: 'WEB-2', tags: ['web', 'us'] };
const db1: HostFacts = { id: 'h3', hostname: 'db-1', tags: ['db', 'eu'] };
const hosts = [web1, web2, db1];

function rule(target: Target, overrides: Partial<RuleFacts> = {}): RuleFacts {
  return { enabled: true, action: script, target, ...overrides };
}

describe('decide', () => {
  // Every combination of the inputs decide() reads, with the outcome DESIGN.md §2 asks for.
  it.each<[string, RuleFacts, { act: boolean; hostName?: string }, Decision['outcome'], string[], RegExp | null]>([
    ['rule on, Act true, host known', rule({ type: 'trigger_host' }), { act: true, hostName: 'web-1' }, 'accepted', ['h1'], null],
    ['host names compare without case', rule({ type: 'trigger_host' }), { act: true, hostName: 'web-2' }, 'accepted', ['h2'], null],
    ['rule on, Act false', rule({ type: 'trigger_host' }), { act: false, hostName: 'web-1' }, 'dry_run', [], /Act was false.*dry run/],
    ['rule off, Act true', rule({ type: 'trigger_host' }, { enabled: false }), { act: true, hostName: 'web-1' }, 'rule_off', [], /turned off.*recorded/],
    // Rule off wins over a dry run: nothing would run either way, and the rule state explains more.
    ['rule off, Act false', rule({ type: 'trigger_host' }, { enabled: false }), { act: false }, 'rule_off', [], /turned off.*recorded/],
    ['trigger host not named', rule({ type: 'trigger_host' }), { act: true }, 'no_target', [], /payload names none/],
    ['trigger host unknown', rule({ type: 'trigger_host' }), { act: true, hostName: 'mail-1' }, 'no_target', [], /no host named "mail-1"/],
    ['specific host', rule({ type: 'specific_host', hostname: 'db-1' }), { act: true, hostName: 'web-1' }, 'accepted', ['h3'], null],
    ['specific host unknown', rule({ type: 'specific_host', hostname: 'db-9' }), { act: true }, 'no_target', [], /"db-9" has no agent/],
    ['tags: every host with all of them', rule({ type: 'specific_tags', tags: ['web'] }), { act: true }, 'accepted', ['h1', 'h2'], null],
    ['tags: all must match', rule({ type: 'specific_tags', tags: ['web', 'eu'] }), { act: true }, 'accepted', ['h1'], null],
    ['tags: none match', rule({ type: 'specific_tags', tags: ['web', 'asia'] }), { act: true }, 'no_target', [], /no host carries all of the tags web, asia/],
    ['cli machine', rule({ type: 'cli_machine' }, { action: { type: 'cli', runbook: { script: 'az vm list' } } }), { act: true }, 'accepted', [], /does not run them yet/],
    ['cloud action', rule({ type: 'trigger_host' }, { action: { type: 'cloud', operation: 'stop' } }), { act: true, hostName: 'web-1' }, 'accepted', [], /cloud actions are recorded/],
  ])('%s → %s', (_case, facts, event, outcome, targetIds, reason) => {
    const decision = decide(facts, { hostName: undefined, ...event }, hosts);
    expect(decision.outcome).toBe(outcome);
    expect(decision.targets.map((h) => h.id)).toEqual(targetIds);
    if (reason === null) expect(decision.reason).toBeNull();
    else expect(decision.reason).toMatch(reason);
  });

  it('is pure: the same inputs give equal decisions and the inputs are left as they were', () => {
    const facts = Object.freeze(rule({ type: 'specific_tags', tags: ['web'] }));
    const event = Object.freeze({ act: true, hostName: undefined });
    const frozenHosts = Object.freeze([...hosts]);
    expect(decide(facts, event, frozenHosts)).toEqual(decide(facts, event, frozenHosts));
    expect(frozenHosts).toEqual(hosts);
  });

  it('says in every non-acting decision that the alarm was still recorded', () => {
    for (const [enabled, act] of [[false, true], [false, false], [true, false]] as const) {
      const { reason } = decide(rule({ type: 'trigger_host' }, { enabled }), { act, hostName: 'web-1' }, hosts);
      expect(reason).toMatch(/recorded/);
      expect(reason).toMatch(/no action runs/);
    }
  });
});
