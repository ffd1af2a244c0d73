import { afterEach, describe, expect, it } from 'vitest';
import { RENDER_DEFAULTS, type RenderSettings } from '../config/config.js';
import { PitcrewError } from '../errors/catalogue.js';
import type { GraphSeries } from '../integrations/graph-source.js';
import { EXHAUSTING_RENDER_WORKER, EXHAUSTING_TITLE, SOURCE_RENDER_WORKER } from '../../test/support/render-worker.js';
import { renderPng, type ChartRequest } from './render.js';
import { RenderPool, type RenderWorkerEntry } from './render-pool.js';

const START = Date.UTC(2026, 10, 28, 20, 0);
const STEP = 15_000;

function wave(instance: string, points: number): GraphSeries {
  return { name: `{instance="${instance}"}`, labels: { instance }, points: Array.from({ length: points }, (_, i): [number, number] => [START + i * STEP, 50 + 30 * Math.sin(i / 20)]) };
}

/** `points` points spread over the window `request` draws. */
function dense(instance: string, points: number): GraphSeries {
  const step = (240 * STEP) / points;
  return { name: `{instance="${instance}"}`, labels: { instance }, points: Array.from({ length: points }, (_, i): [number, number] => [START + i * step, 50 + 30 * Math.sin(i / 20_000)]) };
}

function request(title: string, points = 240): ChartRequest {
  return { title, series: [wave('web-1', points)], threshold: 95, from: START, to: START + 240 * STEP, startedAt: START + 120 * STEP, width: 720, height: 300 };
}

async function failure(drawing: Promise<unknown>): Promise<PitcrewError> {
  const error = await drawing.then(() => undefined, (reason: unknown) => reason);
  if (!(error instanceof PitcrewError)) throw new Error(`expected a PitcrewError, got ${String(error)}`);
  return error;
}

const pools: RenderPool[] = [];
function pool(settings: Partial<RenderSettings> = {}, entry: RenderWorkerEntry = SOURCE_RENDER_WORKER): RenderPool {
  const made = new RenderPool({ ...RENDER_DEFAULTS, ...settings }, entry);
  pools.push(made);
  return made;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('RenderPool', () => {
  it('draws in a worker thread the very PNG the renderer draws in process', async () => {
    const drawn = await pool().renderPng(request('node_load1 > 95'));
    const here = await renderPng(request('node_load1 > 95'));
    expect([drawn.contentType, drawn.width, drawn.height]).toEqual([here.contentType, here.width, here.height]);
    expect(Buffer.from(drawn.bytes).equals(Buffer.from(here.bytes))).toBe(true);
  });

  it('draws pictures asked at once one after another on its one thread, each its own', async () => {
    const renderer = pool({ workers: 1, maxQueued: 4 });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((title) => renderer.renderPng(request(title))));
    expect(Buffer.from(a!.bytes).equals(Buffer.from(b!.bytes))).toBe(false);
    expect(Buffer.from(b!.bytes).equals(Buffer.from(c!.bytes))).toBe(false);
    expect(Buffer.from(c!.bytes).equals(Buffer.from((await renderPng(request('c'))).bytes))).toBe(true);
  });

  it('refuses a picture beyond its queue at once, naming the setting, and draws the ones it took', async () => {
    const renderer = pool({ workers: 1, maxQueued: 1 });
    const drawing = renderer.renderPng(request('first'));
    const waiting = renderer.renderPng(request('second'));
    const refused = await failure(renderer.renderPng(request('third')));
    expect(refused.code).toBe('PITCREW_ERR_THROTTLED');
    expect(refused.message).toContain('the graph "third" was not drawn: 1 graphs already wait for the chart renderer (PITCREW_SNAPSHOT_RENDER_QUEUE)');
    expect((await drawing).width).toBe(720);
    expect((await waiting).width).toBe(720);
    expect(renderer.capacity).toBe(2);
  });

  it('drops a waiting picture whose capture was stopped, without drawing it', async () => {
    const renderer = pool({ workers: 1, maxQueued: 2 });
    const stop = new AbortController();
    const drawing = renderer.renderPng(request('first'));
    const waiting = renderer.renderPng(request('stopped'), stop.signal);
    stop.abort(new Error('the capture timed out'));
    await expect(waiting).rejects.toThrow('the capture timed out');
    expect((await drawing).width).toBe(720);
  });

  it('fails only the picture whose thread ran out of memory, saying so, and draws the next on a new thread', { timeout: 60_000 }, async () => {
    const renderer = pool({ workers: 1, maxHeapMb: 64 }, EXHAUSTING_RENDER_WORKER);
    const died = await failure(renderer.renderPng(request(EXHAUSTING_TITLE)));
    expect(died.code).toBe('PITCREW_ERR_INTERNAL');
    expect(died.message).toBe(`the chart renderer stopped while drawing the graph "${EXHAUSTING_TITLE}": it ran out of its 64 MB of memory (PITCREW_SNAPSHOT_RENDER_HEAP_MB); the graph was not drawn, and a new renderer thread draws the next one`);
    const next = await renderer.renderPng(request('after'));
    expect(Buffer.from(next.bytes).equals(Buffer.from((await renderPng(request('after'))).bytes))).toBe(true);
  });

  it('draws a series far past its thread\'s memory as the picture shows it: what it hands the thread is bounded by the picture', { timeout: 60_000 }, async () => {
    const renderer = pool({ workers: 1, maxHeapMb: 64 });
    // Two million points, ~130 MB as JavaScript arrays: handed whole to a 64 MB thread, the message
    // alone exhausted its heap as it arrived, and that ended the process (Node 24), not the thread.
    const huge = { ...request('huge'), series: [dense('web-1', 2_000_000), ...Array.from({ length: 20 }, (_, i) => wave(`web-${i + 2}`, 240))] };
    const drawn = await renderer.renderPng(huge);
    expect(Buffer.from(drawn.bytes).equals(Buffer.from((await renderPng(huge)).bytes))).toBe(true);
    expect(drawn.height).toBe(300 + 10 * 18);
  });

  it('fails the pictures drawing and waiting when it is closed, and those asked after, as the service stops', async () => {
    const renderer = pool({ workers: 1, maxQueued: 1 });
    const drawing = failure(renderer.renderPng(request('drawing')));
    const waiting = failure(renderer.renderPng(request('waiting')));
    await renderer.close();
    expect((await drawing).message).toBe('the service is stopping: the graph "drawing" was not drawn');
    expect((await waiting).message).toBe('the service is stopping: the graph "waiting" was not drawn');
    const refused = await failure(renderer.renderPng(request('late')));
    expect(refused.code).toBe('PITCREW_ERR_STOPPING');
  });
});
