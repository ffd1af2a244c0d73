import { describe, expect, it } from 'vitest';
import { isAhead } from './states.js';

describe('isAhead', () => {
  it('finds a state later on the lifecycle, however many steps away', () => {
    expect(isAhead('awaiting_approval', 'queued')).toBe(true);
    expect(isAhead('awaiting_approval', 'succeeded')).toBe(true);
    expect(isAhead('queued', 'running')).toBe(true);
  });

  it('refuses a state behind, the same state, and anything after an ending', () => {
    expect(isAhead('running', 'dispatched')).toBe(false);
    expect(isAhead('running', 'queued')).toBe(false);
    expect(isAhead('queued', 'awaiting_approval')).toBe(false);
    expect(isAhead('running', 'running')).toBe(false);
    expect(isAhead('succeeded', 'failed')).toBe(false);
  });

  it('takes an agent lost before it started as a way back to the queue', () => {
    expect(isAhead('dispatched', 'queued')).toBe(true);
  });
});
