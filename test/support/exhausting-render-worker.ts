import { parentPort } from 'node:worker_threads';
import type { RenderJob } from '../../src/snapshots/render-worker.js';
import '../../src/snapshots/render-worker.js';
import { EXHAUSTING_TITLE } from './render-worker.js';

/*
 * The chart renderer's thread (it draws as the real one does), but the picture titled
 * EXHAUSTING_TITLE asks for memory without end, in JavaScript, as a renderer with a runaway
 * layout would: its thread runs out of its heap while drawing (render-pool.test.ts).
 */
parentPort!.on('message', ({ request }: RenderJob) => {
  if (request.title !== EXHAUSTING_TITLE) return;
  const held: number[][] = [];
  for (;;) held.push(new Array<number>(100_000).fill(held.length));
});
