import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../http/schemas.js';
import { access } from '../identity/access.js';
import type { Api } from '../http/types.js';
import { DEFAULT_LIMIT, pageRequest, toPage } from '../store/pagination.js';
import type { Database, RunbookVersionRow } from '../store/schema.js';
import { unifiedDiff } from './diff.js';
import {
  changedFields, createRunbook, deleteRunbook, envOf, getLatest, getRunbook, getVersion, listRunbooks, listVersions, saveVersion,
  type RunbookAt, type RunbookFollowers, type RunbookListRow, type RunbookUsers, type VersionListRow,
} from './repository.js';
import { RunbookDiffView, RunbookInput, RunbookSaved, RunbookSummary, RunbookVersionSummary, RunbookVersionView, RunbookView, type Interpreter } from './schema.js';
import { assertRunbook, type EnvNameCheck } from './validate.js';

const tags = ['runbooks'];

export interface RunbookRouteDeps {
  db: Kysely<Database>;
  /** Why a name may not be in a runbook's `env` (ingress/env.ts's rules, passed in by server/app.ts). */
  envNameProblem: EnvNameCheck;
  /** What uses a runbook and so keeps it from being deleted: the rules that run it. */
  usedBy?: RunbookUsers;
  /** The rules that follow a runbook, moved to each new version as it is saved. */
  followers?: RunbookFollowers;
  clock?: () => number;
}

const VersionParams = Type.Object({ id: Type.String({ format: 'uuid' }), version: Type.Integer({ minimum: 1 }) });
const DiffQuery = Type.Object({
  from: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the version before `to`' })),
  to: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the latest version' })),
}, { additionalProperties: false });

/** The tenant's runbook store (docs/runbooks.md): every save an immutable version, diffs between them. */
export function registerRunbookRoutes(app: Api, { db, envNameProblem, usedBy = async () => [], followers, clock = Date.now }: RunbookRouteDeps): void {
  app.post('/runbooks', {
    schema: {
      tags, ...access('admin'), summary: 'Store a runbook (a script and notes for people) as its version 1',
      body: RunbookInput, response: { 201: RunbookSaved, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    assertRunbook(request.body, envNameProblem);
    const saved = await createRunbook(db, request.principal.tenantId, request.body, { by: request.principal.tokenId ?? request.principal.userId, now: clock() });
    return reply.code(201).header('Location', `/api/v1/runbooks/${saved.runbook.id}`).send({ ...presentRunbook(saved), versionCreated: true });
  });

  app.put('/runbooks/:id', {
    schema: {
      tags, ...access('admin'),
      summary: 'Save a runbook as its next version (the whole body, as for POST; a field left out takes its default). A body equal to the latest version saves nothing: versionCreated false, the same version',
      params: IdParams, body: RunbookInput, response: { 200: RunbookSaved, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    assertRunbook(request.body, envNameProblem);
    const saved = await saveVersion(db, request.principal.tenantId, request.params.id, request.body, { by: request.principal.tokenId ?? request.principal.userId, now: clock() }, followers);
    return { ...presentRunbook(saved), versionCreated: saved.created };
  });

  app.get('/runbooks', {
    schema: {
      tags, ...access('viewer'), summary: 'List runbooks (oldest first), each at its latest version, without scripts',
      querystring: Type.Object({
        ...PageQuery,
        search: Type.Optional(Type.String({ maxLength: 200, description: 'part of the name, any case' })),
      }, { additionalProperties: false }),
      response: { 200: pageOf(RunbookSummary), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await listRunbooks(db, request.principal.tenantId, request.query.search, page), page, presentSummary);
  });

  app.get('/runbooks/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get a runbook at its latest version, script included', params: IdParams, response: { 200: RunbookView, ...problems(400, 401, 404) } },
  }, async (request) => presentRunbook(await getLatest(db, request.principal.tenantId, request.params.id)));

  app.get('/runbooks/:id/versions', {
    schema: {
      tags, ...access('viewer'), summary: "List a runbook's versions (newest first), without scripts and notes: GET /runbooks/{id}/versions/{n} has one whole",
      params: IdParams, querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
      response: { 200: pageOf(RunbookVersionSummary), ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const limit = request.query.limit ?? DEFAULT_LIMIT;
    const runbook = await getRunbook(db, request.principal.tenantId, request.params.id);
    const rows = await listVersions(db, runbook, { limit, before: versionCursor(request.query.cursor) });
    const items = rows.slice(0, limit);
    return { items: items.map(presentVersionSummary), nextCursor: rows.length > limit ? Buffer.from(String(items.at(-1)!.version)).toString('base64url') : null };
  });

  app.get('/runbooks/:id/versions/:version', {
    schema: {
      tags, ...access('viewer'), summary: 'Get one version of a runbook, whole, as it was saved',
      params: VersionParams, response: { 200: RunbookVersionView, ...problems(400, 401, 404) },
    },
  }, async (request) => presentVersion(await getVersion(db, request.principal.tenantId, request.params.id, request.params.version)));

  app.get('/runbooks/:id/diff', {
    schema: {
      tags, ...access('viewer'), summary: "Compare two versions of a runbook: the fields that changed and the scripts' unified diff (default: the latest against the one before)",
      params: IdParams, querystring: DiffQuery, response: { 200: RunbookDiffView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const { tenantId } = request.principal;
    const runbook = await getRunbook(db, tenantId, request.params.id);
    const toNumber = request.query.to ?? runbook.latest_version;
    const fromNumber = request.query.from ?? Math.max(1, toNumber - 1);
    const to = await getVersion(db, tenantId, runbook.id, toNumber, '/query/to');
    const from = await getVersion(db, tenantId, runbook.id, fromNumber, '/query/from');
    const diff: RunbookDiffView = {
      runbookId: runbook.id,
      from: fromNumber,
      to: toNumber,
      changed: changedFields(from.version, to.version),
      diff: unifiedDiff(from.version.script, to.version.script, { fromLabel: `version ${fromNumber}`, toLabel: `version ${toNumber}` }),
    };
    return diff;
  });

  app.delete('/runbooks/:id', {
    schema: {
      tags, ...access('admin'), summary: 'Delete a runbook and every version of it, for good (refused while a rule uses it)',
      params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    await deleteRunbook(db, request.principal.tenantId, request.params.id, usedBy);
    return reply.code(204).send(null);
  });
}

/** A version list's cursor: the last version number of the page before, as nextCursor gave it. */
function versionCursor(cursor: string | undefined): number | undefined {
  if (!cursor) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new PitcrewError('PITCREW_ERR_BAD_CURSOR', 'cursor must be a nextCursor value returned by this list; start again without cursor');
  return Number(text);
}

const iso = (ms: number) => new Date(ms).toISOString();

export function presentRunbook({ runbook, version }: RunbookAt): RunbookView {
  return {
    id: runbook.id,
    ...contentOf(version),
    createdAt: iso(runbook.created_at),
    createdBy: runbook.created_by,
    updatedAt: iso(version.created_at),
    updatedBy: version.created_by,
  };
}

function presentSummary(row: RunbookListRow): RunbookSummary {
  return {
    id: row.id, name: row.name, version: row.latest_version, interpreter: row.interpreter as Interpreter, env: envOf(row), sha256: row.sha256,
    createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
  };
}

function presentVersion({ version }: RunbookAt): RunbookVersionView {
  return { runbookId: version.runbook_id, ...contentOf(version), createdAt: iso(version.created_at), createdBy: version.created_by };
}

/** A version's number and content, as every view of one whole shows them. */
function contentOf(version: RunbookVersionRow) {
  return {
    version: version.version,
    name: version.name,
    description: version.description,
    interpreter: version.interpreter as Interpreter,
    script: version.script,
    env: envOf(version),
    sha256: version.sha256,
  };
}

function presentVersionSummary(row: VersionListRow): RunbookVersionSummary {
  return { version: row.version, name: row.name, interpreter: row.interpreter as Interpreter, env: envOf(row), sha256: row.sha256, createdAt: iso(row.created_at), createdBy: row.created_by };
}
