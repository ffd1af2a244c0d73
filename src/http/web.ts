import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { notFoundHandler } from './problem.js';
import type { Api } from './types.js';

/** Whether `webRoot` holds a built UI (web/dist after `npm run build`). */
export function isWebUiBuilt(webRoot: string | undefined): webRoot is string {
  return webRoot !== undefined && fs.existsSync(path.join(webRoot, 'index.html'));
}

/**
 * Serves the single-page app's files at `/`. Vite names assets by content hash, so they are
 * cached for a year; index.html is revalidated on every load so a new release shows at once.
 * Gzip and Brotli copies written at build time are sent to clients that accept them.
 */
export async function registerWebUi(app: Api, webRoot: string): Promise<void> {
  await app.register(fastifyStatic, {
    root: webRoot,
    prefix: '/',
    preCompressed: true,
    setHeaders: (reply, filePath) => {
      const immutable = filePath.includes(`${path.sep}assets${path.sep}`);
      reply.header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}

/**
 * Client routes (/rules/…, /hosts) are the app's pages: a browser asking for one gets index.html
 * and the app's router takes over. Everything else keeps the API's 404, as problem+json, so a
 * mistyped /api/ URL or a missing asset never answers with a page.
 */
export function spaFallback(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (isPageRequest(request)) return reply.header('Cache-Control', 'no-cache').sendFile('index.html');
  return notFoundHandler(request, reply);
}

function isPageRequest(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const pathname = request.url.split('?')[0]!;
  if (pathname.startsWith('/api/') || pathname === '/api' || pathname.startsWith('/assets/')) return false;
  return (request.headers.accept ?? '').includes('text/html');
}
