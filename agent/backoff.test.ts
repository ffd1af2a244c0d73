import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles its ceiling up to the cap, with full jitter, and starts over after a reset', () => {
    const top = new Backoff(500, 30_000, () => 0.999_999);
    expect(Array.from({ length: 8 }, () => top.next())).toEqual([499, 999, 1999, 3999, 7999, 15_999, 29_999, 29_999]);
    top.reset();
    expect(top.next()).toBe(499);
    const bottom = new Backoff(500, 30_000, () => 0);
    expect(bottom.next()).toBe(0);
  });

  it('grows only to the refused cap while nothing listens, and on from there when the service answers but fails', () => {
    const top = new Backoff(500, 30_000, () => 0.999_999, 4000);
    expect(Array.from({ length: 7 }, () => top.next('refused'))).toEqual([499, 999, 1999, 3999, 3999, 3999, 3999]);
    // The service is up but did not welcome us: a loaded service, so the fleet spreads further.
    expect([top.next('other'), top.next('other')]).toEqual([29_999, 29_999]);
    expect(top.next('refused')).toBe(3999);
  });

  it('spreads a fleet cut off at once uniformly over the first ceiling: no two instants crowded', () => {
    // 1,000 agents whose connection dropped at the same moment, each with its own random source.
    const delays = Array.from({ length: 1000 }, () => new Backoff().next());
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(500);
    // Uniform over 500 ms: ~432 distinct milliseconds are expected (σ ≈ 7); all at one instant would be 1.
    expect(new Set(delays).size).toBeGreaterThan(380);
    const perTenth = [0, 0, 0, 0, 0];
    for (const delay of delays) perTenth[Math.floor(delay / 100)]!++;
    for (const count of perTenth) expect(count).toBeGreaterThan(140); // 200 expected in each 100 ms (σ ≈ 13)
    // Two agents: their reconnections fall at different instants (a tie has probability 1/500 per
    // draw; ten draws in a row all tied would be chance 1 in 10^27).
    const [a, b] = [new Backoff(), new Backoff()];
    expect(Array.from({ length: 10 }, () => a.next() === b.next()).every(Boolean)).toBe(false);
  });
});
