import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.js';

describe('backoffMs', () => {
  it.each<[number, number, number]>([
    // failures, with no jitter (random 0) → half, with full jitter (random 1) → whole
    [1, 500, 1000],
    [2, 1000, 2000],
    [3, 2000, 4000],
    [5, 8000, 16_000],
  ])('after %i failures waits between %i and %i ms (base 1 s)', (failures, low, high) => {
    expect(backoffMs(failures, 1000, 60_000, 0, 0)).toBe(low);
    expect(backoffMs(failures, 1000, 60_000, 0, 1)).toBe(high);
  });

  it('never waits longer than the cap, however many failures', () => {
    for (const failures of [10, 30, 100, 1000]) expect(backoffMs(failures, 1000, 60_000, 0, 1)).toBe(60_000);
  });

  it("honours a receiver's Retry-After when it is longer, within the cap", () => {
    expect(backoffMs(1, 1000, 60_000, 30_000, 0)).toBe(30_000);
    expect(backoffMs(1, 1000, 60_000, 10, 0)).toBe(500);
    expect(backoffMs(1, 1000, 60_000, 3_600_000, 0)).toBe(60_000);
  });
});
