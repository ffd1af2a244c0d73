import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Tarpit } from './tarpit.js';

describe('Tarpit', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const settled = (promise: Promise<void>) => {
    let done = false;
    void promise.then(() => (done = true));
    return () => done;
  };

  it('holds a throttled reply for the delay, or for Retry-After when that is shorter', async () => {
    const tarpit = new Tarpit(1000);
    const long = settled(tarpit.hold('t1', 5));
    await vi.advanceTimersByTimeAsync(999);
    expect(long()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(long()).toBe(true);
    const short = settled(new Tarpit(5000).hold('t1', 1));
    await vi.advanceTimersByTimeAsync(1000);
    expect(short()).toBe(true);
  });

  it('holds at most so many replies per tenant; the rest go out at once, and other tenants have their own count', async () => {
    const tarpit = new Tarpit(1000, 2);
    const held = [settled(tarpit.hold('t1', 1)), settled(tarpit.hold('t1', 1))];
    const third = settled(tarpit.hold('t1', 1));
    const otherTenant = settled(tarpit.hold('t2', 1));
    await vi.advanceTimersByTimeAsync(0);
    expect([...held, third, otherTenant].map((done) => done())).toEqual([false, false, true, false]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(held.map((done) => done())).toEqual([true, true]);
    const again = settled(tarpit.hold('t1', 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(again()).toBe(false);
  });

  it('does nothing with a delay of 0', async () => {
    const done = settled(new Tarpit(0).hold('t1', 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(done()).toBe(true);
  });
});
