import { parentPort } from 'node:worker_threads';
import { renderPng, type ChartRequest, type RenderedGraph } from './render.js';

/*
 * The chart renderer's thread (snapshots/render-pool.ts): ECharts lays a picture out and resvg
 * rasterises it here, off the event loop the alert ingest shares. One picture at a time; the PNG's
 * bytes are handed back without a copy.
 */

export interface RenderJob {
  request: ChartRequest;
}

export type RenderAnswer = { graph: RenderedGraph } | { error: string };

const port = parentPort;
if (!port) throw new Error('snapshots/render-worker.js runs as a worker thread of the chart renderer (snapshots/render-pool.ts), not on its own');

port.on('message', (job: RenderJob) => {
  void answer(job).then(([message, transfer]) => port.postMessage(message, transfer));
});

async function answer(job: RenderJob): Promise<[RenderAnswer, ArrayBuffer[]]> {
  try {
    const graph = await renderPng(job.request);
    return [{ graph }, [graph.bytes.buffer as ArrayBuffer]];
  } catch (error) {
    return [{ error: error instanceof Error ? error.message : String(error) }, []];
  }
}
