import { describe, expect, it } from 'vitest';
import { afterAnalyticsCalls, duringAnalyticsCall } from './rollup.js';

describe('the background gives way to analytics calls', () => {
  it('waits for a call under way to end', async () => {
    let endCall!: () => void;
    const call = duringAnalyticsCall(() => new Promise<void>((resolve) => (endCall = resolve)));
    let waited = false;
    const background = afterAnalyticsCalls(10_000).then(() => (waited = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(waited).toBe(false);
    endCall();
    await call;
    await background;
    expect(waited).toBe(true);
  });

  it('waits no longer than it was given, however long the call', async () => {
    let endCall!: () => void;
    const call = duringAnalyticsCall(() => new Promise<void>((resolve) => (endCall = resolve)));
    const started = performance.now();
    await afterAnalyticsCalls(150);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    endCall();
    await call;
  });

  it('a call that fails still ends', async () => {
    await expect(duringAnalyticsCall(() => Promise.reject(new Error('read failed')))).rejects.toThrow('read failed');
    const started = performance.now();
    await afterAnalyticsCalls(10_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
