import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { PitcrewError } from '../../errors/catalogue.js';
import { PageQuery, pageOf, problems } from '../../http/schemas.js';
import type { Api } from '../../http/types.js';
import { MAX_LIMIT, pageRequest, toPage } from '../../store/pagination.js';
import type { Database } from '../../store/schema.js';
import { access } from '../access.js';
import { AuditEntryView, presentAuditEntry } from './entry.js';
import { listAudit, type AuditFilter } from './repository.js';

const tags = ['audit'];
const Filters = {
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: "a user's id or e-mail, or a token's or API key's id" })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a target type (rule), or type:id (rule:0190…)' })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z_]+(\\.[a-z_]*)?$', description: 'an action (rule.update), or a prefix ending in a dot (rule.)' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or before this time' })),
};
const FilterQuery = Type.Object(Filters, { additionalProperties: false });

/** The audit log, read only: no route updates or deletes an entry (retention alone removes old ones). */
export function registerAuditRoutes(app: Api, { db }: { db: Kysely<Database> }): void {
  app.get('/audit', {
    schema: {
      tags, ...access('admin'), summary: 'Who changed what, when, from where: the audit log, newest first, filtered',
      querystring: Type.Object({ ...PageQuery, ...Filters }, { additionalProperties: false }),
      response: { 200: pageOf(AuditEntryView), ...problems(400, 401, 403) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await listAudit(db, request.principal.tenantId, filterOf(request.query), page), page, presentAuditEntry);
  });

  app.get('/audit/export', {
    schema: {
      tags, ...access('admin'), summary: 'Every entry the filters match, oldest first, as JSON lines (application/x-ndjson), streamed',
      querystring: FilterQuery, produces: ['application/x-ndjson'], response: { ...problems(400, 401, 403) },
    },
  }, async (request, reply) => {
    const filter = filterOf(request.query);
    return reply.type('application/x-ndjson').header('content-disposition', 'attachment; filename="pitcrew-audit.jsonl"')
      .send(Readable.from(exportLines(db, request.principal.tenantId, filter)));
  });
}

/** Pages of MAX_LIMIT entries read one after the other: memory stays flat whatever the log holds. */
async function* exportLines(db: Kysely<Database>, tenantId: string, filter: AuditFilter): AsyncGenerator<string> {
  let after: string | undefined;
  for (;;) {
    const rows = await listAudit(db, tenantId, filter, { limit: MAX_LIMIT, after }, 'asc');
    const kept = rows.slice(0, MAX_LIMIT);
    if (kept.length > 0) yield kept.map((row) => `${JSON.stringify(presentAuditEntry(row))}\n`).join('');
    if (rows.length <= MAX_LIMIT) return;
    after = kept.at(-1)!.id;
  }
}

function filterOf(query: Static<typeof FilterQuery>): AuditFilter {
  const from = query.from === undefined ? undefined : Date.parse(query.from);
  const to = query.to === undefined ? undefined : Date.parse(query.to);
  if (from !== undefined && to !== undefined && from > to) {
    throw new PitcrewError('PITCREW_ERR_VALIDATION', 'from is later than to: no entry can match; swap them', { fieldErrors: [{ path: '/querystring/from', message: 'must be at or before to' }] });
  }
  return { actor: query.actor, target: query.target, action: query.action, from, to };
}
