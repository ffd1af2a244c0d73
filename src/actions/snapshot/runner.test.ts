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

describe('SnapshotRunner.preview', () => {
  const request = { integrationId: 'int-1', graphs: [], windowMinutes: 60 };

  it('takes a place among the captures: refused with 429 when they fill the renderer, so it never fills the queue under an admitted capture', async () => {
    const render = new RenderPool({ workers: 1, maxQueued: 1, maxHeapMb: 256 });
    const runner = new SnapshotRunner({ render } as unknown as SnapshotRunnerDeps);
    const places = [runner.admit(), runner.admit()];
    await expect(runner.preview('t1', request, AbortSignal.timeout(1000))).rejects.toMatchObject({ code: 'PITCREW_ERR_THROTTLED', message: expect.stringMatching(/renderer is busy.*try the preview again/) });
    // The refusal took no place: one capture ending lets one more in, and only one.
    places[0]!();
    expect(runner.admit()).toBeTypeOf('function');
    expect(runner.admit()).toBeUndefined();
  });

  it('gives its place back when it fails', async () => {
    const render = new RenderPool({ workers: 1, maxQueued: 0, maxHeapMb: 256 });
    // No database: reading the integration fails, after the place was taken.
    const runner = new SnapshotRunner({ render } as unknown as SnapshotRunnerDeps);
    await expect(runner.preview('t1', request, AbortSignal.timeout(1000))).rejects.toThrow();
    expect(runner.admit()).toBeTypeOf('function');
  });
});
