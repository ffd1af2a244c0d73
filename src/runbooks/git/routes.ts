import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { PitcrewError } from '../../errors/catalogue.js';
import { IdParams, PageQuery, pageOf, problems } from '../../http/schemas.js';
import { access } from '../../identity/access.js';
import type { Api } from '../../http/types.js';
import type { SecretBox } from '../../identity/secret-box.js';
import { pageRequest, toPage } from '../../store/pagination.js';
import type { Database, RepositoryRow } from '../../store/schema.js';
import { labelOf, RunbookFetchError } from './errors.js';
import { refProblem } from './names.js';
import { createRepository, deleteRepository, getRepository, listRepositories, recordTest, updateRepository, type RepositoryUsers, type TestOutcome } from './repository.js';
import { FilesQuery, RepositoryFilesView, RepositoryInput, RepositoryPatch, RepositoryTestView, RepositoryView, type AuthKind } from './schema.js';
import type { GitSources } from './sources.js';
import { checkNewRepository, checkPatchedRepository } from './validate.js';

const tags = ['repositories'];

export interface RepositoryRouteDeps {
  db: Kysely<Database>;
  box: SecretBox;
  sources: GitSources;
  /** The rules that read runbooks from a repository, which keep it from being deleted (passed in by server/app.ts). */
  usedBy?: RepositoryUsers;
  clock?: () => number;
}

/** A tenant's git repositories runbooks are read from (docs/runbooks.md#git-repositories): read-only, the credential write-only. */
export function registerRepositoryRoutes(app: Api, { db, box, sources, usedBy = async () => [], clock = Date.now }: RepositoryRouteDeps): void {
  app.post('/repositories', {
    schema: {
      tags, ...access('admin'),
      summary: 'Connect a git repository runbooks are read from: HTTPS with a read-only token, or SSH with a deploy key and the host keys; the credential is stored sealed and never returned',
      body: RepositoryInput, response: { 201: RepositoryView, ...problems(400, 401, 409) },
    },
  }, async (request, reply) => {
    const row = await createRepository(db, box, request.principal.tenantId, checkNewRepository(request.body), clock());
    return reply.code(201).header('Location', `/api/v1/repositories/${row.id}`).send(presentRepository(row));
  });

  app.get('/repositories', {
    schema: {
      tags, ...access('viewer'), summary: 'List repositories (oldest first): URL, ref, what credential each has, its last test',
      querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }), response: { 200: pageOf(RepositoryView), ...problems(400, 401) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return toPage(await listRepositories(db, request.principal.tenantId, page), page, presentRepository);
  });

  app.get('/repositories/:id', {
    schema: { tags, ...access('viewer'), summary: 'Get a repository (never its credential)', params: IdParams, response: { 200: RepositoryView, ...problems(400, 401, 404) } },
  }, async (request) => presentRepository(await getRepository(db, request.principal.tenantId, request.params.id)));

  app.patch('/repositories/:id', {
    schema: {
      tags, ...access('admin'),
      summary: 'Change a repository: name, url, ref, knownHosts, a new credential whole, or credential null to drop it; a URL moved to HTTPS drops the host keys',
      params: IdParams, body: RepositoryPatch, response: { 200: RepositoryView, ...problems(400, 401, 404, 409) },
    },
  }, async (request) => {
    const current = await getRepository(db, request.principal.tenantId, request.params.id);
    const row = await updateRepository(db, box, current, checkPatchedRepository(current, request.body), clock());
    // Commits cached from the old server are not the new one's to serve.
    if (row.url !== current.url) await sources.forget(row.id);
    return presentRepository(row);
  });

  app.delete('/repositories/:id', {
    schema: {
      tags, ...access('admin'), summary: 'Delete a repository and its cache (refused while a rule reads runbooks from it); its sealed credential is gone',
      params: IdParams, response: { 204: Type.Null(), ...problems(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    const row = await deleteRepository(db, request.principal.tenantId, request.params.id, usedBy);
    await sources.forget(row.id);
    return reply.code(204).send(null);
  });

  app.post('/repositories/:id/test', {
    schema: {
      tags, ...access('operator'),
      summary: "Test connection: ask the server where the repository's ref is (git ls-remote), reading nothing else. A failure is ok false with what to change",
      params: IdParams, response: { 200: RepositoryTestView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const row = await getRepository(db, request.principal.tenantId, request.params.id);
    let outcome: TestOutcome;
    try {
      const resolved = await sources.test(row.tenant_id, row.id);
      outcome = { ok: true, message: `${labelOf(row)} answered: ${row.ref} is at commit ${resolved.commit} (${resolved.fullName})`, commit: resolved.commit };
    } catch (error) {
      if (!(error instanceof RunbookFetchError)) throw error;
      outcome = { ok: false, message: error.message };
    }
    await recordTest(db, row, outcome, clock());
    return { ok: outcome.ok, message: outcome.message, ref: row.ref, ...(outcome.commit ? { commit: outcome.commit } : {}) };
  });

  app.get('/repositories/:id/files', {
    schema: {
      tags, ...access('viewer'),
      summary: "The regular files at a ref's commit (the repository's ref unless given; at most 1000): paths to pick a runbook from. A failure is ok false with what to change",
      params: IdParams, querystring: FilesQuery, response: { 200: RepositoryFilesView, ...problems(400, 401, 404) },
    },
  }, async (request) => {
    const row = await getRepository(db, request.principal.tenantId, request.params.id);
    const ref = request.query.ref ?? row.ref;
    const problem = refProblem(ref);
    if (problem) throw new PitcrewError('PITCREW_ERR_VALIDATION', `/query/ref: ${problem}`, { fieldErrors: [{ path: '/query/ref', message: problem }] });
    try {
      const listed = await sources.files(row.tenant_id, row.id, ref);
      const message = `${listed.truncated ? `the first ${listed.files.length}` : listed.files.length} files at ${ref} (commit ${listed.commit.slice(0, 12)})`;
      return { ok: true, message, ref, commit: listed.commit, files: listed.files, truncated: listed.truncated };
    } catch (error) {
      if (!(error instanceof RunbookFetchError)) throw error;
      return { ok: false, message: error.message, ref, files: [], truncated: false };
    }
  });
}

export function presentRepository(row: RepositoryRow): RepositoryView {
  const iso = (ms: number) => new Date(ms).toISOString();
  const lastTest = row.last_test_at === null
    ? null
    : { at: iso(row.last_test_at), ok: row.last_test_ok === 1, message: row.last_test_message ?? '', ...(row.last_test_commit ? { commit: row.last_test_commit } : {}) };
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    ref: row.ref,
    auth: row.auth as AuthKind,
    knownHosts: row.known_hosts,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    lastTest,
  };
}
