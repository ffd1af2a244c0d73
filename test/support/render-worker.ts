import type { RenderWorkerEntry } from '../../src/snapshots/render-pool.js';

/**
 * The chart renderer's thread run from the TypeScript sources, as the tests import them: Vitest
 * transforms only its own module graph, so the thread compiles them with esbuild by module hooks
 * (ts-worker-hooks.mjs), the same code the build puts in dist/.
 */
export const SOURCE_RENDER_WORKER: RenderWorkerEntry = {
  url: new URL('../../src/snapshots/render-worker.ts', import.meta.url),
  execArgv: ['--import', new URL('./ts-worker-register.mjs', import.meta.url).href],
};

/** The picture exhausting-render-worker.ts runs out of memory on; it draws the others. */
export const EXHAUSTING_TITLE = 'exhausting';

/** The renderer's thread that runs out of its memory on the picture titled EXHAUSTING_TITLE. */
export const EXHAUSTING_RENDER_WORKER: RenderWorkerEntry = {
  url: new URL('./exhausting-render-worker.ts', import.meta.url),
  execArgv: SOURCE_RENDER_WORKER.execArgv,
};
