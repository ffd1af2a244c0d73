/*
 * The shapes of the credentials API (docs/credentials.md) that the UI reads and sends. A secret is
 * write-only: it goes in with a create or a rotation and never comes back; the view carries only
 * its `summary` (identifiers, the access key id masked).
 */

export const PROVIDERS = ['aws', 'azure', 'gcp', 'openstack'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface CredentialTestResult {
  at: string;
  ok: boolean;
  message: string;
}

export interface Credential {
  id: string;
  name: string;
  provider: Provider;
  /** What identifies the secret without revealing it: `accessKeyId: "AKIA…MPLE"`, a service account's email. */
  summary: Record<string, string>;
  lastTest: CredentialTestResult | null;
  createdAt: string;
  updatedAt: string;
}

/** A secret as the provider's SDK takes it: the fields of SECRET_SCHEMAS[provider] (src/credentials/schema.ts). */
export type Secret = Record<string, string>;

export interface CredentialInput {
  name: string;
  provider: Provider;
  secret: Secret;
}

/** PATCH: a new name, or a new secret whole (the provider stays). */
export interface CredentialPatch {
  name?: string;
  secret?: Secret;
}

/** POST /credentials/{id}/test when the provider accepted the secret; a refusal is a problem (502, 503, 501). */
export interface CredentialTest {
  ok: true;
  call: string;
  message: string;
  durationMs: number;
}
