import type { Kysely } from 'kysely';
import { getCredential, openCredential } from '../credentials/repository.js';
import { PitcrewError } from '../errors/catalogue.js';
import type { SecretBox } from '../identity/secret-box.js';
import type { ImportNeeds } from '../integrations/import-needs.js';
import { openImportSecret } from '../integrations/import-settings.js';
import { openSecret } from '../integrations/repository.js';
import type { Database, IntegrationImportRow, IntegrationRow } from '../store/schema.js';

/**
 * The read-only credential pitcrew reads an integration's tool with, opened (docs/incidents-import.md):
 * the import's own secret, else its stored credential, else the integration's secret where the
 * tool's import takes that one (Monasca's Keystone token); undefined when there is none. Imports
 * and graph snapshots read with the same one.
 */
export async function openReadSecret(db: Kysely<Database>, box: SecretBox, integration: IntegrationRow, settings: IntegrationImportRow | undefined, needs: ImportNeeds | undefined): Promise<unknown> {
  const imported = settings ? await importedSecret(db, box, integration, settings) : undefined;
  if (imported !== undefined) return imported;
  return needs?.integrationSecret ? openSecret(box, integration) : undefined;
}

async function importedSecret(db: Kysely<Database>, box: SecretBox, integration: IntegrationRow, settings: IntegrationImportRow): Promise<unknown> {
  const own = openImportSecret(box, settings);
  if (own !== undefined) return own;
  if (settings.credential_id === null) return undefined;
  const credential = await getCredential(db, integration.tenant_id, settings.credential_id).catch(() => {
    throw new PitcrewError('PITCREW_ERR_NOT_FOUND', `the import's credential ${settings.credential_id} was deleted: choose another (PATCH …/integrations/${integration.id} {import:{credentialId}})`);
  });
  return openCredential(box, credential);
}
