import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { ping, type Store } from '../store/database.js';
import { sendProblem } from './problem.js';
import { problems } from './schemas.js';
import type { Api } from './types.js';

/** The readiness probe also says when the data directory's disk is below its reserve (store/disk-watch.ts). */
export function registerHealthRoutes(app: Api, store: Store, disk?: { refusal(): string | undefined }): void {
  app.get('/healthz', {
    schema: { tags: ['operations'], summary: 'Liveness: the process answers', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: {
      tags: ['operations'], summary: 'Readiness: storage answers',
      response: { 200: Type.Object({ status: Type.Literal('ready'), storage: Type.String() }), ...problems(503) },
    },
  }, async (request, reply) => {
    try {
      await ping(store);
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return sendProblem(reply, new PitcrewError('PITCREW_ERR_STORAGE_UNAVAILABLE', `the ${store.dialect} database at ${store.location} does not answer`));
    }
    const full = disk?.refusal();
    if (full) return sendProblem(reply, new PitcrewError('PITCREW_ERR_STORAGE_UNAVAILABLE', full));
    return { status: 'ready' as const, storage: store.dialect };
  });
}
