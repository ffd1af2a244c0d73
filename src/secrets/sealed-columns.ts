import { graphSecretOwner } from '../integrations/graph-secret.js';
import { importSecretOwner } from '../integrations/import-settings.js';

/** One column of sealed values: its table, the row's key, and the owner each value is bound to (SecretBox's additional data). */
export interface SealedColumn {
  table: string;
  column: string;
  /** The row's key column. */
  key: string;
  /** The owner a row's value was sealed for, from its key. */
  owner(key: string): string;
}

const byId = (key: string) => key;

/**
 * Every column that holds values sealed by the secret box (identity/secret-box.ts), each value
 * carrying the fingerprint of the key that sealed it: what a backup reports the keys of, and what
 * a key rotation seals again (secrets/rotate.ts). A new sealed column belongs here; the rotation
 * test fails for a secret it leaves behind.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'users', column: 'totp_secret', key: 'id', owner: byId },
  { table: 'integrations', column: 'secret', key: 'id', owner: byId },
  { table: 'integrations', column: 'graph_secret', key: 'id', owner: graphSecretOwner },
  { table: 'integration_imports', column: 'secret', key: 'integration_id', owner: importSecretOwner },
  { table: 'notify_channels', column: 'secrets', key: 'id', owner: byId },
  { table: 'credentials', column: 'secret', key: 'id', owner: byId },
  { table: 'repositories', column: 'credential', key: 'id', owner: byId },
  { table: 'sso_providers', column: 'client_secret', key: 'id', owner: byId },
];
