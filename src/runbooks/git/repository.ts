import type { Kysely } from 'kysely';
import { notFound, PitcrewError } from '../../errors/catalogue.js';
import { inUseBy } from '../../errors/in-use.js';
import type { SecretBox } from '../../identity/secret-box.js';
import { newId } from '../../store/ids.js';
import type { PageRequest } from '../../store/pagination.js';
import type { Database, RepositoryRow } from '../../store/schema.js';
import { withUniqueName } from '../../store/unique.js';
import type { StoredCredential } from './schema.js';
import type { CheckedRepository } from './validate.js';

type Db = Kysely<Database>;

/**
 * The records that read from a repository and keep it from being deleted: rules whose runbook is
 * `{repositoryId, path}`. rules/ sits above runbooks/, so server/app.ts passes their lookup in.
 */
export type RepositoryUsers = (tenantId: string, repositoryId: string) => Promise<Array<{ id: string; name: string }>>;

/** What a "test connection" learned, kept for the repository's page. */
export interface TestOutcome {
  ok: boolean;
  message: string;
  commit?: string | undefined;
}

export async function createRepository(db: Db, box: SecretBox, tenantId: string, checked: CheckedRepository, now: number): Promise<RepositoryRow> {
  const id = newId(now);
  const row: RepositoryRow = {
    id,
    tenant_id: tenantId,
    name: checked.name,
    url: checked.url.url,
    ref: checked.ref,
    auth: checked.auth,
    credential: checked.credential ? box.seal(JSON.stringify(checked.credential), id) : null,
    known_hosts: checked.knownHosts,
    created_at: now,
    updated_at: now,
    last_test_at: null,
    last_test_ok: null,
    last_test_message: null,
    last_test_commit: null,
  };
  await withUniqueName('repository', row.name, () => db.insertInto('repositories').values(row).execute());
  return row;
}

export async function getRepository(db: Db, tenantId: string, id: string): Promise<RepositoryRow> {
  const row = await findRepository(db, tenantId, id);
  if (!row) throw notFound('repository', id);
  return row;
}

/** The tenant's repository, or undefined: another tenant's is as absent as a deleted one. */
export async function findRepository(db: Db, tenantId: string, id: string): Promise<RepositoryRow | undefined> {
  return db.selectFrom('repositories').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function listRepositories(db: Db, tenantId: string, page: PageRequest): Promise<RepositoryRow[]> {
  let query = db.selectFrom('repositories').selectAll().where('tenant_id', '=', tenantId);
  if (page.after) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/**
 * The checked fields written over the row. A change of where or how it is read (URL, ref,
 * credential, host keys) makes its last test stale, so that is cleared.
 */
export async function updateRepository(db: Db, box: SecretBox, current: RepositoryRow, checked: CheckedRepository, now: number): Promise<RepositoryRow> {
  const changes: Partial<RepositoryRow> = { name: checked.name, url: checked.url.url, ref: checked.ref, known_hosts: checked.knownHosts, auth: checked.auth, updated_at: now };
  if (checked.credential !== undefined) changes.credential = checked.credential ? box.seal(JSON.stringify(checked.credential), current.id) : null;
  const reached = changes.url !== current.url || changes.ref !== current.ref || changes.known_hosts !== current.known_hosts || checked.credential !== undefined;
  if (reached) Object.assign(changes, { last_test_at: null, last_test_ok: null, last_test_message: null, last_test_commit: null });
  await withUniqueName('repository', checked.name, () => db.updateTable('repositories').set(changes).where('id', '=', current.id).where('tenant_id', '=', current.tenant_id).execute());
  return { ...current, ...changes };
}

/** Deletes the repository; refused while a rule reads runbooks from it. */
export async function deleteRepository(db: Db, tenantId: string, id: string, usedBy: RepositoryUsers): Promise<RepositoryRow> {
  const row = await getRepository(db, tenantId, id);
  const users = await usedBy(tenantId, id);
  if (users.length > 0) {
    const { rules, them } = inUseBy(users);
    throw new PitcrewError('PITCREW_ERR_CONFLICT', `repository "${row.name}" is read by ${rules}; point ${them} at another runbook, or delete ${them}, first`);
  }
  await db.deleteFrom('repositories').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
  return row;
}

/** The stored credential, opened: for the git process's environment only. */
export function openRepositoryCredential(box: SecretBox, row: RepositoryRow): StoredCredential | undefined {
  return row.credential === null ? undefined : (JSON.parse(box.open(row.credential, row.id)) as StoredCredential);
}

export async function recordTest(db: Db, row: RepositoryRow, outcome: TestOutcome, now: number): Promise<RepositoryRow> {
  const changes = { last_test_at: now, last_test_ok: outcome.ok ? 1 : 0, last_test_message: outcome.message.slice(0, 2000), last_test_commit: outcome.commit ?? null };
  await db.updateTable('repositories').set(changes).where('id', '=', row.id).where('tenant_id', '=', row.tenant_id).execute();
  return { ...row, ...changes };
}
