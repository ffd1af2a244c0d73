// `--import` of a worker thread started from the TypeScript sources (test/support/render-worker.ts).
import { register } from 'node:module';

register('./ts-worker-hooks.mjs', import.meta.url);
