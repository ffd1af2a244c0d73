import { describe, expect, it } from 'vitest';
import { RenderPool } from '../../snapshots/render-pool.js';
import { SnapshotRunner, type SnapshotRunnerDeps } from './runner.js';

describe('SnapshotRunner.admit', () => {
  it('runs as many captures at once as the renderer takes pictures (threads and queue); the others stay queued until one ends', () => {
    const render = new RenderPool({ workers: 2, maxQueued: 1, maxHeapMb: 256 });
    // Admission reads nothing but the renderer's capacity: the other dependencies are not reached.
    const runner = new SnapshotRunner({ render } as unknown as SnapshotRunnerDeps);
    const places = [runner.admit(), runner.admit(), runner.admit()];
    expect(places.every((release) => typeof release === 'function')).toBe(true);
    expect(runner.admit()).toBeUndefined();
    places[0]!();
    places[0]!();
    const again = runner.admit();
    expect(again).toBeTypeOf('function');
    expect(runner.admit()).toBeUndefined();
  });
});
