import { describe, expect, it } from 'vitest';
import { PitcrewError } from '../errors/catalogue.js';
import {
  analyticsView, beforeAfter, dayOf, frequentAlarms, percentile, periodOf, ruleAlarms, ruleCovers, slowestAlarms, totalsByAlarm,
  type AlertRuleFacts, type DayGroup, type Period,
} from './analytics.js';

const day = (text: string) => dayOf(Date.parse(`${text}T00:00:00Z`));
const MIN = 60_000;

function group(dayText: string, alarmName: string, resolved: number, totalMinutes: number, extra: Partial<DayGroup> = {}): DayGroup {
  return { day: day(dayText), integrationId: 'i-a', alarmName, severity: 'critical', resolved, automated: 0, totalMs: totalMinutes * MIN, maxMs: totalMinutes * MIN, ...extra };
}

function rule(extra: Partial<AlertRuleFacts>): AlertRuleFacts {
  return { id: 'r', name: 'rule', enabled: true, integrationId: 'i-a', alarmName: undefined, severity: undefined, createdAt: Date.parse('2026-11-05T12:00:00Z'), ...extra };
}

describe('percentile: linear between the closest ranks (Hyndman-Fan 7, percentile_cont)', () => {
  // Each row computed by hand: h = (n - 1) p; x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
  it.each([
    { values: [42], p: 0.5, expected: 42 }, // one value: itself at every p
    { values: [42], p: 0.9, expected: 42 },
    { values: [10, 20], p: 0.5, expected: 15 }, // h = 0.5
    { values: [10, 20], p: 0.9, expected: 19 }, // h = 0.9
    { values: [1, 2, 3, 10], p: 0.5, expected: 2.5 }, // h = 1.5: 2 + 0.5 × 1
    { values: [1, 2, 3, 10], p: 0.9, expected: 7.9 }, // h = 2.7: 3 + 0.7 × 7
    { values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p: 0.9, expected: 9.1 }, // h = 8.1
    { values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], p: 0.9, expected: 10 }, // h = 9 exactly: a rank
    { values: [5, 5, 5, 100], p: 0.5, expected: 5 }, // ties: h = 1.5 between two fives
    { values: [5, 5, 5, 100], p: 0.9, expected: 71.5 }, // h = 2.7: 5 + 0.7 × 95
    { values: [600, 1200, 1800, 3600], p: 0.5, expected: 1500 },
    { values: [600, 1200, 1800, 3600], p: 0.9, expected: 3060 }, // h = 2.7: 1800 + 0.7 × 1800
  ])('p$p of $values is $expected', ({ values, p, expected }) => {
    expect(percentile(values, p)).toBeCloseTo(expected, 9);
  });

  it('p0 is the least, p1 the most; no value is an error, not a number', () => {
    expect(percentile([3, 7, 9], 0)).toBe(3);
    expect(percentile([3, 7, 9], 1)).toBe(9);
    expect(() => percentile([], 0.5)).toThrow(RangeError);
  });
});

describe('periodOf: whole UTC days', () => {
  const now = Date.parse('2026-11-28T15:00:00Z');

  it('defaults to the 30 days ending today', () => {
    expect(periodOf({}, now)).toEqual({ firstDay: day('2026-10-30'), endDay: day('2026-11-29') });
  });

  it('takes dates and date-times with a zone, each as its UTC day; both ends included', () => {
    expect(periodOf({ from: '2026-11-01', to: '2026-11-10' }, now)).toEqual({ firstDay: day('2026-11-01'), endDay: day('2026-11-11') });
    // 23:30 at UTC-2 is 01:30 the next UTC day.
    expect(periodOf({ from: '2026-11-01T23:30:00-02:00', to: '2026-11-02T00:00:00Z' }, now)).toEqual({ firstDay: day('2026-11-02'), endDay: day('2026-11-03') });
    expect(periodOf({ to: '2026-11-10' }, now)).toEqual({ firstDay: day('2026-10-12'), endDay: day('2026-11-11') });
  });

  it.each([
    ['from', { from: 'yesterday' }],
    ['from', { from: '2026-02-30' }],
    ['to', { to: '2026-11-10T10:00:00' }], // a date-time without its zone says no day
    ['from', { from: '1969-12-31' }],
  ])('refuses a %s that names no day: a 400 that says what to give', (field, query) => {
    const error = (() => {
      try {
        periodOf(query, now);
      } catch (caught) {
        return caught as PitcrewError;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(PitcrewError);
    expect(error.code).toBe('PITCREW_ERR_VALIDATION');
    expect(error.message).toMatch(/2026-11-30/);
    expect(error.fieldErrors).toEqual([{ path: `/querystring/${field}`, message: expect.any(String) }]);
  });

  it('refuses from after to, and says to swap them', () => {
    expect(() => periodOf({ from: '2026-11-10', to: '2026-11-01' }, now)).toThrow(/later than to.*swap/);
  });
});

describe('rankings', () => {
  const groups = [
    group('2026-11-02', 'DiskFull', 2, 40),
    group('2026-11-03', 'DiskFull', 2, 80), // 4 incidents, 120 min: mean 30 min
    group('2026-11-02', 'CpuHigh', 4, 20), // 4 incidents, mean 5 min
    group('2026-11-04', 'Cert', 2, 60, { integrationId: 'i-b' }), // 2, mean 30 min: DiskFull's mean
    group('2026-11-04', 'Cert', 0, 0), // an empty group counts for nothing
  ];

  it('frequent: most first, equal counts by name', () => {
    expect(frequentAlarms(totalsByAlarm(groups), 10).map((t) => [t.alarmName, t.count])).toEqual([['CpuHigh', 4], ['DiskFull', 4], ['Cert', 2]]);
    expect(frequentAlarms(totalsByAlarm(groups), 1).map((t) => t.alarmName)).toEqual(['CpuHigh']);
  });

  it('slowest: longest mean first, equal means the more frequent first', () => {
    expect(slowestAlarms(totalsByAlarm(groups), 10).map((t) => t.alarmName)).toEqual(['DiskFull', 'Cert', 'CpuHigh']);
  });

  it('one alarm name across integrations is one line', () => {
    expect(totalsByAlarm([group('2026-11-02', 'X', 1, 10), group('2026-11-02', 'X', 2, 20, { integrationId: 'i-b', severity: null })])).toEqual([
      { alarmName: 'X', count: 3, automated: 0, totalMs: 30 * MIN, maxMs: 20 * MIN },
    ]);
  });
});

describe('ruleCovers: what an alert rule takes', () => {
  it.each([
    [{}, 'i-a', 'DiskFull', 'critical', true], // no name: every alarm of the integration
    [{}, 'i-b', 'DiskFull', 'critical', false], // another integration
    [{}, null, 'DiskFull', null, false], // a webhook's alarm
    [{ alarmName: 'Disk*' }, 'i-a', 'DiskFull', 'critical', true],
    [{ alarmName: 'Disk*' }, 'i-a', 'MyDiskFull', 'critical', false], // a glob is over the whole name
    [{ alarmName: '/^disk/i' }, 'i-a', 'DiskFull', 'critical', true],
    [{ alarmName: '/(/' }, 'i-a', 'DiskFull', 'critical', false], // a pattern that does not compile matches nothing
    [{ severity: ['Critical'] }, 'i-a', 'DiskFull', 'critical', true], // severities without case
    [{ severity: ['warning'] }, 'i-a', 'DiskFull', 'critical', false],
    [{ severity: ['warning'] }, 'i-a', 'DiskFull', null, false],
  ] as const)('%j on %s %s %s: %s', (trigger, integrationId, alarmName, severity, expected) => {
    expect(ruleCovers(rule(trigger as Partial<AlertRuleFacts>), integrationId, alarmName, severity)).toBe(expected);
  });
});

describe('before and after a rule', () => {
  const period: Period = { firstDay: day('2026-11-01'), endDay: day('2026-11-11') };
  const covering = rule({ id: 'r1', alarmName: 'DiskFull' });
  const groups = [
    group('2026-11-02', 'DiskFull', 2, 120), // before: 2, 60 min mean
    group('2026-11-05', 'DiskFull', 99, 999), // the creation day: replaced by the split
    group('2026-11-08', 'DiskFull', 3, 30), // after: 3, 10 min mean
    group('2026-11-08', 'DiskFull', 5, 500, { severity: 'info', integrationId: 'i-b' }), // another integration's: not the rule's
  ];

  it('splits the creation day at the creation time, and counts the other days whole', () => {
    const pairs = ruleAlarms([covering], groups);
    expect(pairs.map((p) => [p.rule.id, p.alarmName])).toEqual([['r1', 'DiskFull']]);
    const [result] = beforeAfter(pairs, groups, [{ ruleId: 'r1', alarmName: 'DiskFull', before: { count: 1, totalMs: 60 * MIN }, after: { count: 1, totalMs: 10 * MIN } }], period);
    // before: 2 (120 min) + 1 (60 min) = 3, 60 min; after: 3 (30 min) + 1 (10 min) = 4, 10 min.
    expect(result).toMatchObject({ ruleId: 'r1', alarmName: 'DiskFull', createdAt: '2026-11-05T12:00:00.000Z', before: { count: 3, meanSeconds: 3600 }, after: { count: 4, meanSeconds: 600 } });
  });

  it('a rule created before the period has everything after it; nothing before is null, not zero', () => {
    const old = rule({ id: 'r0', alarmName: 'DiskFull', createdAt: Date.parse('2026-10-01T00:00:00Z') });
    const [result] = beforeAfter(ruleAlarms([old], groups), groups, [], period);
    expect(result).toMatchObject({ before: { count: 0, meanSeconds: null }, after: { count: 104, meanSeconds: expect.any(Number) } });
  });
});

describe('analyticsView', () => {
  it('no incident: empty lists, no share, no mean', () => {
    const view = analyticsView({ period: { firstDay: day('2026-11-01'), endDay: day('2026-11-02') }, limit: 10, groups: [], spreads: [], hosts: [], pairs: [], splits: [] });
    expect(view).toEqual({
      period: { from: '2026-11-01', to: '2026-11-01', days: 1 },
      resolved: 0, automated: 0, automatedShare: null, meanSeconds: null,
      frequent: [], slowest: [], mttrByDay: [], hosts: [], rules: [],
    });
  });

  it('MTTR by day sums the alarms of each day; means are to the millisecond', () => {
    const groups = [
      group('2026-11-03', 'A', 1, 10, { automated: 1 }),
      group('2026-11-02', 'B', 2, 1, { totalMs: 1001, maxMs: 1000 }),
      group('2026-11-03', 'B', 2, 20),
    ];
    const view = analyticsView({ period: { firstDay: day('2026-11-01'), endDay: day('2026-11-04') }, limit: 10, groups, spreads: [{ alarmName: 'A', p50Ms: 600_000, p90Ms: 600_000 }], hosts: [], pairs: [], splits: [] });
    expect(view.mttrByDay).toEqual([
      { day: '2026-11-02', count: 2, automated: 0, meanSeconds: 0.501 }, // 1001 ms / 2, rounded to the millisecond
      { day: '2026-11-03', count: 3, automated: 1, meanSeconds: 600 }, // (10 + 20) min / 3
    ]);
    expect(view).toMatchObject({ resolved: 5, automated: 1, automatedShare: 0.2 });
    // A has its percentiles; B's were not read (it is not among the slowest asked for): null, not made up.
    expect(view.slowest).toEqual([
      { alarmName: 'A', count: 1, meanSeconds: 600, p50Seconds: 600, p90Seconds: 600, maxSeconds: 600 },
      { alarmName: 'B', count: 4, meanSeconds: 300.25, p50Seconds: null, p90Seconds: null, maxSeconds: 1200 },
    ]);
  });
});
