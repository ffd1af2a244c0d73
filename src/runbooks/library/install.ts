import type { Kysely } from 'kysely';
import { PitcrewError } from '../../errors/catalogue.js';
import type { Database } from '../../store/schema.js';
import { createRunbook, type RunbookAt, type Save } from '../repository.js';
import { assertRunbook } from '../validate.js';
import type { LibraryEntry } from './library.js';

/**
 * Saves a library runbook in the tenant's store as a runbook of its own (version 1), through the
 * store's createRunbook: from then on it is the tenant's to edit and version. A taken name is a 409
 * that says what holds it and how to install anyway.
 */
export async function installRunbook(db: Kysely<Database>, tenantId: string, entry: LibraryEntry, name: string | undefined, save: Save): Promise<RunbookAt> {
  const input = { name: name ?? entry.name, description: entry.description, interpreter: entry.interpreter, script: entry.script, env: entry.env };
  // The library's own content is checked by library.test.ts; what the caller chose is the name.
  assertRunbook(input, () => undefined);
  try {
    return await createRunbook(db, tenantId, input, save);
  } catch (error) {
    if (!(error instanceof PitcrewError) || error.code !== 'PITCREW_ERR_CONFLICT') throw error;
    throw await nameTaken(db, tenantId, entry, input.name.trim(), error);
  }
}

async function nameTaken(db: Kysely<Database>, tenantId: string, entry: LibraryEntry, name: string, error: PitcrewError): Promise<PitcrewError> {
  const holder = await db.selectFrom('runbooks as r')
    .innerJoin('runbook_versions as v', (join) => join.onRef('v.runbook_id', '=', 'r.id').onRef('v.version', '=', 'r.latest_version'))
    .select(['r.id', 'r.latest_version', 'v.sha256'])
    .where('r.tenant_id', '=', tenantId).where('r.name', '=', name)
    .executeTakeFirst();
  if (!holder) return error;
  const what = holder.sha256 === entry.sha256
    ? `"${entry.slug}" is already installed as runbook ${holder.id} ("${name}", version ${holder.latest_version}, the same script)`
    : `runbook ${holder.id} is already named "${name}" in this tenant`;
  return new PitcrewError('PITCREW_ERR_CONFLICT', `${what}; to install another copy, give it another name: {"name": "${name} (2)"}`, {
    fieldErrors: [{ path: '/body/name', message: `already the name of runbook ${holder.id}; choose another` }],
  });
}
