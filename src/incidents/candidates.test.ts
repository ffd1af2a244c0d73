import { describe, expect, it } from 'vitest';
import { alarmNamePattern } from '../rules/alarm-name.js';
import { dayOf, type AlertRuleFacts, type DayGroup, type Period } from './analytics.js';
import { exactAlarmName, humanDuration, PRESET_ACTION_LIMIT, PRESET_FLAPPING, rankCandidates, withAlertLabels } from './candidates.js';

const day = (text: string) => dayOf(Date.parse(`${text}T00:00:00Z`));
const MIN = 60_000;
const period: Period = { firstDay: day('2026-11-01'), endDay: day('2026-12-01') }; // 30 days
const options = { limit: 10, minCount: 3, minMeanSeconds: 300 };

function group(alarmName: string, resolved: number, meanMinutes: number, extra: Partial<DayGroup> = {}): DayGroup {
  return { day: day('2026-11-10'), integrationId: 'i-a', alarmName, severity: 'critical', resolved, automated: 0, totalMs: resolved * meanMinutes * MIN, maxMs: meanMinutes * MIN, ...extra };
}

function rule(extra: Partial<AlertRuleFacts>): AlertRuleFacts {
  return { id: 'r', name: 'a rule', enabled: true, integrationId: 'i-a', alarmName: undefined, severity: undefined, createdAt: 0, ...extra };
}

describe('rankCandidates', () => {
  it('ranks by total incident time; equal totals: more incidents first, then by name and integration', () => {
    const groups = [
      group('Slow', 3, 60), // 180 min
      group('Often', 41, 38), // 1558 min: the first
      group('TieFew', 4, 45), // 180 min, 4 incidents: before Slow
      group('Slow', 3, 60, { integrationId: 'i-b' }), // 180 min on another integration: after i-a's
    ];
    expect(rankCandidates(groups, [], period, options).map((c) => [c.alarmName, c.integrationId, c.count, c.totalSeconds])).toEqual([
      ['Often', 'i-a', 41, 41 * 38 * 60],
      ['TieFew', 'i-a', 4, 180 * 60],
      ['Slow', 'i-a', 3, 180 * 60],
      ['Slow', 'i-b', 3, 180 * 60],
    ]);
  });

  it('says why in words, and fills in the wizard: exact alarm, trigger host, the starter runbook of its kind, safety presets', () => {
    const [candidate] = rankCandidates([group('DiskFull', 41, 38)], [], period, options);
    expect(candidate).toEqual({
      integrationId: 'i-a',
      alarmName: 'DiskFull',
      count: 41,
      meanSeconds: 2280,
      totalSeconds: 93_480,
      severities: ['critical'],
      kind: 'disk',
      rulesOff: [],
      why: 'fired 41 times in 30 days, resolved in 38 min on average, no rule acts on it',
      typicalHostname: null,
      suggestion: {
        name: 'DiskFull: disk cleanup',
        trigger: { type: 'alert', integrationId: 'i-a', alarmName: 'DiskFull' },
        target: { type: 'trigger_host' },
        starterRunbook: { slug: 'disk-cleanup', name: 'disk cleanup', flavour: 'autofix', why: expect.stringContaining('dry run'), labelDefaults: [], prelude: '' },
        labels: [],
        flapping: PRESET_FLAPPING,
        actionLimit: PRESET_ACTION_LIMIT,
      },
    });
  });

  it('takes the starter’s variables from the labels the alarm’s newest alert has', () => {
    const [candidate] = rankCandidates([group('ServiceDown', 4, 25)], [], period, options);
    const filled = withAlertLabels(candidate!, ['severity', 'service', 'alertname']);
    expect(filled.suggestion.labels).toEqual(['alertname', 'service', 'severity']);
    expect(filled.suggestion.starterRunbook).toMatchObject({
      slug: 'restart-service',
      labelDefaults: [{ variable: 'ServiceName', labels: ['LABEL_service'] }],
      prelude: expect.stringContaining(': "${ServiceName:=${LABEL_service:-}}"\n'),
    });
    expect(withAlertLabels(candidate!, ['alertname']).suggestion.starterRunbook).toMatchObject({ labelDefaults: [], prelude: '' });
    // No starter for the kind: the labels only.
    const [other] = rankCandidates([group('Weird', 4, 25)], [], period, options);
    expect(withAlertLabels(other!, ['service']).suggestion).toMatchObject({ starterRunbook: null, labels: ['service'] });
  });

  it('leaves out what is not repetitive, fast to resolve, a webhook alarm, or covered by an enabled rule', () => {
    const groups = [
      group('Twice', 2, 60), // under minCount
      group('Quick', 50, 4), // 4 min mean: under minMeanSeconds
      group('Webhook', 10, 60, { integrationId: null }), // a webhook's alarm already comes through a rule
      group('Covered', 10, 60),
      group('OtherIntegration', 10, 60, { integrationId: 'i-b' }),
      group('Kept', 3, 5), // exactly at both thresholds
    ];
    const rules = [rule({ alarmName: 'Covered' }), rule({ integrationId: 'i-c' })];
    expect(rankCandidates(groups, rules, period, options).map((c) => c.alarmName)).toEqual(['OtherIntegration', 'Kept']);
  });

  it('counts only the severities no enabled rule covers, and narrows the suggested trigger to them', () => {
    const groups = [group('Load', 5, 60, { severity: 'critical' }), group('Load', 4, 30, { severity: 'warning' })];
    const [candidate] = rankCandidates(groups, [rule({ alarmName: 'Load', severity: ['critical'] })], period, options);
    expect(candidate).toMatchObject({
      count: 4,
      meanSeconds: 1800,
      severities: ['warning'],
      why: 'fired 4 times in 30 days, resolved in 30 min on average, no rule acts on its warning alerts',
      suggestion: { trigger: { alarmName: 'Load', severity: ['warning'] } },
    });
  });

  it('names the rules that match but are off', () => {
    const groups = [group('CertExpiring', 5, 120)];
    const [candidate] = rankCandidates(groups, [rule({ id: 'r-off', name: 'certs', enabled: false, alarmName: 'Cert*' })], period, options);
    expect(candidate).toMatchObject({
      kind: 'certificate',
      rulesOff: [{ id: 'r-off', name: 'certs' }],
      why: 'fired 5 times in 30 days, resolved in 2 h on average, no rule acts on it; rule "certs" matches it but is off',
      suggestion: { starterRunbook: { slug: 'cert-expiry', flavour: 'diagnostics' } },
    });
  });

  it('keeps at most limit', () => {
    const groups = Array.from({ length: 20 }, (_, i) => group(`A${String(i).padStart(2, '0')}`, 3, 10 + i));
    expect(rankCandidates(groups, [], period, { ...options, limit: 2 }).map((c) => c.alarmName)).toEqual(['A19', 'A18']);
  });
});

describe('exactAlarmName', () => {
  it.each(['DiskFull', 'disk_full:/var', 'load > 5 (1m)', 'a*b', 'what?', '/looks/', 'back\\slash*'])('%s: matches itself and nothing more', (name) => {
    const pattern = alarmNamePattern(exactAlarmName(name));
    expect(pattern.test(name)).toBe(true);
    expect(pattern.test(`${name}x`)).toBe(false);
    expect(pattern.test(`x${name}`)).toBe(false);
  });

  it('keeps a plain name as it is', () => {
    expect(exactAlarmName('DiskFull')).toBe('DiskFull');
    expect(exactAlarmName('a*b')).toBe('/^a\\*b$/');
  });
});

describe('humanDuration', () => {
  it.each([
    [0, '0 s'], [45, '45 s'], [59.4, '59 s'], [59.6, '1 min'], [2280, '38 min'], [3569, '59 min'], [3570, '1 h'],
    [9000, '2.5 h'], [86_399, '1 day'], [86_400, '1 day'], [267_840, '3.1 days'],
  ])('%s s is %s', (value, text) => {
    expect(humanDuration(value)).toBe(text);
  });
});
