import { Worker } from 'node:worker_threads';
import type { RenderSettings } from '../config/config.js';
import { PitcrewError } from '../errors/catalogue.js';
import { drawable } from './chart.js';
import type { ChartRequest, RenderedGraph } from './render.js';
import type { RenderAnswer, RenderJob } from './render-worker.js';

/** Where a rendering thread's code is: the built render-worker.js beside this file, unless a test runs the sources. */
export interface RenderWorkerEntry {
  url: URL;
  execArgv?: string[];
}

export const RENDER_WORKER: RenderWorkerEntry = { url: new URL('./render-worker.js', import.meta.url) };

interface Waiting {
  request: ChartRequest;
  signal: AbortSignal | undefined;
  resolve(graph: RenderedGraph): void;
  reject(error: unknown): void;
}

/**
 * Pictures drawn off the event loop (docs/graph-snapshots.md, "Rendering"): ECharts and resvg take
 * 40-50 ms of CPU a picture, which on the main thread would hold up the alert ingest beside it.
 * `workers` threads (started on the first picture, so the service starts without ECharts) draw one
 * picture each at a time; at most `maxQueued` pictures wait for one. A thread that dies (out of its
 * memory, a crash) fails only the picture it was drawing, and the next picture gets a new thread.
 */
export class RenderPool {
  private readonly idle: RenderThread[] = [];
  private readonly threads = new Set<RenderThread>();
  private readonly waiting: Waiting[] = [];
  private closed = false;

  constructor(
    private readonly settings: RenderSettings,
    private readonly entry: RenderWorkerEntry = RENDER_WORKER,
  ) {}

  /** The most pictures this pool takes at once: drawing, and waiting for a thread. */
  get capacity(): number {
    return this.settings.workers + this.settings.maxQueued;
  }

  renderPng(request: ChartRequest, signal?: AbortSignal): Promise<RenderedGraph> {
    if (this.closed) return Promise.reject(new PitcrewError('PITCREW_ERR_STOPPING', `the service is stopping: the graph "${request.title}" was not drawn`));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.idle.length === 0 && this.threads.size >= this.settings.workers && this.waiting.length >= this.settings.maxQueued) {
      return Promise.reject(new PitcrewError('PITCREW_ERR_THROTTLED', `the graph "${request.title}" was not drawn: ${this.waiting.length} graphs already wait for the chart renderer (PITCREW_SNAPSHOT_RENDER_QUEUE); try again in a moment`));
    }
    return new Promise<RenderedGraph>((resolve, reject) => {
      const job: Waiting = { request, signal, resolve, reject };
      this.waiting.push(job);
      signal?.addEventListener('abort', () => this.drop(job), { once: true });
      this.pump();
    });
  }

  /** Ends every thread; pictures waiting or being drawn fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new PitcrewError('PITCREW_ERR_STOPPING', `the service is stopping: the graph "${job.request.title}" was not drawn`));
    this.idle.length = 0;
    await Promise.all([...this.threads].map((thread) => thread.end()));
    this.threads.clear();
  }

  private drop(job: Waiting): void {
    const at = this.waiting.indexOf(job);
    if (at < 0) return;
    this.waiting.splice(at, 1);
    job.reject(job.signal?.reason);
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      const thread = this.idle.pop() ?? this.spawn();
      if (!thread) return;
      void this.draw(thread, this.waiting.shift()!);
    }
  }

  private spawn(): RenderThread | undefined {
    if (this.closed || this.threads.size >= this.settings.workers) return undefined;
    const thread = new RenderThread(this.entry, this.settings.maxHeapMb);
    this.threads.add(thread);
    return thread;
  }

  private async draw(thread: RenderThread, job: Waiting): Promise<void> {
    try {
      job.resolve(await thread.render(job.request, job.signal));
    } catch (error) {
      job.reject(error);
    } finally {
      if (thread.alive && !this.closed) this.idle.push(thread);
      else this.threads.delete(thread);
      this.pump();
    }
  }
}

interface Drawing {
  title: string;
  resolve(graph: RenderedGraph): void;
  reject(error: unknown): void;
}

/** One worker thread, drawing one picture at a time; once dead, never used again. */
class RenderThread {
  alive = true;
  private readonly worker: Worker;
  private drawing: Drawing | undefined;

  constructor(entry: RenderWorkerEntry, private readonly maxHeapMb: number) {
    this.worker = new Worker(entry.url, { execArgv: entry.execArgv ?? [], resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } });
    // An idle thread keeps no process alive; one drawing does (render() refs it).
    this.worker.unref();
    this.worker.on('message', (answer: RenderAnswer) => this.answered(answer));
    this.worker.on('error', (error) => this.died(this.errorReason(error)));
    this.worker.on('exit', (code) => this.died(`its worker thread exited (code ${code})`));
  }

  render(request: ChartRequest, signal: AbortSignal | undefined): Promise<RenderedGraph> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const onAbort = () => {
      this.fail(signal?.reason);
      void this.end();
    };
    return new Promise<RenderedGraph>((resolve, reject) => {
      this.drawing = { title: request.title, resolve, reject };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.worker.ref();
      // Only what the picture shows: a message past the thread's heap aborts the process as it arrives.
      this.worker.postMessage({ request: drawable(request) } satisfies RenderJob);
    }).finally(() => {
      signal?.removeEventListener('abort', onAbort);
      if (this.alive) this.worker.unref();
    });
  }

  /** Ends the thread; a picture it was drawing fails as the service's stop (a stopped capture's is already settled). */
  async end(): Promise<void> {
    this.alive = false;
    const drawing = this.take();
    drawing?.reject(new PitcrewError('PITCREW_ERR_STOPPING', `the service is stopping: the graph "${drawing.title}" was not drawn`));
    await this.worker.terminate();
  }

  private answered(answer: RenderAnswer): void {
    const drawing = this.take();
    if (!drawing) return;
    if ('graph' in answer) drawing.resolve(answer.graph);
    else drawing.reject(new PitcrewError('PITCREW_ERR_INTERNAL', `the chart renderer could not draw the graph "${drawing.title}": ${answer.error}`));
  }

  private died(how: string): void {
    this.alive = false;
    const drawing = this.take();
    drawing?.reject(new PitcrewError('PITCREW_ERR_INTERNAL', `the chart renderer stopped while drawing the graph "${drawing.title}": ${how}; the graph was not drawn, and a new renderer thread draws the next one`));
  }

  private fail(reason: unknown): void {
    this.take()?.reject(reason);
  }

  private take(): Drawing | undefined {
    const drawing = this.drawing;
    this.drawing = undefined;
    return drawing;
  }

  private errorReason(error: Error): string {
    if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return `it ran out of its ${this.maxHeapMb} MB of memory (PITCREW_SNAPSHOT_RENDER_HEAP_MB)`;
    return `its worker thread failed: ${error.message}`;
  }
}
