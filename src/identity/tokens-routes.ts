import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from './access.js';
import type { Api } from '../http/types.js';
import { pageRequest, toPage } from '../store/pagination.js';
import type { Database, TokenRow } from '../store/schema.js';
import type { Principal } from './principal.js';
import { isRole, roleAtLeast } from './roles.js';
import { issueToken } from './tokens.js';
import { RoleSchema } from './views.js';

const tags = ['tokens'];
const TokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  userId: Type.Union([Type.String(), Type.Null()]),
  role: Type.Union([RoleSchema, Type.Null()], { description: "at most the user's role; null: the user's role, whatever it becomes" }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const NewToken = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  role: Type.Optional(RoleSchema),
  expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'after this the token stops working; absent: until revoked' })),
}, { additionalProperties: false });

/** Personal access tokens for the API and CLI (issue 37): each a member's, at most their role. */
export function registerTokenRoutes(app: Api, { db, clock }: { db: Kysely<Database>; clock: () => number }): void {
  app.get('/tokens', {
    schema: {
      tags, ...access('viewer'), summary: "Your personal access tokens, newest first (an admin may ask for everyone's: all=true); never the tokens themselves",
      querystring: Type.Object({ ...PageQuery, all: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: pageOf(TokenView), ...problems(400, 401, 403) },
    },
  }, async (request) => {
    const { principal } = request;
    if (request.query.all && !roleAtLeast(principal.role, 'admin')) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', "only an admin or owner sees everyone's tokens; leave out all=true to see yours");
    const page = pageRequest(request.query);
    let query = db.selectFrom('tokens').selectAll().where('tenant_id', '=', principal.tenantId);
    if (!request.query.all) query = query.where('user_id', '=', principal.userId);
    if (page.after) query = query.where('id', '<', page.after);
    return toPage(await query.orderBy('id', 'desc').limit(page.limit + 1).execute(), page, presentToken);
  });

  app.get('/tokens/:id', {
    schema: { tags, ...access('viewer'), summary: "A personal access token of yours (an admin: anyone's in the tenant); never the token itself", params: IdParams, response: { 200: TokenView, ...problems(400, 401, 403, 404) } },
  }, async (request) => presentToken(await tokenOf(db, request.principal, request.params.id, 'see')));

  app.post('/tokens', {
    schema: {
      tags, ...access('viewer'), summary: 'Issue yourself a personal access token, at most your role: the token is shown once',
      body: NewToken, response: { 201: Type.Object({ ...TokenView.properties, token: Type.String({ description: 'shown once; store it now' }) }), ...problems(400, 401, 403) },
    },
  }, async (request, reply) => {
    const { principal } = request;
    const now = clock();
    const { role, name } = request.body;
    if (role && !roleAtLeast(principal.role, role)) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `you act as ${principal.role}; a token can have at most that role, not ${role}`);
    const expiresAt = request.body.expiresAt === undefined ? undefined : Date.parse(request.body.expiresAt);
    if (expiresAt !== undefined && expiresAt <= now) throw new PitcrewError('PITCREW_ERR_VALIDATION', 'expiresAt is in the past; give a time to come', { fieldErrors: [{ path: '/body/expiresAt', message: 'must be in the future' }] });
    // A token used to issue a token passes on its own limit: the new one can be no more than it.
    const narrowed = role ?? (principal.tokenId ? principal.role : undefined);
    const { id, token } = await issueToken(db, { tenantId: principal.tenantId, userId: principal.userId, name, role: narrowed, expiresAt }, now);
    const row = await db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    reply.code(201);
    return { ...presentToken(row), token };
  });

  app.delete('/tokens/:id', {
    schema: { tags, ...access('viewer'), summary: 'Revoke a personal access token (yours; an admin: anyone\'s in the tenant): it stops working at once', params: IdParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } },
  }, async (request, reply) => {
    const row = await tokenOf(db, request.principal, request.params.id, 'revoke');
    await db.updateTable('tokens').set({ revoked_at: clock() }).where('id', '=', row.id).where('revoked_at', 'is', null).execute();
    reply.code(204);
  });
}

/** A token of the tenant the caller may see or revoke: their own, or anyone's for an admin. */
async function tokenOf(db: Kysely<Database>, principal: Principal, id: string, doing: 'see' | 'revoke'): Promise<TokenRow> {
  const row = await db.selectFrom('tokens').selectAll().where('id', '=', id).where('tenant_id', '=', principal.tenantId).executeTakeFirst();
  if (!row) throw notFound('token', id);
  if (row.user_id !== principal.userId && !roleAtLeast(principal.role, 'admin')) throw new PitcrewError('PITCREW_ERR_FORBIDDEN', `this is another member's token; only an admin or owner can ${doing} it`);
  return row;
}

function presentToken(row: TokenRow) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id, name: row.name, userId: row.user_id, role: isRole(row.role) ? row.role : null,
    createdAt: iso(row.created_at)!, expiresAt: iso(row.expires_at), lastUsedAt: iso(row.last_used_at), revokedAt: iso(row.revoked_at),
  };
}
