/**
 * Every column that holds values sealed by the secret box (identity/secret-box.ts), each value
 * carrying the fingerprint of the key that sealed it: what a backup reports the keys of, so the
 * operator knows which key opens a restored copy. A new sealed column belongs here.
 */
export const SEALED_COLUMNS: ReadonlyArray<{ table: string; column: string }> = [
  { table: 'users', column: 'totp_secret' },
  { table: 'integrations', column: 'secret' },
  { table: 'integration_imports', column: 'secret' },
  { table: 'notify_channels', column: 'secrets' },
  { table: 'credentials', column: 'secret' },
  { table: 'repositories', column: 'credential' },
  { table: 'sso_providers', column: 'client_secret' },
];
