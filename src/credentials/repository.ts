import type { Kysely } from 'kysely';
import { notFound, PitcrewError, type FieldError } from '../errors/catalogue.js';
import { inUseBy } from '../errors/in-use.js';
import { compileBodyCheck } from '../http/validation.js';
import type { SecretBox } from '../identity/secret-box.js';
import { newId } from '../store/ids.js';
import type { PageRequest } from '../store/pagination.js';
import type { CredentialRow, Database } from '../store/schema.js';
import { withUniqueName } from '../store/unique.js';
import { PROVIDERS, SECRET_SCHEMAS, type CredentialInput, type CredentialPatch, type Provider, type Secret } from './schema.js';
import { secretProblems, summaryOf } from './secret.js';

type Db = Kysely<Database>;

const secretChecks = Object.fromEntries(PROVIDERS.map((provider) => [provider, compileBodyCheck(SECRET_SCHEMAS[provider], 'body/secret')])) as Record<Provider, (value: unknown) => FieldError[]>;

export async function createCredential(db: Db, box: SecretBox, tenantId: string, input: CredentialInput, now = Date.now()): Promise<CredentialRow> {
  assertSecret(input.provider, input.secret);
  const id = newId(now);
  const row: CredentialRow = {
    id,
    tenant_id: tenantId,
    name: input.name.trim(),
    provider: input.provider,
    secret: box.seal(JSON.stringify(input.secret), id),
    summary: JSON.stringify(summaryOf(input.provider, input.secret)),
    created_at: now,
    updated_at: now,
    last_test_at: null,
    last_test_ok: null,
    last_test_message: null,
  };
  await withUniqueName('credential', row.name, () => db.insertInto('credentials').values(row).execute());
  return row;
}

export async function getCredential(db: Db, tenantId: string, id: string): Promise<CredentialRow> {
  const row = await db.selectFrom('credentials').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) throw notFound('credential', id);
  return row;
}

export async function listCredentials(db: Db, tenantId: string, page: PageRequest): Promise<CredentialRow[]> {
  let query = db.selectFrom('credentials').selectAll().where('tenant_id', '=', tenantId);
  if (page.after) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/** A new name, or a new secret whole (in the provider's shape); its last test no longer holds. */
export async function updateCredential(db: Db, box: SecretBox, current: CredentialRow, patch: CredentialPatch, now = Date.now()): Promise<CredentialRow> {
  const changes: Partial<CredentialRow> = { updated_at: now };
  if (patch.name !== undefined) changes.name = patch.name.trim();
  if (patch.secret !== undefined) {
    const provider = current.provider as Provider;
    assertSecret(provider, patch.secret);
    Object.assign(changes, { secret: box.seal(JSON.stringify(patch.secret), current.id), summary: JSON.stringify(summaryOf(provider, patch.secret as Secret)), last_test_at: null, last_test_ok: null, last_test_message: null });
  }
  await withUniqueName('credential', changes.name ?? current.name, () => db.updateTable('credentials').set(changes).where('id', '=', current.id).execute());
  return { ...current, ...changes };
}

/** Refused while a rule acts with it: the rule would fail at its next alarm. */
export async function deleteCredential(db: Db, tenantId: string, id: string): Promise<void> {
  const row = await getCredential(db, tenantId, id);
  const users = await rulesUsing(db, tenantId, id);
  if (users.length > 0) {
    const { rules, them } = inUseBy(users);
    throw new PitcrewError('PITCREW_ERR_CONFLICT', `credential "${row.name}" is used by ${rules}; change or delete ${them} first`);
  }
  await db.deleteFrom('credentials').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
}

/** The tenant's rules whose action names the credential. */
export async function rulesUsing(db: Db, tenantId: string, credentialId: string): Promise<Array<{ id: string; name: string }>> {
  const rules = await db.selectFrom('rules').select(['id', 'name', 'action']).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).where('action', 'like', `%${credentialId}%`).execute();
  return rules.filter((rule) => {
    const action = JSON.parse(rule.action) as { credentialId?: string; credentialIds?: string[] };
    return action.credentialId === credentialId || (action.credentialIds ?? []).includes(credentialId);
  });
}

/** The credential's secret, opened: for the provider's SDK only. */
export function openCredential<P extends Provider>(box: SecretBox, row: CredentialRow): Secret<P> {
  return JSON.parse(box.open(row.secret, row.id)) as Secret<P>;
}

export async function recordTest(db: Db, id: string, result: { ok: boolean; message: string }, now = Date.now()): Promise<void> {
  await db.updateTable('credentials').set({ last_test_at: now, last_test_ok: result.ok ? 1 : 0, last_test_message: result.message.slice(0, 2000) }).where('id', '=', id).execute();
}

function assertSecret(provider: Provider, secret: unknown): void {
  const errors = [...secretChecks[provider](secret)];
  if (errors.length === 0) errors.push(...secretProblems(provider, secret as Secret));
  if (errors.length === 0) return;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  throw new PitcrewError('PITCREW_ERR_VALIDATION', `${errors[0]!.path}: ${errors[0]!.message}${more}`, { fieldErrors: errors });
}
