/** What a secret becomes in an audit entry. */
export const MASKED = '[masked]';

/**
 * Field names whose values are secrets wherever they appear: a password, an API key, a token, a
 * client secret, a private key, a one-time sign-in link, a snapshot's signed link (compared without `_` or `-`, so `api_key`
 * and `apiKey` alike).
 * `key` alone, but not `keyId` or `hostKey`: those name public things.
 */
const SECRET_NAME = /(password|passphrase|secret|token|apikey|privatekey|deploykey|credential|inviteurl|signinurl|reseturl|signedurl)$|^key$/i;
/** Shorter values are masked only where they stand whole: "eu" inside a text hides nothing. */
const MIN_PIECE = 6;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name.replace(/[-_]/g, ''));
}

/**
 * The secrets a request carried: every string under a secret-named field of its body, however
 * deep (a credential's `secret: {accessKeyId, secretAccessKey}` gives both), and the caller's own
 * bearer token. A view that echoes one of them back under an innocent name is masked all the same.
 */
export function secretsOf(body: unknown, extra: readonly string[] = []): string[] {
  const found = new Set(extra.filter((s) => s.length > 0));
  const visit = (value: unknown, secret: boolean): void => {
    if (typeof value === 'string') {
      if (secret && value.length > 0) found.add(value);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, secret);
    } else if (value !== null && typeof value === 'object') {
      for (const [name, item] of Object.entries(value)) visit(item, secret || isSecretName(name));
    }
  };
  visit(body, false);
  // Longest first: a secret that contains another is masked whole.
  return [...found].sort((a, b) => b.length - a.length);
}

/** A copy of `value` with secret-named fields and the request's secrets masked. */
export function masked(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return maskText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => masked(item, secrets));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, isSecretName(name) && item !== null && typeof item !== 'boolean' ? MASKED : masked(item, secrets)]));
}

function maskText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out === secret) return MASKED;
    if (secret.length >= MIN_PIECE && out.includes(secret)) out = out.replaceAll(secret, MASKED);
  }
  return out;
}
