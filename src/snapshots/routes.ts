import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, problems } from '../http/schemas.js';
import type { Api } from '../http/types.js';
import { access, accessOrSignedLink } from '../identity/access.js';
import { audited, notAudited } from '../identity/audit/naming.js';
import { baseUrl } from '../http/types.js';
import type { CapturedImage, SnapshotPreviewRequest } from './preview.js';
import type { Database } from '../store/schema.js';
import type { Kysely } from 'kysely';
import { findSnapshot, getSnapshot, getSnapshotMeta, latestSnapshotsOfRule } from './repository.js';
import { presentSnapshot, SnapshotView } from './presenter.js';
import { checkLink, linkQuery } from './signed-link.js';

const tags = ['snapshots'];

export interface SnapshotRouteDeps {
  db: Kysely<Database>;
  /** The key signed links are checked with (signed-link.ts). */
  linkKey: Buffer;
  clock: () => number;
  /** How long a link made for the UI opens by default, as a chat notification's (PITCREW_SNAPSHOT_LINK_DAYS). */
  linkDays: number;
  publicUrl: string | undefined;
  /** The wizard's Preview: the capture of graph_snapshot executions (actions/snapshot/runner.ts), not stored. */
  preview: (tenantId: string, request: SnapshotPreviewRequest, signal: AbortSignal) => Promise<CapturedImage[]>;
}

const PreviewInput = Type.Object({
  integrationId: Type.String({ format: 'uuid', description: 'the integration whose tool is read' }),
  graphs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 10, description: 'the queries or panels, in the tool’s terms; none: the tool’s default (an alert’s own expression has no alert to come from here)' })),
  windowMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, default: 60, description: 'how far back from now' })),
}, { additionalProperties: false });

const PreviewImage = Type.Object({
  title: Type.String(),
  query: Type.String(),
  contentType: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  bytes: Type.Integer(),
  dataUrl: Type.String({ description: 'the image as a data: URL, for an <img> (nothing is stored)' }),
});

/** A preview is the people editing rules seeing a picture, not a capture: a minute of wait at most. */
const PREVIEW_TIMEOUT_MS = 60_000;

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
  registerPreview(app, deps);
  registerRuleList(app, deps);
  registerLink(app, deps);
}

const LinkInput = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, description: 'how long the link opens; default PITCREW_SNAPSHOT_LINK_DAYS (7), as in chat notifications' })),
}, { additionalProperties: false });

const LinkView = Type.Object({
  signedUrl: Type.String({ description: 'the image, without a session, until expiresAt: whoever holds it can open this one picture (masked in the audit log)' }),
  expiresAt: Type.String({ format: 'date-time' }),
});

/** A signed link made on demand (the UI's Copy link): what a chat notification carries, for one snapshot of the caller's tenant. */
function registerLink(app: Api, deps: SnapshotRouteDeps): void {
  app.post('/snapshots/:id/link', {
    schema: {
      tags, ...access('viewer'), ...audited('snapshot.link'),
      summary: 'A signed link to a graph snapshot’s image (?exp=&sig=), to share with people who are not signed in; it opens that picture alone until it expires',
      params: IdParams, body: Type.Optional(LinkInput), response: { 200: LinkView, ...problems(400, 401, 403, 404) },
    },
    config: { auditBefore: async (request) => presentSnapshot(await getSnapshotMeta(deps.db, request.principal.tenantId, (request.params as { id: string }).id)) },
  }, async (request) => {
    const snapshot = await getSnapshotMeta(deps.db, request.principal.tenantId, request.params.id);
    const expiresAt = Math.floor(deps.clock() / 1000) + (request.body?.days ?? deps.linkDays) * 86_400;
    const query = linkQuery(deps.linkKey, { tenantId: snapshot.tenant_id, snapshotId: snapshot.id }, expiresAt);
    return { signedUrl: `${baseUrl(deps.publicUrl, request)}/api/v1/snapshots/${snapshot.id}?${query}`, expiresAt: new Date(expiresAt * 1000).toISOString() };
  });
}

function registerRuleList(app: Api, deps: SnapshotRouteDeps): void {
  app.get('/snapshots', {
    schema: {
      tags, ...access('viewer'), summary: 'The latest graph snapshots of a rule’s executions, newest first (the rule page’s pictures)',
      querystring: Type.Object({
        ruleId: Type.String({ format: 'uuid' }),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ items: Type.Array(SnapshotView) }), ...problems(400, 401) },
    },
  }, async (request) => {
    const rows = await latestSnapshotsOfRule(deps.db, request.principal.tenantId, request.query.ruleId, request.query.limit ?? 20);
    return { items: rows.map(presentSnapshot) };
  });
}

function registerPreview(app: Api, deps: SnapshotRouteDeps): void {
  app.post('/snapshots/preview', {
    schema: {
      tags, ...access('admin'),
      ...notAudited('a preview: the tool is read, nothing is stored or changed'),
      summary: 'Capture graphs now, as a graph_snapshot action would, over the last windowMinutes, without storing them (the rule wizard’s Preview)',
      body: PreviewInput, response: { 200: Type.Object({ images: Type.Array(PreviewImage) }), ...problems(400, 401, 403, 404, 502) },
    },
  }, async (request) => {
    const { integrationId, graphs = [], windowMinutes = 60 } = request.body;
    const images = await deps.preview(request.principal.tenantId, { integrationId, graphs, windowMinutes }, AbortSignal.timeout(PREVIEW_TIMEOUT_MS));
    return {
      images: images.map((image) => ({
        title: image.title, query: image.query, contentType: image.contentType, width: image.width, height: image.height, bytes: image.bytes.byteLength,
        dataUrl: `data:${image.contentType};base64,${Buffer.from(image.bytes).toString('base64')}`,
      })),
    };
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

