import { describe, expect, it } from 'vitest';
import { decide, type Decision } from './decide.js';

describe('decide', () => {
  // Every combination of the inputs decide() reads, with the outcome DESIGN.md §2 asks for.
  it.each<[string, boolean, boolean, Decision['outcome'], RegExp | null]>([
    ['rule on, Act true', true, true, 'accepted', null],
    ['rule on, Act false', true, false, 'dry_run', /Act was false.*dry run/],
    ['rule off, Act true', false, true, 'rule_off', /turned off.*recorded/],
    // Rule off wins over a dry run: nothing would run either way, and the rule state explains more.
    ['rule off, Act false', false, false, 'rule_off', /turned off.*recorded/],
  ])('%s → %s', (_case, enabled, act, outcome, reason) => {
    const decision = decide({ enabled }, { act });
    expect(decision.outcome).toBe(outcome);
    if (reason === null) expect(decision.reason).toBeNull();
    else expect(decision.reason).toMatch(reason);
  });

  it('is pure: the same inputs give equal decisions and the inputs are left as they were', () => {
    const rule = Object.freeze({ enabled: true });
    const event = Object.freeze({ act: false });
    expect(decide(rule, event)).toEqual(decide(rule, event));
    expect(rule).toEqual({ enabled: true });
    expect(event).toEqual({ act: false });
  });

  it('says in every non-acting decision that the alarm was still recorded', () => {
    for (const [enabled, act] of [[false, true], [false, false], [true, false]] as const) {
      const { reason } = decide({ enabled }, { act });
      expect(reason).toMatch(/recorded/);
      expect(reason).toMatch(/no action runs/);
    }
  });
});
