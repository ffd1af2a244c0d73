import { describe, expect, it } from 'vitest';
import { describeFanOut, describeTarget, describeTrigger } from './describe';
import { previewFieldOf, previewInputOf, scheduleInWords, wallClock } from './schedule';

describe('cron schedules in the UI', () => {
  it('puts the common expressions in words, and leaves the others as written', () => {
    const cases: Array<[string, string | null]> = [
      ['* * * * *', 'every minute'],
      ['*/5 * * * *', 'every 5 minutes'],
      ['*/10 * * * * *', 'every 10 seconds'],
      ['15 * * * *', 'every hour at minute 15'],
      ['0 */6 * * *', 'every 6 hours at minute 0'],
      ['30 2 * * *', 'every day at 02:30'],
      ['0 9,17 * * *', 'every day at 09:00 and 17:00'],
      ['0 30 9 * * 1-5', 'Monday to Friday at 09:30'],
      ['0 9 * * MON', 'every Monday at 09:00'],
      ['0 9 * * 1,3,5', 'Monday, Wednesday and Friday at 09:00'],
      ['0 0 1 * *', 'on day 1 of every month at 00:00'],
      ['0 0 L * *', 'on the last day of every month at 00:00'],
      ['*/15 * * * 0', 'every 15 minutes, every Sunday'],
      ['@daily', 'every day at 00:00'],
      ['0 0 1 1 *', null],
      ['0 0 1 * 1', null],
      ['0 9-17 * * *', null],
      ['61 * * * *', null],
      ['not a schedule', null],
    ];
    expect(cases.map(([expression]) => [expression, scheduleInWords(expression)])).toEqual(cases);
  });

  it('reads a tick on the wall clock of the zone, with its abbreviation, as the preview does', () => {
    expect(wallClock('2026-11-26T02:00:00.000Z', 'Europe/Berlin')).toBe('2026-11-26 03:00:00 CET');
    expect(wallClock('2026-07-01T00:30:00.000Z', 'Europe/Berlin')).toBe('2026-07-01 02:30:00 CEST');
    expect(wallClock('2026-07-01T00:30:00.000Z', 'UTC')).toBe('2026-07-01 00:30:00 UTC');
    expect(wallClock('2026-07-01T00:30:00.000Z', 'Nowhere/Special')).toBe('2026-07-01 00:30:00 UTC');
  });

  it("places the preview's errors at the schedule's fields", () => {
    expect(['/schedule', '/timezone', '/body/schedule', '/count', ''].map(previewFieldOf)).toEqual(['schedule', 'timezone', 'schedule', undefined, undefined]);
  });

  it('asks the preview for the schedule as typed, trimmed, and nothing while it is empty', () => {
    expect(previewInputOf({ schedule: ' 30 2 * * * ', timezone: ' Europe/Berlin ' })).toEqual({ schedule: '30 2 * * *', timezone: 'Europe/Berlin' });
    expect(previewInputOf({ schedule: '@daily', timezone: '' })).toEqual({ schedule: '@daily' });
    expect(previewInputOf({ schedule: '  ', timezone: 'UTC' })).toBeNull();
    expect(scheduleInWords('@midnight')).toBe(scheduleInWords('@daily'));
  });

  it('describes a cron rule with its zone, and its tags as one online host of them', () => {
    expect(describeTrigger({ type: 'cron', schedule: '*/5 * * * *', timezone: 'Europe/Berlin' })).toBe('Schedule */5 * * * * (Europe/Berlin)');
    expect(describeTrigger({ type: 'cron', schedule: '0 * * * *' })).toBe('Schedule 0 * * * * (UTC)');
    expect(describeTarget({ type: 'specific_tags', tags: ['web', 'eu'] }, 'cron')).toBe('One online host of tags web + eu');
    expect(describeTarget({ type: 'specific_tags', tags: ['web'], pick: 'all' }, 'cron')).toBe('Tags web');
    expect(describeTarget({ type: 'specific_tags', tags: ['web'] })).toBe('Tags web');
    expect(describeFanOut({ type: 'specific_tags', tags: ['web'], maxConcurrency: 2 }, 'cron')).toBeNull();
    expect(describeFanOut({ type: 'specific_tags', tags: ['web'], pick: 'all', maxConcurrency: 2 }, 'cron')).toBe('at most 2 hosts at once, never stops on failures');
  });
});
