import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { inUseBy } from '../errors/in-use.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { Database, RunbookRow, RunbookVersionRow } from '../store/schema.js';
import { containsText } from '../store/search.js';
import { isUniqueViolation } from '../store/unique.js';
import { DEFAULT_INTERPRETER, DIFF_FIELDS, type DiffField, type Interpreter, type RunbookInput } from './schema.js';
import { times } from '../errors/counts.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A runbook and one of its versions (the latest, unless asked for another). */
export interface RunbookAt {
  runbook: RunbookRow;
  version: RunbookVersionRow;
}

/** Who saves, and when. */
export interface Save {
  /** The personal access token of the call, or the signed-in user when it came from the UI's session. */
  by: string | null;
  now: number;
}

/** A version's content as compared and stored: the input with its defaults filled in. */
interface Content {
  name: string;
  description: string;
  interpreter: Interpreter;
  script: string;
  env: string[];
}

/**
 * The records that use a runbook and keep it from being deleted: the rules that run it. rules/
 * sits above runbooks/, so server/app.ts passes their lookup in here.
 */
export type RunbookUsers = (tenantId: string, runbookId: string) => Promise<Array<{ id: string; name: string }>>;

/**
 * Told of every new version in the transaction that saves it: the rules that follow the runbook
 * take it there (rules/runbook-refs.ts, passed in by server/app.ts), so no event runs a mix.
 */
export type RunbookFollowers = (tx: Transaction<Database>, tenantId: string, version: RunbookVersionRow, now: number) => Promise<void>;

// Saves racing on one runbook each take the next number; one that lost the race reads again.
const SAVE_ATTEMPTS = 5;

/** Hex SHA-256 of the script's UTF-8 bytes: what executions record and the agent checks. */
export function scriptSha256(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}

export async function createRunbook(db: Kysely<Database>, tenantId: string, input: RunbookInput, save: Save): Promise<RunbookAt> {
  const content = contentOf(input);
  const runbook: RunbookRow = { id: newId(save.now), tenant_id: tenantId, name: content.name, latest_version: 1, created_at: save.now, updated_at: save.now, created_by: save.by };
  const version = versionRow(runbook.id, 1, content, save);
  try {
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('runbooks').values(runbook).execute();
      await tx.insertInto('runbook_versions').values(version).execute();
    });
  } catch (error) {
    throw await nameConflict(db, tenantId, content.name, undefined, error);
  }
  return { runbook, version };
}

/**
 * Saves `input` as the runbook's next version, unless it equals the latest version: then nothing is
 * written and `created` is false. Versions are never changed afterwards.
 */
export async function saveVersion(db: Kysely<Database>, tenantId: string, id: string, input: RunbookInput, save: Save, followers?: RunbookFollowers): Promise<RunbookAt & { created: boolean }> {
  const content = contentOf(input);
  for (let attempt = 1; attempt <= SAVE_ATTEMPTS; attempt += 1) {
    let saved: (RunbookAt & { created: boolean }) | undefined;
    try {
      saved = await db.transaction().execute(async (tx) => {
        const latest = await getLatest(tx, tenantId, id);
        if (changedFields(latest.version, content).length === 0) return { ...latest, created: false };
        const next = latest.runbook.latest_version + 1;
        const runbook: RunbookRow = { ...latest.runbook, name: content.name, latest_version: next, updated_at: save.now };
        // Conditional on the number read: a save that committed meanwhile makes this one read again.
        const moved = await tx.updateTable('runbooks').set({ name: runbook.name, latest_version: next, updated_at: save.now })
          .where('id', '=', id).where('latest_version', '=', latest.runbook.latest_version).executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return undefined;
        const version = versionRow(id, next, content, save);
        await tx.insertInto('runbook_versions').values(version).execute();
        await followers?.(tx, tenantId, version, save.now);
        return { runbook, version, created: true };
      });
    } catch (error) {
      throw await nameConflict(db, tenantId, content.name, id, error);
    }
    if (saved) return saved;
  }
  throw new PitcrewError('PITCREW_ERR_CONFLICT', `runbook ${id} was saved by others ${times(SAVE_ATTEMPTS)} while this save was tried; fetch the latest version and save again`);
}

export async function getRunbook(db: Db, tenantId: string, id: string): Promise<RunbookRow> {
  const row = await db.selectFrom('runbooks').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('runbook', id);
  return row;
}

export async function getLatest(db: Db, tenantId: string, id: string): Promise<RunbookAt> {
  const runbook = await getRunbook(db, tenantId, id);
  return { runbook, version: await versionOf(db, runbook, runbook.latest_version) };
}

/** One version of the runbook; a 404 that says which versions exist, at `path` (the parameter that named it). */
export async function getVersion(db: Db, tenantId: string, id: string, version: number, path = '/params/version'): Promise<RunbookAt> {
  const runbook = await getRunbook(db, tenantId, id);
  if (version > runbook.latest_version) {
    const range = runbook.latest_version === 1 ? 'has version 1 only' : `has versions 1 to ${runbook.latest_version}`;
    throw new PitcrewError('PITCREW_ERR_NOT_FOUND', `runbook "${runbook.name}" ${range}; there is no version ${version}`, { fieldErrors: [{ path, message: `no version ${version}; the latest is ${runbook.latest_version}` }] });
  }
  return { runbook, version: await versionOf(db, runbook, version) };
}

export type RunbookListRow = Pick<RunbookRow, 'id' | 'name' | 'latest_version' | 'created_at' | 'updated_at'> & Pick<RunbookVersionRow, 'interpreter' | 'env' | 'sha256'>;

/** The tenant's runbooks, oldest first, each with its latest version's details but not its script. */
export async function listRunbooks(db: Db, tenantId: string, search: string | undefined, page: PageRequest): Promise<RunbookListRow[]> {
  let query = db.selectFrom('runbooks as r')
    .innerJoin('runbook_versions as v', (join) => join.onRef('v.runbook_id', '=', 'r.id').onRef('v.version', '=', 'r.latest_version'))
    .select(['r.id', 'r.name', 'r.latest_version', 'r.created_at', 'r.updated_at', 'v.interpreter', 'v.env', 'v.sha256'])
    .where('r.tenant_id', '=', tenantId);
  if (search) query = query.where(containsText('r.name', search));
  if (page.after) query = query.where('r.id', '>', page.after);
  return query.orderBy('r.id').limit(page.limit + 1).execute();
}

export type VersionListRow = Omit<RunbookVersionRow, 'script' | 'description'>;

/** A runbook's versions, newest first, without their scripts and notes; `before` continues a page. */
export async function listVersions(db: Db, runbook: RunbookRow, page: { limit: number; before: number | undefined }): Promise<VersionListRow[]> {
  let query = db.selectFrom('runbook_versions')
    .select(['runbook_id', 'version', 'name', 'interpreter', 'env', 'sha256', 'created_at', 'created_by'])
    .where('runbook_id', '=', runbook.id);
  if (page.before !== undefined) query = query.where('version', '<', page.before);
  return query.orderBy('version', 'desc').limit(page.limit + 1).execute();
}

/** Deletes the runbook and every version of it; refused while something uses it. */
export async function deleteRunbook(db: Kysely<Database>, tenantId: string, id: string, usedBy: RunbookUsers): Promise<void> {
  const runbook = await getRunbook(db, tenantId, id);
  const users = await usedBy(tenantId, id);
  if (users.length > 0) {
    const { rules, them } = inUseBy(users);
    throw new PitcrewError('PITCREW_ERR_CONFLICT', `runbook "${runbook.name}" is used by ${rules}; change ${them} to another runbook, or delete ${them}, first`);
  }
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('runbook_versions').where('runbook_id', '=', id).execute();
    await tx.deleteFrom('runbooks').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
  });
}

/** The fields in which a stored version differs from another version or from a body to save, in DIFF_FIELDS order. */
export function changedFields(from: RunbookVersionRow, to: RunbookVersionRow | Content): DiffField[] {
  const a = contentOfRow(from);
  const b = 'version' in to ? contentOfRow(to) : to;
  return DIFF_FIELDS.filter((field) => (field === 'env' ? JSON.stringify(a.env) !== JSON.stringify(b.env) : a[field] !== b[field]));
}

export function envOf(row: Pick<RunbookVersionRow, 'env'>): string[] {
  return JSON.parse(row.env) as string[];
}

function contentOf(input: RunbookInput): Content {
  return { name: input.name.trim(), description: input.description ?? '', interpreter: input.interpreter ?? DEFAULT_INTERPRETER, script: input.script, env: input.env ?? [] };
}

function contentOfRow(row: RunbookVersionRow): Content {
  return { name: row.name, description: row.description, interpreter: row.interpreter as Interpreter, script: row.script, env: envOf(row) };
}

function versionRow(runbookId: string, version: number, content: Content, save: Save): RunbookVersionRow {
  return { runbook_id: runbookId, version, ...content, env: JSON.stringify(content.env), sha256: scriptSha256(content.script), created_at: save.now, created_by: save.by };
}

async function versionOf(db: Db, runbook: RunbookRow, version: number): Promise<RunbookVersionRow> {
  const row = await db.selectFrom('runbook_versions').selectAll().where('runbook_id', '=', runbook.id).where('version', '=', version).executeTakeFirst();
  if (!row) throw notFound(`version ${version} of runbook`, runbook.id);
  return row;
}

/** A unique-name violation as the 409 that names the runbook holding the name; any other error as it is. */
async function nameConflict(db: Db, tenantId: string, name: string, savingId: string | undefined, error: unknown): Promise<unknown> {
  if (!isUniqueViolation(error)) return error;
  const holder = await db.selectFrom('runbooks').select('id').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  if (!holder || holder.id === savingId) return error;
  const advice = savingId ? 'choose another name' : `save a new version of it with PUT /api/v1/runbooks/${holder.id}, or choose another name`;
  return new PitcrewError('PITCREW_ERR_CONFLICT', `runbook ${holder.id} is already named "${name}" in this tenant; ${advice}`, {
    fieldErrors: [{ path: '/body/name', message: `already the name of runbook ${holder.id}` }],
  });
}
