import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestEnv, type TestEnv } from './support/app.js';
import { waitFor } from './support/wait.js';

// The notifier's loop under a stream of wake-ups (every ledger batch that ends executions wakes it).
describe("the notifier's loop", () => {
  const SPACING_MS = 300;
  let env: TestEnv;
  const passes: Array<{ start: number; end: number }> = [];

  beforeAll(async () => {
    env = await startTestEnv('sqlite', { notify: { pollMs: 60_000, passSpacingMs: SPACING_MS } });
    const notifier = env.app.context.notifier;
    const pass = notifier.pass.bind(notifier);
    vi.spyOn(notifier, 'pass').mockImplementation(async () => {
      const record = { start: performance.now(), end: Number.NaN };
      passes.push(record);
      await pass();
      record.end = performance.now();
    });
  });
  afterAll(() => env.close());

  it('spaces its passes: wake-ups in between share the next pass', async () => {
    const notifier = env.app.context.notifier;
    notifier.wake();
    await waitFor(() => passes.length > 0 && !Number.isNaN(passes.at(-1)!.end), 'a first pass');
    const before = passes.length;
    for (let i = 0; i < 20; i += 1) notifier.wake();
    await waitFor(() => passes.length > before && !Number.isNaN(passes.at(-1)!.end), 'the pass the wake-ups asked for');
    const [previous, next] = [passes[before - 1]!, passes[before]!];
    expect(next.start - previous.end).toBeGreaterThanOrEqual(SPACING_MS - 1);
  });
});
