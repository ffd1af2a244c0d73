import type { Kysely, Transaction } from 'kysely';
import { PitcrewError } from '../errors/catalogue.js';
import { getLatest, getVersion, scriptSha256, type RunbookAt } from '../runbooks/repository.js';
import type { Database, RunbookVersionRow } from '../store/schema.js';
import type { Action, RunbookRef } from './schema.js';

type Tx = Transaction<Database> | Kysely<Database>;

/**
 * The runbook a rule's action stores, filled in when the rule is saved so that an event reads
 * nothing more (ingest stays one read of the rule): a script written here gets its hash; a stored
 * runbook's version (pinned, or the latest) is copied in whole; a git file is read at each run.
 * Runs in the rule's write transaction, after taking the runbook's row, so that a runbook saved
 * at the same moment either comes first (and is the version read) or finds this rule to rewrite.
 */
export async function resolveRunbook(tx: Tx, tenantId: string, action: Action): Promise<Action> {
  if (action.type === 'email_runbook') {
    const { runbookId, version } = action.runbook;
    if (runbookId === undefined) return action;
    return { ...action, runbook: followed(version, (await readRunbook(tx, tenantId, runbookId, version)).version) };
  }
  if (action.type !== 'script' && action.type !== 'cli') return action;
  const given = action.runbook;
  if (given.runbookId !== undefined) {
    const at = await readRunbook(tx, tenantId, given.runbookId, given.version);
    return { ...action, runbook: followed(given.version, at.version) };
  }
  if (given.repositoryId !== undefined) {
    await assertRepository(tx, tenantId, given.repositoryId);
    const { repositoryId, path, ref, interpreter } = given;
    return { ...action, runbook: { repositoryId, path, ...(ref === undefined ? {} : { ref }), ...(interpreter === undefined ? {} : { interpreter }) } };
  }
  const { script, interpreter, notes } = given;
  return { ...action, runbook: { script, ...(interpreter === undefined ? {} : { interpreter }), ...(notes === undefined ? {} : { notes }), sha256: scriptSha256(script!) } };
}

/**
 * A stored runbook's version as a rule holds it; `pinned` is the version the rule asked for, if
 * any. Its description is the notes an email runbook mails.
 */
function followed(pinned: number | undefined, version: RunbookVersionRow): RunbookRef {
  return {
    runbookId: version.runbook_id,
    ...(pinned === undefined ? {} : { version: pinned }),
    name: version.name,
    resolvedVersion: version.version,
    interpreter: version.interpreter as NonNullable<RunbookRef['interpreter']>,
    script: version.script,
    ...(version.description === '' ? {} : { notes: version.description }),
    sha256: version.sha256,
  };
}

/** Only the tenant's own repositories can run (issue 20.3): another tenant's id is not there. */
async function assertRepository(tx: Tx, tenantId: string, repositoryId: string): Promise<void> {
  const found = await tx.selectFrom('repositories').select('id').where('id', '=', repositoryId).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (found) return;
  const path = '/body/action/runbook/repositoryId';
  const message = `no repository ${repositoryId} in this tenant; connect one with POST /api/v1/repositories, or pick one from GET /api/v1/repositories`;
  throw new PitcrewError('PITCREW_ERR_VALIDATION', `${path}: ${message}`, { fieldErrors: [{ path, message }] });
}

async function readRunbook(tx: Tx, tenantId: string, runbookId: string, version: number | undefined): Promise<RunbookAt> {
  // A write to the runbook's row: a save of it at the same moment waits for this rule, or this for it.
  await tx.updateTable('runbooks').set((eb) => ({ latest_version: eb.ref('latest_version') })).where('id', '=', runbookId).where('tenant_id', '=', tenantId).execute();
  try {
    return version === undefined ? await getLatest(tx, tenantId, runbookId) : await getVersion(tx, tenantId, runbookId, version, '/body/action/runbook/version');
  } catch (error) {
    if (!(error instanceof PitcrewError) || error.code !== 'PITCREW_ERR_NOT_FOUND') throw error;
    const unknownRunbook = !error.fieldErrors?.length;
    const path = unknownRunbook ? '/body/action/runbook/runbookId' : '/body/action/runbook/version';
    const message = unknownRunbook ? `no runbook ${runbookId} in this tenant; save one with POST /api/v1/runbooks, or pick one from GET /api/v1/runbooks` : error.fieldErrors![0]!.message;
    throw new PitcrewError('PITCREW_ERR_VALIDATION', `${path}: ${message}`, { fieldErrors: [{ path, message }] });
  }
}

/**
 * A runbook was saved as `version`: the tenant's rules that follow it now run it, and those pinned
 * to another version show its new name. In the save's transaction, so no event runs a mix.
 */
export async function followRunbook(tx: Tx, tenantId: string, version: RunbookVersionRow, now: number): Promise<void> {
  const rows = await tx.selectFrom('rules').select(['id', 'action']).where('tenant_id', '=', tenantId).where('runbook_id', '=', version.runbook_id).where('deleted_at', 'is', null).execute();
  for (const row of rows) {
    const action = JSON.parse(row.action) as Extract<Action, { type: 'script' | 'cli' | 'email_runbook' }>;
    const pinned = action.runbook.version;
    action.runbook = pinned === undefined ? followed(undefined, version) as typeof action.runbook : { ...action.runbook, name: version.name };
    await tx.updateTable('rules').set({ action: JSON.stringify(action), ...(pinned === undefined ? { updated_at: now } : {}) }).where('id', '=', row.id).execute();
  }
}

/** The tenant's rules that run the runbook (a deleted rule keeps nothing from being deleted). */
export async function rulesUsingRunbook(db: Tx, tenantId: string, runbookId: string): Promise<Array<{ id: string; name: string }>> {
  return db.selectFrom('rules').select(['id', 'name']).where('tenant_id', '=', tenantId).where('runbook_id', '=', runbookId).where('deleted_at', 'is', null).orderBy('name').execute();
}

/** The action as people see and send it: a stored runbook's script is in the runbook, not shown with the rule. */
export function shownAction(action: Action): Action {
  if ((action.type !== 'script' && action.type !== 'cli' && action.type !== 'email_runbook') || action.runbook.runbookId === undefined) return action;
  const { script: _script, notes: _notes, ...reference } = action.runbook as RunbookRef;
  if (action.type === 'email_runbook') {
    const { interpreter: _interpreter, ...mailed } = reference;
    return { ...action, runbook: mailed };
  }
  return { ...action, runbook: reference };
}

/** The tenant's rules that read their runbook from the repository. */
export async function rulesUsingRepository(db: Tx, tenantId: string, repositoryId: string): Promise<Array<{ id: string; name: string }>> {
  return db.selectFrom('rules').select(['id', 'name']).where('tenant_id', '=', tenantId).where('repository_id', '=', repositoryId).where('deleted_at', 'is', null).orderBy('name').execute();
}
