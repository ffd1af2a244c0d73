import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { problems } from '../../http/schemas.js';
import { access } from '../../identity/access.js';
import type { Api } from '../../http/types.js';
import type { Database } from '../../store/schema.js';
import { presentRunbook } from '../routes.js';
import { RunbookSaved } from '../schema.js';
import { installRunbook } from './install.js';
import type { LibraryEntry, RunbookLibrary } from './library.js';
import { InstallInput, LibraryEntryView, LibraryItem, SlugParams } from './schema.js';

const tags = ['runbooks'];

export interface RunbookLibraryRouteDeps {
  db: Kysely<Database>;
  library: RunbookLibrary;
  clock?: () => number;
}

/** The starter library shipped with pitcrew (docs/runbooks.md#starter-library): browse it, install a copy in the tenant's store. */
export function registerRunbookLibraryRoutes(app: Api, { db, library, clock = Date.now }: RunbookLibraryRouteDeps): void {
  app.get('/runbook-library', {
    schema: {
      tags, ...access('viewer'), summary: 'List the starter runbooks shipped with pitcrew, without their scripts',
      response: { 200: Type.Object({ items: Type.Array(LibraryItem) }), ...problems(401) },
    },
  }, async () => ({ items: library.entries.map(presentItem) }));

  app.get('/runbook-library/:slug', {
    schema: {
      tags, ...access('viewer'), summary: 'Get a starter runbook whole, script included',
      params: SlugParams, response: { 200: LibraryEntryView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const entry = library.get(request.params.slug);
    return { ...presentItem(entry), script: entry.script };
  });

  app.post('/runbook-library/:slug/install', {
    schema: {
      tags, ...access('admin'),
      summary: "Install a starter runbook: save a copy in the tenant's runbook store as its version 1, under its library name or `name`",
      params: SlugParams, body: InstallInput, response: { 201: RunbookSaved, ...problems(400, 401, 404, 409) },
    },
    // No body at all (curl -X POST …/install) installs under the library name, as `{}` does.
    preValidation: async (request) => {
      request.body ??= {};
    },
  }, async (request, reply) => {
    const entry = library.get(request.params.slug);
    const saved = await installRunbook(db, request.principal.tenantId, entry, request.body.name, { by: request.principal.tokenId ?? request.principal.userId, now: clock() });
    return reply.code(201).header('Location', `/api/v1/runbooks/${saved.runbook.id}`).send({ ...presentRunbook(saved), versionCreated: true });
  });
}

function presentItem(entry: LibraryEntry): LibraryItem {
  return { slug: entry.slug, name: entry.name, description: entry.description, interpreter: entry.interpreter, env: entry.env, sha256: entry.sha256 };
}
