import { describe, expect, it } from 'vitest';
import { TokenBucket } from './throttle.js';

/** Takes `n` tokens at one instant; returns how many were granted. */
function drain(bucket: TokenBucket, n: number, now: number): number {
  let granted = 0;
  for (let i = 0; i < n; i += 1) if (bucket.take(now).ok) granted += 1;
  return granted;
}

// Times are explicit milliseconds (the bucket's clock is performance.now()); nothing sleeps.
describe('TokenBucket', () => {
  it('grants a full burst at once, then refuses', () => {
    const bucket = new TokenBucket({ ratePerSecond: 1, burst: 3 }, 0);
    expect(drain(bucket, 3, 0)).toBe(3);
    expect(bucket.take(0)).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it('refills at the rate, not before', () => {
    const bucket = new TokenBucket({ ratePerSecond: 2, burst: 2 }, 0);
    expect(drain(bucket, 2, 0)).toBe(2);
    expect(bucket.take(499).ok).toBe(false);
    expect(bucket.take(500).ok).toBe(true);
    expect(bucket.take(500).ok).toBe(false);
    // Refused calls do not cost tokens: the refill carried on from 500 ms.
    expect(bucket.take(1000).ok).toBe(true);
  });

  it('never holds more than the burst, however long it was idle', () => {
    const bucket = new TokenBucket({ ratePerSecond: 100, burst: 5 }, 0);
    expect(drain(bucket, 50, 1e9)).toBe(5);
  });

  it('sustains the rate over time', () => {
    const bucket = new TokenBucket({ ratePerSecond: 10, burst: 5 }, 0);
    let granted = 0;
    for (let t = 0; t <= 10_000; t += 10) granted += drain(bucket, 5, t);
    // The starting burst of 5 plus 10 per second for 10 s, give or take the last fraction of a token.
    expect(granted).toBeGreaterThanOrEqual(104);
    expect(granted).toBeLessThanOrEqual(105);
  });

  it('does not refill or drain when the clock steps back', () => {
    const bucket = new TokenBucket({ ratePerSecond: 1, burst: 2 }, 10_000);
    expect(drain(bucket, 2, 10_000)).toBe(2);
    expect(bucket.take(5_000).ok).toBe(false);
    expect(bucket.take(6_000).ok).toBe(true);
  });

  describe('Retry-After', () => {
    it.each([
      [{ ratePerSecond: 1, burst: 1 }, 1],
      [{ ratePerSecond: 1000, burst: 10 }, 1],
      [{ ratePerSecond: 0.5, burst: 1 }, 2],
      [{ ratePerSecond: 0.1, burst: 3 }, 10],
    ])('with %j is %i s once empty', (settings, seconds) => {
      const bucket = new TokenBucket(settings, 0);
      drain(bucket, settings.burst, 0);
      expect(bucket.take(0)).toEqual({ ok: false, retryAfterSeconds: seconds });
    });

    it('shrinks as the bucket refills, in whole seconds', () => {
      const bucket = new TokenBucket({ ratePerSecond: 0.25, burst: 1 }, 0);
      bucket.take(0);
      expect(bucket.take(0)).toEqual({ ok: false, retryAfterSeconds: 4 });
      expect(bucket.take(1_500)).toEqual({ ok: false, retryAfterSeconds: 3 });
      expect(bucket.take(3_001)).toEqual({ ok: false, retryAfterSeconds: 1 });
    });

    it('is long enough: a retry after it succeeds', () => {
      for (const settings of [{ ratePerSecond: 3, burst: 2 }, { ratePerSecond: 0.3, burst: 1 }, { ratePerSecond: 7, burst: 50 }]) {
        const bucket = new TokenBucket(settings, 0);
        drain(bucket, settings.burst, 0);
        const refused = bucket.take(123);
        if (refused.ok) throw new Error(`bucket ${JSON.stringify(settings)} was not empty`);
        expect(bucket.take(123 + refused.retryAfterSeconds * 1000).ok).toBe(true);
      }
    });
  });

  describe('reconfigure', () => {
    it('caps what is left at a lower burst at once', () => {
      const bucket = new TokenBucket({ ratePerSecond: 1, burst: 10 }, 0);
      bucket.reconfigure({ ratePerSecond: 1, burst: 2 });
      expect(drain(bucket, 10, 0)).toBe(2);
    });

    it('does not hand out a higher burst at once; it fills up to it at the rate', () => {
      const bucket = new TokenBucket({ ratePerSecond: 1, burst: 2 }, 0);
      expect(drain(bucket, 2, 0)).toBe(2);
      bucket.reconfigure({ ratePerSecond: 1, burst: 10 });
      expect(bucket.take(0).ok).toBe(false);
      expect(drain(bucket, 20, 60_000)).toBe(10);
    });

    it('refills at the new rate from then on', () => {
      const bucket = new TokenBucket({ ratePerSecond: 1, burst: 100 }, 0);
      expect(drain(bucket, 100, 0)).toBe(100);
      bucket.reconfigure({ ratePerSecond: 50, burst: 100 });
      expect(drain(bucket, 100, 1_000)).toBe(50);
      bucket.reconfigure({ ratePerSecond: 1, burst: 100 });
      expect(drain(bucket, 100, 2_000)).toBe(1);
    });

    it('keeps the tokens of a bucket reconfigured with the same settings (a cache reload)', () => {
      const bucket = new TokenBucket({ ratePerSecond: 1, burst: 3 }, 0);
      expect(drain(bucket, 2, 0)).toBe(2);
      bucket.reconfigure({ ratePerSecond: 1, burst: 3 });
      expect(drain(bucket, 3, 0)).toBe(1);
    });
  });
});
