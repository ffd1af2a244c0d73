import { describe, expect, it } from 'vitest';
import type { CronTrigger, TickPlan } from '../rules/cron.js';
import { tickTurn } from './scheduler.js';

const trigger = (overlap?: 'skip' | 'queue' | 'allow'): CronTrigger => ({ type: 'cron', schedule: '* * * * *', ...(overlap ? { overlap } : {}) });
const due = (run: number): TickPlan => ({ run, missed: undefined, next: run + 60_000 });
const running = { id: 'x1', state: 'running' };
const T = Date.parse('2026-11-25T10:00:00Z');

describe('tickTurn (overlap)', () => {
  it('runs a due tick when nothing runs, whatever the policy', () => {
    for (const overlap of ['skip', 'queue', 'allow'] as const) expect(tickTurn(trigger(overlap), due(T), null, undefined)).toMatchObject({ runs: true, skipped: undefined, waiting: null, released: undefined });
  });

  it('skip records the tick, allow runs it, queue makes it wait', () => {
    expect(tickTurn(trigger(), due(T), null, running)).toMatchObject({ runs: false, skipped: expect.stringMatching(/^overlap: the previous run \(execution x1, running\) has not ended, and the rule skips/), waiting: null });
    expect(tickTurn(trigger('allow'), due(T), null, running)).toMatchObject({ runs: true, skipped: undefined });
    expect(tickTurn(trigger('queue'), due(T), null, running)).toMatchObject({ runs: false, skipped: undefined, waiting: T });
  });

  it('queue keeps one tick waiting: another that comes meanwhile is recorded', () => {
    const turn = tickTurn(trigger('queue'), due(T + 60_000), T, running);
    expect(turn).toMatchObject({ runs: false, waiting: T, released: undefined });
    expect(turn.skipped).toMatch(/the tick of 2026-11-25T10:00:00.000Z already waits for it; the rule keeps one tick waiting/);
  });

  it('lets the waiting tick run once the run ended; a tick due at once then waits behind it', () => {
    expect(tickTurn(trigger('queue'), undefined, T, undefined)).toMatchObject({ released: T, waiting: null, runs: false });
    expect(tickTurn(trigger('queue'), undefined, T, running)).toMatchObject({ released: undefined, waiting: T });
    expect(tickTurn(trigger('queue'), due(T + 60_000), T, undefined)).toMatchObject({ released: T, runs: false, waiting: T + 60_000 });
  });
});
