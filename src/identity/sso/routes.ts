import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../../errors/catalogue.js';
import { problems } from '../../http/schemas.js';
import { baseUrl, type Api } from '../../http/types.js';
import type { Store } from '../../store/database.js';
import type { Database } from '../../store/schema.js';
import { access } from '../access.js';
import { notAudited } from '../audit/naming.js';
import { appendAudit } from '../audit/repository.js';
import { recordSsoRefused } from '../audit/sign-ins.js';
import type { SecretBox } from '../secret-box.js';
import { isSecureRequest, setSessionCookies } from '../session-cookies.js';
import { startSession, type SessionPolicy } from '../sessions.js';
import { accountFor } from './accounts.js';
import { browserOf, tieBrowser, untieBrowser } from './browser-cookie.js';
import { OidcDiscoveryCache } from './discovery.js';
import type { OidcDeps } from './oidc.js';
import { presentProvider, startUrlOf } from './presenter.js';
import { createProvider, deleteProvider, findProvider, getProvider, idpOf, listProviders, updateProvider, type SsoProviderRow } from './providers.js';
import { samlMetadata, serviceProviderFor } from './saml.js';
import { assertedEmail } from './role-mapping.js';
import { SignInProviderSchema, SsoProviderInputSchema, SsoProviderPatchSchema, SsoProviderSchema } from './schema.js';
import { finishOidcSignIn, finishSamlSignIn, startSignIn, type SignInOutcome, type SsoDeps } from './sign-in.js';
import { safeReturnPath } from './urls.js';

export interface SsoRouteDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  box: SecretBox;
  sessions: SessionPolicy;
  publicUrl: string | undefined;
  clock: () => number;
  /** How the service reaches OpenID providers: the egress policy's fetch. */
  fetch?: OidcDeps['fetch'];
}

const tags = ['sso'];
const ProviderParams = Type.Object({ providerId: Type.String({ format: 'uuid' }) });
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const SAML_FORM_LIMIT = 1024 * 1024;

/** Single sign-on (issue 37.3, docs/identity.md "Single sign-on"): the sign-in flows, and the providers' settings. */
export function registerSsoRoutes(app: Api, deps: SsoRouteDeps): void {
  void app.register(async (scope) => {
    // The SAML HTTP-POST binding sends a form; only this scope reads forms.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: SAML_FORM_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    const discovery = new OidcDiscoveryCache(deps.clock);
    registerSignInFlows(scope as Api, deps, discovery);
    registerProviderSettings(scope as Api, deps, discovery);
  });
}

function registerSignInFlows(app: Api, deps: SsoRouteDeps, discovery: OidcDiscoveryCache): void {
  const { db } = deps.store;
  const sso: SsoDeps = { db, box: deps.box, now: deps.clock, fetch: deps.fetch, discovery };

  app.get('/auth/providers', {
    schema: {
      tags, ...access('public'), summary: "The tenant's single sign-on providers, for the sign-in page's buttons (tenant: its name or id; default \"default\")",
      querystring: Type.Object({ tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false }),
      response: { 200: Type.Object({ items: Type.Array(SignInProviderSchema), passwordSignIn: Type.Boolean({ description: 'false when the tenant requires single sign-on' }) }), ...problems(400) },
    },
  }, async (request) => {
    const wanted = request.query.tenant ?? 'default';
    const tenant = await db.selectFrom('tenants').select('id').where((eb) => eb.or([eb('id', '=', wanted), eb('name', '=', wanted)])).executeTakeFirst();
    const rows = tenant ? await listProviders(db, tenant.id) : [];
    return {
      items: rows.map((row) => ({ id: row.id, name: row.name, type: row.type, startUrl: startUrlOf(row.id) })),
      passwordSignIn: !rows.some((row) => row.required === 1),
    };
  });

  app.get('/auth/sso/:providerId/start', {
    schema: {
      tags, ...access('public'), summary: 'Start a single sign-on: redirects the browser to the identity provider (test=1: a test sign-in that shows the claims and role, and signs nobody in)',
      params: ProviderParams,
      querystring: Type.Object({
        returnTo: Type.Optional(Type.String({ maxLength: 2048, description: 'a path of this service to land on after signing in (default /)' })),
        test: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('true')])),
      }, { additionalProperties: false }),
    },
  }, async (request, reply) => {
    const row = await findProvider(db, request.params.providerId);
    if (!row) return toSignInPage(reply, 'this sign-in provider does not exist (any more); choose another on the sign-in page');
    try {
      const browser = tieBrowser(reply, row.type, isSecureRequest(request, deps.publicUrl));
      const url = await startSignIn(sso, row, baseUrl(deps.publicUrl, request), { returnTo: safeReturnPath(request.query.returnTo), test: request.query.test !== undefined, ...(browser ? { browser } : {}) });
      return reply.redirect(url, 302);
    } catch (error) {
      request.log.warn({ err: error, providerId: row.id }, 'single sign-on could not start');
      return toSignInPage(reply, `the identity provider "${row.name}" could not be reached or did not answer as an OpenID provider at its issuer URL; ask an admin to check the provider's settings`);
    }
  });

  app.get('/auth/sso/:providerId/callback', {
    schema: {
      tags, ...access('public'), summary: "The OpenID provider's answer (the redirect URI to register there): signs in and redirects, or shows a test sign-in's result",
      params: ProviderParams, querystring: Type.Record(Type.String(), Type.String()),
    },
  }, async (request, reply) => {
    const row = await findProvider(db, request.params.providerId);
    if (!row || row.type !== 'oidc') return toSignInPage(reply, 'this sign-in provider does not exist (any more); start again from the sign-in page');
    return complete(deps, request, reply, row, await finishOidcSignIn(sso, row, baseUrl(deps.publicUrl, request), request.query, browserOf(request)));
  });

  app.get('/auth/saml/:providerId/metadata', {
    schema: { tags, ...access('public'), summary: "This service's SAML service provider metadata, to load at the identity provider (its URL is also the SP entity id)", params: ProviderParams },
  }, async (request, reply) => {
    const row = await findProvider(db, request.params.providerId);
    if (!row || row.type !== 'saml') throw new PitcrewError('PITCREW_ERR_NOT_FOUND', `no SAML provider ${request.params.providerId}`);
    const xml = await samlMetadata(await idpOf(row), serviceProviderFor(baseUrl(deps.publicUrl, request), row.id));
    return reply.type('application/samlmetadata+xml').send(xml);
  });

  app.post('/auth/saml/:providerId/acs', {
    schema: {
      ...notAudited('a sign-in ends in a redirect, not a 2xx: complete() records session.start itself'),
      tags, ...access('public'), summary: "The SAML Assertion Consumer Service (HTTP-POST binding): the identity provider's signed answer; signs in and redirects, or shows a test sign-in's result",
      params: ProviderParams,
      body: Type.Object({ SAMLResponse: Type.String({ minLength: 1 }), RelayState: Type.Optional(Type.String()) }),
    },
  }, async (request, reply) => {
    const row = await findProvider(db, request.params.providerId);
    if (!row || row.type !== 'saml') return toSignInPage(reply, 'this sign-in provider does not exist (any more); start again from the sign-in page');
    const body = { SAMLResponse: request.body.SAMLResponse, ...(request.body.RelayState ? { RelayState: request.body.RelayState } : {}) };
    return complete(deps, request, reply, row, await finishSamlSignIn(sso, row, baseUrl(deps.publicUrl, request), body, browserOf(request)));
  });
}

/**
 * A checked answer's end: a test sign-in shows what came and what it maps to; a real one becomes
 * a session (creating the user when the provider allows) and lands on `returnTo`; a refusal
 * lands on the sign-in page with the reason.
 */
async function complete(deps: SsoRouteDeps, request: FastifyRequest, reply: FastifyReply, row: SsoProviderRow, outcome: SignInOutcome): Promise<FastifyReply> {
  if (browserOf(request)) untieBrowser(reply);
  if (outcome.test) {
    const { test: _test, returnTo: _returnTo, ...result } = outcome;
    return reply.code(200).send({ test: true, provider: { id: row.id, name: row.name, type: row.type }, ...result });
  }
  const now = deps.clock();
  const refuse = async (reason: string, email: string | undefined): Promise<FastifyReply> => {
    request.log.info({ providerId: row.id, reason }, 'single sign-on refused');
    await recordSsoRefused(deps.store.db, { tenantId: row.tenant_id, provider: { id: row.id, name: row.name, type: row.type }, email, ip: request.ip, reason, now });
    return toSignInPage(reply, reason);
  };
  if (!outcome.ok) return refuse(outcome.reason, outcome.claims && assertedEmail(outcome.claims));
  const account = await accountFor(deps.store, { tenantId: row.tenant_id, email: outcome.email, role: outcome.role, jit: row.jit === 1, now });
  if (!account.ok) return refuse(account.reason, outcome.email);
  const started = await startSession(deps.store.db, { userId: account.userId, tenantId: row.tenant_id, via: row.type, ip: request.ip, now, policy: deps.sessions });
  setSessionCookies(reply, started, isSecureRequest(request, deps.publicUrl));
  // Recorded here: the audit hook sees a success only in a 2xx, and a sign-in ends in a redirect.
  await appendAudit(deps.store.db, {
    tenantId: row.tenant_id, at: now, actor: { type: 'user', id: account.userId, email: outcome.email }, via: row.type, ip: request.ip,
    action: 'session.start', targetType: 'session', targetId: started.id, before: null, after: { provider: { id: row.id, name: row.name, type: row.type } },
  });
  return reply.redirect(outcome.returnTo, 302);
}

function toSignInPage(reply: FastifyReply, reason: string): FastifyReply {
  return reply.redirect(`/signin?error=${encodeURIComponent(reason)}`, 302);
}

function registerProviderSettings(app: Api, deps: SsoRouteDeps, discovery: OidcDiscoveryCache): void {
  const { db } = deps.store;
  const present = (request: FastifyRequest, row: SsoProviderRow) => presentProvider(row, baseUrl(deps.publicUrl, request));

  app.get('/sso-providers', {
    schema: { tags, ...access('admin'), summary: "List the tenant's single sign-on providers (never a client secret)", response: { 200: Type.Object({ items: Type.Array(SsoProviderSchema) }), ...problems(401, 403) } },
  }, async (request) => ({ items: await Promise.all((await listProviders(db, request.principal.tenantId)).map((row) => present(request, row))) }));

  app.post('/sso-providers', {
    schema: {
      tags, ...access('owner'), summary: 'Add a single sign-on provider: OpenID Connect (public or enterprise) or SAML 2.0; the client secret is stored sealed and never returned',
      body: SsoProviderInputSchema, response: { 201: SsoProviderSchema, ...problems(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    const row = await createProvider(db, deps.box, request.principal.tenantId, request.body, deps.clock());
    if (row.required === 1) await endPasswordSessions(db, row.tenant_id, deps.clock());
    return reply.code(201).header('Location', `/api/v1/sso-providers/${row.id}`).send(await present(request, row));
  });

  app.get('/sso-providers/:id', {
    schema: { tags, ...access('admin'), summary: 'Get a single sign-on provider (never its client secret)', params: IdParams, response: { 200: SsoProviderSchema, ...problems(400, 401, 403, 404) } },
  }, async (request) => present(request, await getProvider(db, request.principal.tenantId, request.params.id)));

  app.patch('/sso-providers/:id', {
    schema: {
      tags, ...access('owner'), summary: 'Change a single sign-on provider (a new client secret replaces the stored one; required: true ends the tenant\'s password sessions)',
      params: IdParams, body: SsoProviderPatchSchema, response: { 200: SsoProviderSchema, ...problems(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const current = await getProvider(db, request.principal.tenantId, request.params.id);
    const row = await updateProvider(db, deps.box, current, request.body, deps.clock());
    discovery.forget(row.id);
    if (row.required === 1 && current.required === 0) await endPasswordSessions(db, row.tenant_id, deps.clock());
    return present(request, row);
  });

  app.delete('/sso-providers/:id', {
    schema: { tags, ...access('owner'), summary: 'Remove a single sign-on provider (its sealed secret is gone; its users stay)', params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 403, 404) } },
  }, async (request, reply) => {
    await deleteProvider(db, request.principal.tenantId, request.params.id);
    discovery.forget(request.params.id);
    return reply.code(204).send(null);
  });
}

/** SSO required: the tenant's sessions begun with a password (or a link) end; tokens and SSO sessions go on. */
async function endPasswordSessions(db: Kysely<Database>, tenantId: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: now }).where('tenant_id', '=', tenantId).where('via', 'in', ['password', 'link']).where('revoked_at', 'is', null).execute();
}
