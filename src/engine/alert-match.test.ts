import { describe, expect, it } from 'vitest';
import { actsOn, alertHost, matchesAlert, type AlertFacts } from './alert-match.js';

const INTEGRATION = '01900000-0000-7000-8000-000000000000';
const alert = (overrides: Partial<AlertFacts> = {}): AlertFacts => ({
  alarmName: 'DiskFull', severity: 'critical', state: 'firing', labels: { instance: 'web-1:9100', job: 'node', team: 'shop' }, hostName: 'web-1', ...overrides,
});
const trigger = (more: Record<string, unknown> = {}) => ({ type: 'alert' as const, integrationId: INTEGRATION, ...more });

describe('matchesAlert', () => {
  it('matches every alert of the integration when the trigger names nothing', () => {
    expect(matchesAlert(trigger(), alert())).toBe(true);
    expect(matchesAlert(trigger(), alert({ alarmName: undefined, severity: undefined, labels: {} }))).toBe(true);
  });

  it.each([
    ['DiskFull', true], ['Disk*', true], ['disk*', false], ['Disk?ull', true], ['Disk', false], ['*Full', true],
    ['/^Disk(Full|Low)$/', true], ['/^disk/i', true], ['/^CPU/', false], ['a.b', false],
  ])('reads the alarm name %s as a glob or /regex/ (%s)', (pattern, expected) => {
    expect(matchesAlert(trigger({ alarmName: pattern }), alert())).toBe(expected);
  });

  it('takes a glob literally otherwise: dots and brackets are not patterns', () => {
    expect(matchesAlert(trigger({ alarmName: 'a.b' }), alert({ alarmName: 'a.b' }))).toBe(true);
    expect(matchesAlert(trigger({ alarmName: 'a.b' }), alert({ alarmName: 'axb' }))).toBe(false);
    expect(matchesAlert(trigger({ alarmName: '[x]' }), alert({ alarmName: '[x]' }))).toBe(true);
  });

  it('compares severities without case, any of a list', () => {
    expect(matchesAlert(trigger({ severity: ['Critical', 'warning'] }), alert())).toBe(true);
    expect(matchesAlert(trigger({ severity: ['warning'] }), alert())).toBe(false);
    expect(matchesAlert(trigger({ severity: ['warning'] }), alert({ severity: undefined }))).toBe(false);
  });

  it('needs every label the trigger names, each value a glob', () => {
    expect(matchesAlert(trigger({ labels: { job: 'node', team: 'sh*' } }), alert())).toBe(true);
    expect(matchesAlert(trigger({ labels: { job: 'node', team: 'db' } }), alert())).toBe(false);
    expect(matchesAlert(trigger({ labels: { region: '*' } }), alert())).toBe(false);
  });

  it('matches resolved alerts too: whether they act is actsOn', () => {
    expect(matchesAlert(trigger(), alert({ state: 'resolved' }))).toBe(true);
    expect(actsOn(trigger(), 'firing')).toBe(true);
    expect(actsOn(trigger(), 'resolved')).toBe(false);
    expect(actsOn(trigger({ on: 'resolved' }), 'firing')).toBe(false);
    expect(actsOn(trigger({ on: 'both' }), 'resolved')).toBe(true);
  });
});

describe('alertHost', () => {
  it("is the tool's host unless the rule names a label", () => {
    expect(alertHost(trigger(), alert())).toBe('web-1');
    expect(alertHost(trigger({ hostLabel: 'team' }), alert())).toBe('shop');
    expect(alertHost(trigger({ hostLabel: 'nodename' }), alert())).toBeUndefined();
  });
});

describe('a pattern that does not compile', () => {
  it('matches nothing instead of throwing (a rule stored before validation refused it must not fail the batch)', () => {
    expect(matchesAlert(trigger({ alarmName: '/(/' }), alert())).toBe(false);
    expect(matchesAlert(trigger({ alarmName: '/(/' }), alert())).toBe(false);
  });
});
