import { randomBytes } from 'node:crypto';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { PitcrewError } from '../../errors/catalogue.js';
import type { Durability } from '../../store/durability.js';
import { MAX_LIMIT } from '../../store/pagination.js';
import type { Database } from '../../store/schema.js';
import type { Principal } from '../principal.js';
import { CSRF_HEADER, sessionSecretOf } from '../session-cookies.js';
import type { AuditActor, AuditRecord } from './entry.js';
import { masked, secretsOf } from './mask.js';
import { AUDIT_KEYWORD, auditSpec, type AuditDeclaration, type AuditSpec } from './naming.js';
import { appendAuditDurably, appendAuditIn } from './repository.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * How the audit log reads what a PATCH, PUT or DELETE changes, before the change: the same
     * view the resource's GET gives, read directly. Without it the recorder asks the whole API for
     * that GET (a second request through auth, routing and serialisation: a third of a rule PATCH's
     * time in bench/api.js). A 404 from it means there is nothing before; the handler says so.
     */
    auditBefore?: (request: FastifyRequest) => Promise<unknown>;
  }
}

/** Marks the recorder's own read of a resource's view before a change (metrics leave it out). */
const OWN_READ_HEADER = 'x-pitcrew-audit-read';
const READS_NOTHING = new Set(['GET', 'HEAD', 'OPTIONS']);
const BEARER = /^Bearer\s+(\S+)$/i;

export interface AuditRecorderDeps {
  db: Kysely<Database>;
  durability: Durability;
  clock: () => number;
}

interface Draft {
  spec: AuditSpec;
  before: unknown;
  clock: () => number;
}

/** What the recorder knows of a request it watches, from before its handler runs. */
const drafts = new WeakMap<FastifyRequest, Draft>();
/** Requests whose entry was written in the change's own transaction (recordInChange): the reply writes none. */
const recordedInChange = new WeakSet<FastifyRequest>();

/**
 * Writes the request's audit entry in the transaction of the change itself, `after` being the view
 * the reply will give: the change and its entry commit together, with one commit and one sync, or
 * neither does. Written after the change, in a transaction of its own, the entry cost a rule PATCH
 * a second begin, commit and sync (bench/api.js). Does nothing for a request the recorder does not
 * watch (a public route, or no recorder installed).
 */
export async function recordInChange(request: FastifyRequest, db: Kysely<Database>, tx: Kysely<Database>, after: unknown): Promise<void> {
  const draft = drafts.get(request);
  const principal = request.principal as Principal | undefined;
  if (!draft || !principal) return;
  await appendAuditIn(db, tx, entryOf(request, draft, principal, after));
  recordedInChange.add(request);
}

/** How a management call's principal appears in the log: who, and how they proved it. */
export function actorOf(principal: Principal): { actor: AuditActor; via: string } {
  const actor: AuditActor = principal.tokenId !== null
    ? { type: 'token', id: principal.tokenId, name: principal.tokenName ?? '', userId: principal.userId, email: principal.email }
    : { type: 'user', id: principal.userId, email: principal.email };
  return { actor, via: principal.via };
}

/**
 * Records every management call that changed something (DESIGN.md §7, issue 37.5), without any
 * route doing it by hand: `install` on the management scope gives each route that is not a GET
 * two hooks. Before the handler, the resource's view is read (a GET of its URL, with the caller's
 * credentials) for a PATCH, PUT or DELETE, and for a POST of a verb on an item; when the reply is
 * a success, the entry is written with that view as `before` and the reply as `after`, secrets
 * masked, before the reply leaves (the caller never sees a success the log lacks, unless writing
 * it failed: then an error is logged and the reply still goes, as the change is made). GET routes
 * get no hook at all.
 */
export class AuditRecorder {
  /** Per process: a caller cannot make its own requests pass for the recorder's reads. */
  private readonly ownReadMark = randomBytes(16).toString('hex');
  /** The scope's GET routes, by URL: whether each is a paged list (takes `limit`). */
  private readonly reads = new Map<string, { paged: boolean }>();

  constructor(private readonly deps: AuditRecorderDeps) {}

  install(scope: FastifyInstance): void {
    scope.addHook('onRoute', (route) => this.onRoute(route));
  }

  /** Whether this request is the recorder's own read of a view (not a caller's). */
  isOwnRead(request: FastifyRequest): boolean {
    return request.headers[OWN_READ_HEADER] === this.ownReadMark;
  }

  private onRoute(route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) this.reads.set(route.url, { paged: takesLimit(route.schema) });
    const method = methods.find((m) => !READS_NOTHING.has(m));
    if (!method) return;
    const declared = (route.schema as Record<string, unknown> | undefined)?.[AUDIT_KEYWORD] as AuditDeclaration | undefined;
    const spec = auditSpec(method, route.url, declared);
    if (!spec) return;
    const loader = route.config?.auditBefore;
    const prepare: preHandlerHookHandler = async (request) => this.prepare(request, spec, route.url, loader);
    const record: onSendHookHandler = async (request, reply, payload) => this.record(request, reply, payload);
    route.preHandler = [...asList(route.preHandler), prepare];
    route.onSend = [...asList(route.onSend), record];
  }

  private async prepare(request: FastifyRequest, spec: AuditSpec, routeUrl: string, loader: FastifyContextConfig['auditBefore']): Promise<void> {
    const before = !spec.keepsBefore ? null : loader ? await declaredBefore(loader, request) : await this.viewBefore(request, spec, routeUrl);
    drafts.set(request, { spec, before, clock: this.deps.clock });
  }

  /**
   * The view of what the call acts on, as a GET of its item's URL gives it to the same caller: the
   * URL itself for a PATCH, PUT or DELETE, the item it names for a POST of a verb
   * (`POST /api-keys/:id/revoke`: `/api-keys/:id`). Where there is no such route, the item of that
   * id in the GET of the list above it (`PATCH /users/:id`: `GET /users`, page after page); else null.
   */
  private async viewBefore(request: FastifyRequest, spec: AuditSpec, routeUrl: string): Promise<unknown> {
    const routeSegments = routeUrl.split('/');
    const pathSegments = request.url.split('?')[0]!.split('/');
    const param = 'param' in spec.target ? spec.target.param : undefined;
    // The item: the route cut after the target's parameter (the whole route when it ends there).
    const end = param ? routeSegments.indexOf(`:${param}`) + 1 : routeSegments.length;
    const itemRoute = routeSegments.slice(0, end).join('/');
    const itemPath = pathSegments.slice(0, end).join('/');
    if (this.reads.has(itemRoute)) return this.read(request, itemPath);
    const list = param ? this.reads.get(routeSegments.slice(0, end - 1).join('/')) : undefined;
    if (!param || !list) return null;
    const id = (request.params as Record<string, string | undefined>)[param];
    const listPath = pathSegments.slice(0, end - 1).join('/');
    // A paged list is read MAX_LIMIT at a time, following nextCursor until the item is found.
    let cursor: string | null = null;
    for (;;) {
      const query = list.paged ? `?limit=${MAX_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` : '';
      const page = (await this.read(request, `${listPath}${query}`)) as { items?: Array<{ id?: unknown }>; nextCursor?: unknown } | null;
      const found = page?.items?.find((item) => item.id === id);
      if (found) return found;
      if (!list.paged || typeof page?.nextCursor !== 'string' || page.nextCursor === cursor) return null;
      cursor = page.nextCursor;
    }
  }

  /** A GET through the whole API, as the caller (their credentials, their address); null unless 200. */
  private async read(request: FastifyRequest, url: string): Promise<unknown> {
    const headers: Record<string, string> = { [OWN_READ_HEADER]: this.ownReadMark };
    for (const name of ['authorization', 'cookie'] as const) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const reply = await request.server.inject({ method: 'GET', url, headers, remoteAddress: request.ip });
    return reply.statusCode === 200 ? (reply.json() as unknown) : null;
  }

  /**
   * The entry of a success, unless its handler wrote it in the change's transaction: written before
   * the reply leaves, so the caller never sees a success the log lacks, unless writing it failed
   * (an error is logged and the reply still goes, as the change is made).
   */
  private async record(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const draft = drafts.get(request);
    // A public route (a sign-in) has a principal only once it succeeded: its handler sets it.
    const principal = request.principal as Principal | undefined;
    if (!draft || !principal || recordedInChange.has(request) || reply.statusCode < 200 || reply.statusCode >= 300) return payload;
    const entry = entryOf(request, draft, principal, replyBody(reply, payload));
    try {
      await appendAuditDurably(this.deps.db, this.deps.durability, entry);
    } catch (error) {
      request.log.error({ err: error, action: entry.action, targetType: entry.targetType, targetId: entry.targetId }, 'the change was made, but its audit log entry could not be written');
    }
    return payload;
  }
}

/** The entry of one change: who, from where, what, and the views before and after with secrets masked. */
function entryOf(request: FastifyRequest, { spec, before, clock }: Draft, principal: Principal, after: unknown): AuditRecord {
  const secrets = secretsOf(request.body, credentialsOf(request));
  return {
    tenantId: principal.tenantId, at: clock(), ...actorOf(principal), ip: request.ip,
    action: spec.action, targetType: spec.targetType, targetId: targetIdOf(spec, request, principal, after),
    before: masked(before, secrets), after: masked(after, secrets),
  };
}

async function declaredBefore(loader: NonNullable<FastifyContextConfig['auditBefore']>, request: FastifyRequest): Promise<unknown> {
  try {
    return await loader(request);
  } catch (error) {
    if (error instanceof PitcrewError && error.status === 404) return null;
    throw error;
  }
}

/** The secrets the caller proved itself with: a bearer token, or a session cookie and its CSRF token. */
function credentialsOf(request: FastifyRequest): string[] {
  const bearer = BEARER.exec(request.headers.authorization ?? '')?.[1];
  const csrf = request.headers[CSRF_HEADER];
  return [bearer, sessionSecretOf(request), typeof csrf === 'string' ? csrf : undefined].filter((s): s is string => s !== undefined);
}

function targetIdOf(spec: AuditSpec, request: FastifyRequest, principal: Principal, after: unknown): string | null {
  if ('param' in spec.target) return (request.params as Record<string, string | undefined>)[spec.target.param] ?? null;
  if (spec.target.from === 'session') return principal.sessionId;
  if (spec.target.from === 'user') return principal.userId;
  return idOf(after);
}

function replyBody(reply: FastifyReply, payload: unknown): unknown {
  if (typeof payload !== 'string' || payload.length === 0) return null;
  if (!String(reply.getHeader('content-type') ?? '').includes('json')) return null;
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return null;
  }
}

function idOf(body: unknown): string | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : null;
}

function takesLimit(schema: RouteOptions['schema']): boolean {
  const query = schema?.querystring as { properties?: Record<string, unknown> } | undefined;
  return query?.properties?.limit !== undefined;
}

function asList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
