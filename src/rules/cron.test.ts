import { describe, expect, it } from 'vitest';
import { nextTick, nextTicks, planTick, type CronTrigger } from './cron.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const cron = (schedule: string, timezone?: string): CronTrigger => ({ type: 'cron', schedule, ...(timezone ? { timezone } : {}) });
const MIN = 60_000;

describe('cron ticks', () => {
  it('reads 5 fields, and 6 with seconds first, in UTC unless the rule names a zone', () => {
    expect(iso(nextTick(cron('*/5 * * * *'), at('2026-01-01T00:03:00Z')))).toBe('2026-01-01T00:05:00.000Z');
    expect(iso(nextTick(cron('*/10 * * * * *'), at('2026-01-01T00:00:05Z')))).toBe('2026-01-01T00:00:10.000Z');
    expect(iso(nextTick(cron('0 9 * * *', 'Asia/Tokyo'), at('2026-01-01T00:00:00Z')))).toBe('2026-01-02T00:00:00.000Z');
    expect(nextTicks(cron('0 * * * *'), at('2026-01-01T00:00:00Z'), 3).map(iso)).toEqual(['2026-01-01T01:00:00.000Z', '2026-01-01T02:00:00.000Z', '2026-01-01T03:00:00.000Z']);
  });

  // What docs/scheduler.md promises, as croner's README ("Pattern") lists it: a year as a 7th field, and the nicknames.
  it('reads 7 fields with a year last, and the nicknames', () => {
    const from = at('2026-01-01T12:00:00Z');
    expect(iso(nextTick(cron('0 0 9 1 6 * 2027'), from))).toBe('2027-06-01T09:00:00.000Z');
    expect(nextTick(cron('0 0 9 1 6 * 2025'), from)).toBeUndefined();
    expect(Object.fromEntries(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'].map((name) => [name, iso(nextTick(cron(name), from))]))).toEqual({
      '@yearly': '2027-01-01T00:00:00.000Z',
      '@annually': '2027-01-01T00:00:00.000Z',
      '@monthly': '2026-02-01T00:00:00.000Z',
      '@weekly': '2026-01-04T00:00:00.000Z', // a Sunday
      '@daily': '2026-01-02T00:00:00.000Z',
      '@midnight': '2026-01-02T00:00:00.000Z',
      '@hourly': '2026-01-01T13:00:00.000Z',
    });
  });

  // Europe/Berlin: 2026-03-29 02:00 CET → 03:00 CEST (01:00 UTC); 2026-10-25 03:00 CEST → 02:00 CET (01:00 UTC).
  it('runs a time the clocks skip once, at the first moment after the gap', () => {
    expect(nextTicks(cron('30 2 * * *', 'Europe/Berlin'), at('2026-03-27T12:00:00Z'), 3).map(iso)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, once
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('runs a time the clocks repeat once, at its first occurrence; an interval keeps its real interval', () => {
    expect(nextTicks(cron('30 2 * * *', 'Europe/Berlin'), at('2026-10-24T12:00:00Z'), 2).map(iso)).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; not again at 02:30 CET
      '2026-10-26T01:30:00.000Z',
    ]);
    expect(nextTicks(cron('*/30 * * * *', 'Europe/Berlin'), at('2026-10-25T00:20:00Z'), 4).map(iso)).toEqual([
      '2026-10-25T00:30:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-25T02:00:00.000Z',
    ]);
  });
});

describe('a tick that has come', () => {
  const everyMinute = cron('* * * * *');
  const due = at('2026-01-01T10:00:00Z');

  it('runs on time, and waits for the next', () => {
    expect(planTick(everyMinute, due, due + 200, 5 * MIN)).toEqual({ run: due, missed: undefined, next: due + MIN });
  });

  it('after an outage within the grace runs the latest tick once and records the others as missed', () => {
    const plan = planTick(everyMinute, due, due + 3 * MIN + 10_000, 5 * MIN);
    expect(plan).toEqual({ run: due + 3 * MIN, missed: { count: 3, first: due, last: due + 2 * MIN, atLeast: false }, next: due + 4 * MIN });
  });

  it('past the grace runs nothing and records every tick as missed', () => {
    const plan = planTick(cron('0 * * * *'), due, due + 3 * 60 * MIN + 10 * MIN, 5 * MIN);
    expect(plan).toEqual({ run: undefined, missed: { count: 4, first: due, last: due + 3 * 60 * MIN, atLeast: false }, next: due + 4 * 60 * MIN });
  });

  it('after a very long outage of a frequent schedule, counts at least so many and still runs the latest within the grace', () => {
    const now = due + 2 * 24 * 60 * MIN + 30_000;
    const plan = planTick(everyMinute, due, now, 5 * MIN);
    expect(plan.run).toBe(now - 30_000);
    expect(plan.missed).toMatchObject({ count: 1_000, first: due, last: now - 30_000 - MIN, atLeast: true });
    expect(plan.next).toBe(now + 30_000);
  });
});
