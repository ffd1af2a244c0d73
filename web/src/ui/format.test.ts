import { describe, expect, it } from 'vitest';
import { duration, relativeTime, seconds } from './format';

describe('format', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  it.each([
    ['2026-01-01T12:00:00Z', 'just now'],
    ['2026-01-01T11:59:48Z', '12 s ago'],
    ['2026-01-01T11:57:00Z', '3 min ago'],
    ['2026-01-01T09:00:00Z', '3 h ago'],
    ['2025-12-30T12:00:00Z', '2 d ago'],
    ['2026-01-01T12:10:00Z', 'in 10 min'],
  ])('relativeTime(%s) is %s', (iso, text) => expect(relativeTime(iso, now)).toBe(text));

  it.each([
    [420, '420 ms'],
    [12_345, '12.3 s'],
    [245_000, '4 min 05 s'],
    [7_380_000, '2 h 03 min'],
  ])('duration(%d) is %s', (ms, text) => expect(duration(ms)).toBe(text));

  it.each([
    [45, '45 s'],
    [300, '300 s (5 min)'],
    [7200, '7200 s (2 h)'],
  ])('seconds(%d) is %s', (n, text) => expect(seconds(n)).toBe(text));
});
