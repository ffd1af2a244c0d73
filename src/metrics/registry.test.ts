import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EVENT_LOOP_SAMPLE_MS, Metrics } from './registry.js';

// The module object prom-client's default metrics take monitorEventLoopDelay from.
const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof import('node:perf_hooks');

describe('Metrics', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("samples the event loop's delay every EVENT_LOOP_SAMPLE_MS: prom-client's 10 ms woke an idle server 100 times a second", async () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    const metrics = new Metrics();
    expect(EVENT_LOOP_SAMPLE_MS).toBe(100);
    expect(monitor).toHaveBeenCalledWith({ resolution: EVENT_LOOP_SAMPLE_MS });
    expect(await metrics.registry.metrics()).toContain('pitcrew_nodejs_eventloop_lag_p99_seconds');
  });
});
