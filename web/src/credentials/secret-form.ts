import type { Provider, Secret } from '../api/credential-types';
import { PROVIDER_INFO } from './providers';

/** A secret as typed: every field of the provider's secret, blank to start with. */
export type SecretValues = Record<string, string>;
export type CredentialErrors = Partial<Record<string, string>>;

export function emptySecret(provider: Provider): SecretValues {
  return Object.fromEntries(PROVIDER_INFO[provider].fields.map((field) => [field.name, '']));
}

/**
 * The secret to send: each field trimmed (a pasted key often ends with a newline), the optional
 * ones left out when blank.
 */
export function toSecret(provider: Provider, values: SecretValues): Secret {
  const secret: Secret = {};
  for (const field of PROVIDER_INFO[provider].fields) {
    const value = (values[field.name] ?? '').trim();
    if (value || field.required) secret[field.name] = value;
  }
  return secret;
}

/** What the person must still fill in; the service checks the shapes. */
export function missingSecretFields(provider: Provider, values: SecretValues): CredentialErrors {
  const errors: CredentialErrors = {};
  for (const field of PROVIDER_INFO[provider].fields) {
    if (field.required && !(values[field.name] ?? '').trim()) errors[field.name] = `enter the ${field.label.toLowerCase()}`;
  }
  return errors;
}

/**
 * The form field a service error's JSON pointer names: `name`, `provider`, or a field of the
 * secret (`/body/secret/secretAccessKey` → `secretAccessKey`); undefined for the rest (a banner).
 */
export function credentialFieldOf(path: string): string | undefined {
  if (path.startsWith('/body/name')) return 'name';
  if (path.startsWith('/body/provider')) return 'provider';
  const secretField = /^\/body\/secret\/([^/]+)/.exec(path);
  return secretField?.[1];
}
