import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { accessOrSignedLink } from '../identity/access.js';
import type { Database } from '../store/schema.js';
import type { Kysely } from 'kysely';
import { findSnapshot, getSnapshot } from './repository.js';
import { checkLink } from './signed-link.js';

const tags = ['snapshots'];

export interface SnapshotRouteDeps {
  db: Kysely<Database>;
  /** The key signed links are checked with (signed-link.ts). */
  linkKey: Buffer;
  clock: () => number;
}

export function registerSnapshotRoutes(app: Api, deps: SnapshotRouteDeps): void {
  app.get('/snapshots/:id', {
    schema: {
      tags, ...accessOrSignedLink('viewer'),
      summary: 'A graph snapshot’s image: with the management API’s authentication, or by a signed link (?exp=&sig=, no session)',
      params: IdParams,
      querystring: Type.Object({
        exp: Type.Optional(Type.String({ maxLength: 20, description: 'signed link: until when it opens (epoch seconds)' })),
        sig: Type.Optional(Type.String({ maxLength: 100, description: 'signed link: its signature' })),
      }, { additionalProperties: false }),
      produces: ['image/png', 'image/svg+xml'], response: { ...problems(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const { sig, exp } = request.query;
    const snapshot = sig === undefined ? await getSnapshot(deps.db, request.principal.tenantId, id) : await bySignedLink(deps, id, sig, exp);
    return reply
      .type(snapshot.content_type)
      // A signed link's image may sit in a mail client's or chat's cache; nothing shared keeps it.
      .header('Cache-Control', 'private, max-age=300')
      .header('X-Content-Type-Options', 'nosniff')
      // An SVG opened on its own runs no script.
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(Buffer.from(snapshot.image));
  });
}

async function bySignedLink(deps: SnapshotRouteDeps, id: string, sig: string, exp: string | undefined) {
  const snapshot = await findSnapshot(deps.db, id);
  // An unknown id answers as a wrong signature: a link tells nothing of which snapshots exist.
  const check = snapshot ? checkLink(deps.linkKey, { tenantId: snapshot.tenant_id, snapshotId: id }, exp, sig, deps.clock()) : 'wrong';
  if (check === 'expired') throw new PitcrewError('PITCREW_ERR_LINK_INVALID', 'this snapshot link has expired; open the execution in pitcrew (signed in) to see the snapshot');
  if (check === 'wrong' || !snapshot) throw new PitcrewError('PITCREW_ERR_LINK_INVALID', 'this snapshot link is not valid (altered or cut short); open the execution in pitcrew (signed in) to see the snapshot');
  return snapshot;
}

